// reindexRun: `mkt admin reindex [OWNER/REPO]` — rebuilds the notes search index from the notes
// refs of one repository, or of every hosted repository.
import { printJson, printTable } from '../../../src/cli/output.js';
import { withAccounts, type AdminFlags } from './shared.js';

export interface ReindexOptions extends AdminFlags {
  repo?: string;
}

export async function reindexRun(opts: ReindexOptions): Promise<void> {
  const rows = await withAccounts(opts, (admin) => admin.reindex(opts.repo));
  const { io } = opts.factory;
  if (opts.json) printJson(io, rows);
  else printTable(io, ['REPOSITORY', 'NAMESPACES', 'NOTES'], rows.map((r) => [r.repo, r.namespaces, r.notes]));
}
