// `mkt notes ls|search|missing|export|show|log|set|rm`: git notes on a repository hosted by the
// marketplace. Flags and help only; each verb (and simple-git, undici) is loaded when it runs.
import { Option, type Command } from 'commander';
import type { Factory } from '../../src/cli/factory.js';
import { choiceOption, collect, jsonOption, runVerb, serverOption, type ParsedVerb } from '../../src/cli/flags.js';
import { countByArg, fieldFilter, rangeArg, timeArg } from './search-flags.js';

const REPO = 'hosted repository OWNER/REPO (else taken from the origin remote URL of the clone)';
const NAMESPACE = 'notes namespace, e.g. `reviews/security` (default `commits`)';
const REV = 'revision in the local clone (HEAD, a tag, a short sha) or a full 40/64-hex object id';

function common(cmd: Command, namespace = true, json = true): Command {
  cmd.option('--repo <owner/repo>', REPO);
  if (namespace) cmd.option('--namespace <name>', NAMESPACE);
  cmd.addOption(serverOption('marketplace'));
  return json ? cmd.addOption(jsonOption()) : cmd;
}

export function register(program: Command, f: Factory, runF?: ParsedVerb): void {
  const notes = program
    .command('notes')
    .description('read, search, write and remove git notes on a repository hosted by the marketplace')
    .addHelpText(
      'after',
      `
Run inside a clone: OWNER/REPO comes from the origin remote, revisions resolve locally.
Writes need a push-scope token (\`mkt auth login marketplace\` or MKT_MARKETPLACE_TOKEN).

Examples:
  $ mkt notes set HEAD -m "Reviewed-by: Ana"
  $ mkt notes search '"race condition" -fixed' --repo ana/widgets`,
    );

  common(notes.command('ls').description('list the notes namespaces with their note counts'), false)
    .addHelpText(
      'after',
      `
Examples:
  $ mkt notes ls
  $ mkt notes ls --repo ana/widgets --json | jq -r '.data[].git_ref'`,
    )
    .action(async (opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, ...opts }, async () => (await import('./ls.js')).lsRun);
    });

  const search = common(
    notes
      .command('search')
      .description('search the notes: words, an exact text or a regular expression, filtered by fields, author, time and commits')
      .argument('[words...]', 'words (all must match), "quoted phrases", `or`, -excluded; none: every note the filters keep'),
  )
    .addOption(new Option('--literal <text>', 'an exact, case-sensitive text instead of words (message ids, URLs, SHAs)').conflicts('regex'))
    .addOption(new Option('--regex <pattern>', 'a regular expression matched per line instead of words (no backreferences or lookaround; `(?i)` ignores case)'))
    .option('--field <KEY~TEXT|KEY=VALUE>', 'a field of the note (trailer, key=value line, JSON line) contains TEXT (~) or equals VALUE (=); repeatable, all must hold', fieldFilter)
    .option('--author <name-or-email>', "the note's author (of the notes commit that last changed it), exact, ignoring case")
    .option('--since <time>', 'notes written at or after TIME (RFC 3339 or YYYY-MM-DD)', timeArg)
    .option('--until <time>', 'notes written before TIME (RFC 3339 or YYYY-MM-DD)', timeArg)
    .option('--range <A..B>', 'only notes on the commits of this range of the local clone (git rev-list A..B)', rangeArg)
    .addOption(new Option('--owner <owner>', "search every repository of OWNER you can see (no clone or --repo needed)").conflicts('repo'))
    .option('--all', 'every hit: follow the pages to the end, writing each as it arrives')
    .addOption(choiceOption('--format <format>', 'hits for scripts: one JSON object a line, a JSON array, or tab-separated', ['ndjson', 'json', 'tsv']).conflicts('json'))
    .addOption(new Option('--count-by <group>', 'count the matching notes by namespace, note_author or field:KEY instead of listing them').argParser(countByArg))
    .addOption(new Option('--cursor <cursor>', 'start at the next_cursor of an earlier `--json` answer of the same search').conflicts(['range', 'countBy']))
    .option('--commits-only', 'drop notes on blobs and trees')
    .option('--limit <n>', 'at most N hits (default 50); with --all, hits per page (default 200)')
    .addHelpText(
      'after',
      `
Output: a table on a terminal; in pipes one hit a line, namespace<TAB>target<TAB>snippet (a repo
column first with --owner). --format ndjson|json|tsv writes the fields scripts use (repo,
namespace, object, object_type, note_author, note_email, note_at, commit_subject,
commit_author, snippet, lines, fields); --json the API's answer. Reference: docs/notes-search.md.

Examples:
  $ mkt notes search flaky test or timeout --namespace ci
  $ mkt notes search '"needs backport"' | cut -f2 | xargs -n1 git show --stat
  $ mkt notes search --field 'Reviewed-by~alice' --range v1.0..HEAD --all --format ndjson
  $ mkt notes search --namespace review --count-by field:Code-Review
  $ mkt notes search --literal '<20261129.1234@example.org>' --owner ana --all --format tsv`,
    );
  search.action(async (query: string[], opts: Record<string, unknown>, cmd: Command) => {
    // commander's conflicts() knows options only; words are an argument.
    if (query.length > 0 && (opts.literal !== undefined || opts.regex !== undefined)) {
      cmd.error(`error: give the query as words or as ${opts.literal !== undefined ? '--literal' : '--regex'}, not both`, { exitCode: 2, code: 'commander.conflictingOption' });
    }
    await runVerb(runF, { factory: f, query, ...opts }, async () => (await import('./search.js')).searchRun);
  });

  common(notes.command('missing').description('list the commits of a range that have no note in the namespace, oldest first').argument('<range>', 'a revision range of the local clone, A..B (git rev-list A..B)', rangeArg))
    .addHelpText(
      'after',
      `
Prints one full commit id a line (--json: {"data":[{"object":...}],"namespace":...}).

Examples:
  $ mkt notes missing origin/main~50..origin/main --namespace ci
  $ mkt notes missing v1.0..HEAD --namespace reviews | xargs -n1 ./review.sh`,
    )
    .action(async (range: string, opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, range, ...opts }, async () => (await import('./missing.js')).missingRun);
    });

  common(notes.command('export').description('write every note (of a namespace) with its fields and text, as JSON lines or CSV'), true, false)
    .addOption(choiceOption('--format <format>', 'jsonl (one JSON object a line; the default) or csv (RFC 4180, with a header row)', ['jsonl', 'csv']))
    .addHelpText(
      'after',
      `
Columns: repo, namespace, object, object_type, note_author, note_email, note_at,
commit_subject, commit_author, fields (CSV: as JSON text), content.

Examples:
  $ mkt notes export --namespace ci --format jsonl > ci-notes.jsonl
  $ mkt notes export --namespace perf --format csv --repo ana/widgets > perf.csv`,
    )
    .action(async (opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, ...opts }, async () => (await import('./export.js')).exportRun);
    });

  common(notes.command('show').description('print the note on a revision').argument('[rev]', REV, 'HEAD'))
    .option('--attribution', 'also print the notes commit, author and time that set the note')
    .addHelpText(
      'after',
      `
Examples:
  $ mkt notes show v1.2.0 --attribution
  $ mkt notes show 3f2a9c1 --namespace reviews/security --json`,
    )
    .action(async (rev: string, opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, rev, ...opts }, async () => (await import('./show.js')).showRun);
    });

  common(notes.command('log').description("the versions of the note on a revision, newest first (removals too), from the notes ref's history").argument('[rev]', REV, 'HEAD'))
    .option('--limit <n>', 'at most N versions (default 20, at most 100)')
    .addHelpText(
      'after',
      `
Examples:
  $ mkt notes log HEAD
  $ mkt notes log v1.2.0 --namespace reviews --limit 5 --json | jq -r '.data[].commit'`,
    )
    .action(async (rev: string, opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, rev, ...opts }, async () => (await import('./log.js')).logRun);
    });

  common(notes.command('set').description('add or replace the note on a commit').argument('[rev]', REV, 'HEAD'))
    .option('-m, --message <text>', 'the note text (repeatable: paragraphs)', collect)
    .option('-F, --file <file>', 'read the note from FILE (`-` = stdin); with neither, stdin is read')
    .option('--commit-message <text>', 'extra text for the notes commit message')
    .addHelpText(
      'after',
      `
Examples:
  $ mkt notes set HEAD -m "Tested-on: arm64" -m "All green."
  $ go test ./... 2>&1 | tail -5 | mkt notes set --namespace ci --repo ana/widgets 3f2a9c1`,
    )
    .action(async (rev: string, opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, rev, ...opts }, async () => (await import('./set.js')).setRun);
    });

  common(notes.command('rm').description('remove the note on a commit (no error when there is none)').argument('[rev]', REV, 'HEAD'))
    .addHelpText(
      'after',
      `
Examples:
  $ mkt notes rm HEAD~3
  $ mkt notes rm v1.2.0 --namespace reviews/security --repo ana/widgets`,
    )
    .action(async (rev: string, opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, rev, ...opts }, async () => (await import('./rm.js')).rmRun);
    });
}
