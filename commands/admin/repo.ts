// `mkt admin repo notes-merge`: a hosted repository's notes merge strategy per namespace, added to
// the `repo` group that the accounts module declares (create, grant, list). Flags and help only.
import { Option, type Command } from 'commander';
import type { Factory } from '../../src/cli/factory.js';
import { runVerb, type ParsedVerb } from '../../src/cli/flags.js';
import { adminTarget } from './flags.js';

const STRATEGIES = ['manual', 'ours', 'theirs', 'union', 'cat_sort_uniq'];

export function registerRepoAdmin(admin: Command, f: Factory, runF?: ParsedVerb): void {
  // The accounts module declares `repo` first (GROUPS order); this adds to it, or declares it.
  const repo = admin.commands.find((c) => c.name() === 'repo') ?? admin.command('repo').description('hosted git repositories (bare, under <data-dir>/repos/)');
  repo
    .command('notes-merge')
    .description(
      "set how the server joins a notes namespace's diverged histories, as `git notes merge -s STRATEGY`: with a strategy other than manual, a push that does not fast-forward the notes ref (forced) and a note write racing one are merged into the ref (its notes are ours, the arriving ones theirs); manual (the default) merges nothing",
    )
    .argument('<owner/repo>', 'repository')
    .option('--namespace <name>', 'notes namespace (refs/notes/NAME)', 'commits')
    .addOption(new Option('--strategy <strategy>', 'required: manual, ours, theirs, union or cat_sort_uniq (git notes merge -s)').choices(STRATEGIES).makeOptionMandatory())
    .option('--json', 'print machine-readable JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  $ mkt admin repo notes-merge ana/app --strategy cat_sort_uniq\n  $ mkt admin repo notes-merge ana/app --namespace reviews --strategy union\n  $ mkt admin repo notes-merge ana/app --namespace reviews --strategy manual',
    )
    .action(async (full: string, opts: Record<string, unknown>, cmd: Command) => {
      await runVerb(runF, { factory: f, ...adminTarget(cmd), repo: full, ...(opts as { namespace: string; strategy: string; json?: boolean }) }, async () => (await import('./repo/notes-merge.js')).notesMergeRun);
    });
}
