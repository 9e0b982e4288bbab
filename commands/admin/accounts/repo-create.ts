// repoCreateRun: `mkt admin repo create OWNER/REPO [--private] [--object-format sha1|sha256]
// [--default-branch NAME]` — a bare git repository under <data-dir>/repos/, served over smart
// HTTP and the notes API, whose HEAD names the default branch.
import { UsageError } from '../../../src/cli/errors.js';
import { printJson } from '../../../src/cli/output.js';
import { branchNameProblem, DEFAULT_BRANCH } from '../../../src/git/hosting.js';
import { withAccounts, type AdminFlags } from './shared.js';

export interface RepoCreateOptions extends AdminFlags {
  repo: string;
  private?: boolean;
  objectFormat?: string;
  defaultBranch?: string;
}

export async function repoCreateRun(opts: RepoCreateOptions): Promise<void> {
  const format = opts.objectFormat ?? 'sha1';
  if (format !== 'sha1' && format !== 'sha256') throw new UsageError(`--object-format must be sha1 or sha256, not ${JSON.stringify(format)}`);
  const branch = opts.defaultBranch ?? DEFAULT_BRANCH;
  const problem = await branchNameProblem(branch);
  if (problem) throw new UsageError(`--default-branch: ${problem}`);
  const { repo, dir } = await withAccounts(opts, (admin) => admin.createRepo(opts.repo, { private: opts.private === true, objectFormat: format, defaultBranch: branch }));
  const { io } = opts.factory;
  if (opts.json) printJson(io, { ...repo, path: dir, default_branch: branch });
  else io.stdout.write(`created ${repo.private ? 'private' : 'public'} ${repo.object_format} repository ${repo.owner}/${repo.name} at ${dir} (default branch ${branch})\n`);
}
