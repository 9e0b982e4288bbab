// notesMergeRun: `mkt admin repo notes-merge OWNER/REPO --namespace NS --strategy S` — stores the
// namespace's notes merge strategy (manual removes it), which the server reads at every push.
import { NegativeError, UsageError } from '../../../src/cli/errors.js';
import { printJson } from '../../../src/cli/output.js';
import { isNotesMergeStrategy } from '../../../src/git/notes-merge.js';
import { checkNamespace } from '../../../src/notes/namespace.js';
import { openMarketplace, type AdminFlags } from '../flags.js';

export interface NotesMergeOptions extends AdminFlags {
  repo: string;
  namespace: string;
  strategy: string;
}

export async function notesMergeRun(opts: NotesMergeOptions): Promise<void> {
  if (!isNotesMergeStrategy(opts.strategy)) throw new UsageError(`unknown strategy "${opts.strategy}": manual, ours, theirs, union or cat_sort_uniq`);
  const strategy = opts.strategy;
  const ns = checkNamespace(opts.namespace);
  // Reserved namespaces can be pushed with git, so they may have a strategy too.
  if (!ns.ok && !ns.reserved) throw new UsageError(ns.reason);
  const slash = opts.repo.indexOf('/');
  if (slash <= 0 || slash !== opts.repo.lastIndexOf('/') || slash === opts.repo.length - 1) throw new UsageError(`expected OWNER/REPO, got "${opts.repo}"`);
  const owner = opts.repo.slice(0, slash);
  const name = opts.repo.slice(slash + 1).replace(/\.git$/i, '');
  const stores = await openMarketplace(opts);
  try {
    const repo = await stores.repos.findRepo(owner, name);
    if (!repo) throw new NegativeError(`no repository ${owner}/${name}`);
    await stores.repos.setNotesMergeStrategy(repo.id, opts.namespace, strategy);
    const out = { repository: `${repo.owner}/${repo.name}`, namespace: opts.namespace, git_ref: `refs/notes/${opts.namespace}`, merge_strategy: strategy };
    if (opts.json) printJson(opts.factory.io, out);
    else opts.factory.io.stdout.write(`${out.repository} ${out.git_ref}: ${strategy === 'manual' ? 'no merges on the server (manual)' : `pushes and racing writes merged with ${strategy}`}\n`);
  } finally {
    await stores.close();
  }
}
