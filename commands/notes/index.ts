// `mkt notes ls|search|show|log|set|rm`: git notes on a repository hosted by the marketplace. Flags
// and help only; each verb (and simple-git, undici) is loaded when it runs.
import type { Command } from 'commander';
import type { Factory } from '../../src/cli/factory.js';
import { collect, jsonOption, runVerb, serverOption, type ParsedVerb } from '../../src/cli/flags.js';

const REPO = 'hosted repository OWNER/REPO (else taken from the origin remote URL of the clone)';
const NAMESPACE = 'notes namespace, e.g. `reviews/security` (default `commits`)';
const REV = 'revision in the local clone (HEAD, a tag, a short sha) or a full 40/64-hex object id';

function common(cmd: Command, namespace = true): Command {
  cmd.option('--repo <owner/repo>', REPO);
  if (namespace) cmd.option('--namespace <name>', NAMESPACE);
  return cmd.addOption(serverOption('marketplace')).addOption(jsonOption());
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

  common(notes.command('search').description('full-text search over the notes (tab-separated hits in pipes)').argument('<query...>', 'words (all must match), "quoted phrases", `or`, -excluded'))
    .option('--commits-only', 'drop notes on blobs and trees')
    .option('--limit <n>', 'at most N hits (default 50, at most 200)')
    .addHelpText(
      'after',
      `
Examples:
  $ mkt notes search flaky test or timeout --namespace ci
  $ mkt notes search '"needs backport"' | cut -f2 | xargs -n1 git show --stat`,
    )
    .action(async (query: string[], opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, query, ...opts }, async () => (await import('./search.js')).searchRun);
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
