// appListRun: `mkt admin app list` — sync apps and their pricing constants.
import { printJson, printTable } from '../../../src/cli/output.js';
import { withSyncAdmin, type AppAdminFlags } from './shared.js';

export async function appListRun(opts: AppAdminFlags): Promise<void> {
  const apps = await withSyncAdmin(opts, (admin) => admin.listApps());
  if (opts.json) return printJson(opts.factory.io, apps);
  printTable(
    opts.factory.io,
    ['id', 'name', 'min_charge_cents', 'per_gb_tenths_of_cent_per_month', 'annual_multiplier', 'min_cap_bytes', 'max_cap_bytes', 'free_bytes', 'created_at'],
    apps.map((a) => [a.id, a.name, a.min_charge_cents, a.per_gb_tenths_of_cent_per_month, a.annual_multiplier, a.min_cap_bytes, a.max_cap_bytes, a.free_bytes, a.created_at]),
  );
}
