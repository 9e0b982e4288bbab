// appCreateRun: `mkt admin app create NAME [pricing flags]` — a sync app; prints its public API
// key once (only its hash is stored): alone on stdout in a pipe, in a table on a terminal.
import { NegativeError, UsageError } from '../../../src/cli/errors.js';
import { printFields, printJson } from '../../../src/cli/output.js';
import { formatBytes, parseSize } from '../../../src/sync/pricing.js';
import { pricingProblem } from '../../../daemon/services/marketplace/sync/admin.js';
import type { SyncAppPricing } from '../../../src/store/sync.js';
import { withSyncAdmin, type AppAdminFlags } from './shared.js';

export interface AppCreateOptions extends AppAdminFlags {
  name: string;
  minChargeCents: string;
  perGbTenthsOfCent: string;
  annualMultiplier: string;
  minCap: string;
  maxCap: string;
  free: string;
}

function whole(flag: string, raw: string): number {
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw new UsageError(`${flag} must be a whole number ≥ 0, not ${JSON.stringify(raw)}`);
  return Number(raw);
}
function size(flag: string, raw: string): number {
  const n = parseSize(raw);
  if (n === undefined) throw new UsageError(`${flag} must be a size such as 50GiB, 500MB or a byte count, not ${JSON.stringify(raw)}`);
  return n;
}

export async function appCreateRun(opts: AppCreateOptions): Promise<void> {
  const name = opts.name.trim();
  if (name === '' || name.length > 100) throw new UsageError('the app name must be 1 to 100 characters');
  const pricing: SyncAppPricing = {
    min_charge_cents: whole('--min-charge-cents', opts.minChargeCents),
    per_gb_tenths_of_cent_per_month: whole('--per-gb-tenths-of-cent', opts.perGbTenthsOfCent),
    annual_multiplier: whole('--annual-multiplier', opts.annualMultiplier),
    min_cap_bytes: size('--min-cap', opts.minCap),
    max_cap_bytes: size('--max-cap', opts.maxCap),
    free_bytes: size('--free', opts.free),
  };
  const problem = pricingProblem(pricing);
  if (problem) throw new UsageError(problem);
  const made = await withSyncAdmin(opts, (admin) => admin.createApp(name, pricing));
  if (!made) throw new NegativeError(`an app named ${JSON.stringify(name)} exists already`);
  const { app, apiKey } = made;
  const io = opts.factory.io;
  if (opts.json) return printJson(io, { ...app, api_key: apiKey });
  // In a pipe the key is all of stdout, so `APP_KEY=$(mkt admin app create Notes)` works (as
  // `token create` and `key issue` do); the rest goes to stderr.
  if (!io.stdout.isTTY) {
    io.stdout.write(`${apiKey}\n`);
    io.stderr.write(`created sync app ${app.name} (${app.id}); its API key is shown only this once (only its hash is kept); \`mkt admin app list\` shows its pricing\n`);
    return;
  }
  printFields(io, [
    ['id', app.id],
    ['name', app.name],
    ['api key', apiKey],
    ['min charge', `${app.min_charge_cents} cents`],
    ['rate', `${app.per_gb_tenths_of_cent_per_month} tenths of a cent per GiB-month`],
    ['annual multiplier', app.annual_multiplier],
    ['caps', `${formatBytes(app.min_cap_bytes)} – ${formatBytes(app.max_cap_bytes)}`],
    ['free', formatBytes(app.free_bytes)],
  ]);
  io.stderr.write('The API key is shown only this once (only its hash is kept).\n');
}
