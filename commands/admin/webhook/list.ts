// webhookListRun: `mkt admin webhook list` — the webhooks license events go to (never their secrets).
import { printJson, printTable } from '../../../src/cli/output.js';
import { withAuditAdmin, type AdminFlags } from './shared.js';

export async function webhookListRun(opts: AdminFlags): Promise<void> {
  const hooks = await withAuditAdmin(opts, (admin) => admin.webhooks());
  if (opts.json) {
    printJson(opts.factory.io, hooks);
    return;
  }
  printTable(
    opts.factory.io,
    ['id', 'url', 'events', 'created'],
    hooks.map((w) => [w.id, w.url, w.events.join(','), w.created_at]),
  );
}
