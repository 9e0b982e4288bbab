// repoGrantRun: `mkt admin repo grant OWNER/REPO USER --read|--push` — lets a user see (and with
// --push, push to and write notes in) a repository.
import { UsageError } from '../../../src/cli/errors.js';
import { withAccounts, type AdminFlags } from './shared.js';

export interface RepoGrantOptions extends AdminFlags {
  repo: string;
  user: string;
  read?: boolean;
  push?: boolean;
}

export async function repoGrantRun(opts: RepoGrantOptions): Promise<void> {
  if (opts.read === opts.push) throw new UsageError('give exactly one of --read or --push');
  const permission = opts.push ? 'push' : 'read';
  const repo = await withAccounts(opts, (admin) => admin.grant(opts.repo, opts.user, permission));
  opts.factory.io.stdout.write(`${opts.user} may now ${permission} ${repo.owner}/${repo.name}\n`);
}
