// What the license admin verbs share: the license administration on the marketplace stores the
// Factory opens (SQLite in the data dir, or PostgreSQL with --database-url), and parsing
// activation maxima and expiry dates.
import { openMarketplace, type AdminFlags } from '../flags.js';
import { UsageError } from '../../../src/cli/errors.js';
import { parseTimestamp } from '../../../src/util/time.js';
import type { LicenseAdmin } from '../../../daemon/services/marketplace/license/admin.js';

export type { AdminFlags } from '../flags.js';

/** Runs `fn` with the license administration of the marketplace, closing its stores afterwards. */
export async function withAdmin<T>(opts: AdminFlags, fn: (admin: LicenseAdmin, dir: string) => Promise<T>): Promise<T> {
  const io = opts.factory.io;
  const stores = await openMarketplace(opts);
  const dir = stores.place.dataDir;
  try {
    const { LicenseAdmin } = await import('../../../daemon/services/marketplace/license/admin.js');
    const admin = new LicenseAdmin({ store: stores.license, dataDir: dir, env: io.env, now: () => opts.factory.now().getTime() });
    return await fn(admin, dir);
  } finally {
    await stores.close();
  }
}

/** `--max-activations`: a positive integer, or `unlimited` (null). */
export function parseMax(raw: string | undefined): number | null | undefined {
  if (raw === undefined) return undefined;
  if (raw === 'unlimited') return null;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 2_147_483_647) throw new UsageError(`--max-activations must be a positive integer or \`unlimited\`, not ${JSON.stringify(raw)}`);
  return Number(raw);
}

/** `--expires`: YYYY-MM-DD (the start of that day, UTC) or an RFC 3339 time. */
export function parseExpiry(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(raw) ? Date.parse(`${raw}T00:00:00Z`) : parseTimestamp(raw);
  if (ms === undefined || !Number.isFinite(ms)) throw new UsageError(`--expires must be YYYY-MM-DD or an RFC 3339 time, not ${JSON.stringify(raw)}`);
  return new Date(ms).toISOString();
}
