// repoCreateRun: `mkt admin repo create OWNER/REPO [--private] [--object-format sha1|sha256]` —
// a bare git repository under <data-dir>/repos/, served over smart HTTP and the notes API.
import { UsageError } from '../../../src/cli/errors.js';
import { printJson } from '../../../src/cli/output.js';
import { withAccounts, type AdminFlags } from './shared.js';

export interface RepoCreateOptions extends AdminFlags {
  repo: string;
  private?: boolean;
  objectFormat?: string;
}

export async function repoCreateRun(opts: RepoCreateOptions): Promise<void> {
  const format = opts.objectFormat ?? 'sha1';
  if (format !== 'sha1' && format !== 'sha256') throw new UsageError(`--object-format must be sha1 or sha256, not ${JSON.stringify(format)}`);
  const { repo, dir } = await withAccounts(opts, (admin) => admin.createRepo(opts.repo, { private: opts.private === true, objectFormat: format }));
  const { io } = opts.factory;
  if (opts.json) printJson(io, { ...repo, path: dir });
  else io.stdout.write(`created ${repo.private ? 'private' : 'public'} ${repo.object_format} repository ${repo.owner}/${repo.name} at ${dir}\n`);
}
