// repoListRun: `mkt admin repo list` — every hosted repository, with its visibility, object
// format and place on disk.
import { printJson, printTable } from '../../../src/cli/output.js';
import { repoDir } from '../../../src/git/hosting.js';
import { withAccounts, type AdminFlags } from './shared.js';

export async function repoListRun(opts: AdminFlags): Promise<void> {
  const rows = await withAccounts(opts, async (admin, dir) => (await admin.listRepos()).map((r) => ({ ...r, path: repoDir(dir, r.owner, r.name) })));
  const { io } = opts.factory;
  if (opts.json) printJson(io, rows);
  else printTable(io, ['repository', 'visibility', 'format', 'created', 'path'], rows.map((r) => [`${r.owner}/${r.name}`, r.private ? 'private' : 'public', r.object_format, r.created_at, r.path]));
}
