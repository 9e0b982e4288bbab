// What the license admin verbs share: the license administration on the marketplace stores the
// Factory opens (SQLite in the data dir, or PostgreSQL with --database-url), the KEY argument
// (id, key, or `-` for stdin), and parsing activation maxima, expiry dates, durations,
// entitlement lists and deactivation budgets.
import { openMarketplace, type AdminFlags } from '../flags.js';
import { UsageError } from '../../../src/cli/errors.js';
import { readAll } from '../../../src/cli/io.js';
import { parseDuration } from '../../../src/config/yaml-reader.js';
import { ENTITLEMENT_RE } from '../../../src/schemas/license.js';
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
  } catch (err) {
    // Settings the flags' shapes allowed but that do not fit together (e.g. --lease without floating).
    if ((err as Error).name === 'LicenseSettingError') throw new UsageError((err as Error).message);
    throw err;
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

/** The KEY argument of `key revoke|suspend|reinstate|entitlements`: an id (lk_…), the key, or `-` (its first line on stdin). */
export async function keyArgument(opts: AdminFlags & { key: string }): Promise<string> {
  const given = opts.key === '-' ? ((await readAll(opts.factory.io.stdin)).split(/\r?\n/)[0] ?? '').trim() : opts.key.trim();
  if (given === '') throw new UsageError('no key given');
  return given;
}

/** A duration flag (`--lease 15m`, `--per 30d`; a bare number is seconds) in whole seconds, at least 1. */
export function parseSeconds(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const ms = parseDuration(raw);
  if (ms === undefined || ms % 1000 !== 0 || ms / 1000 > 2_147_483_647) throw new UsageError(`${flag} must be a duration in whole seconds such as 30s, 15m, 2h or 30d, not ${JSON.stringify(raw)}`);
  return ms / 1000;
}

/** `--entitlements a,b` (also `--add`, `--remove`): names of a-z, 0-9, `.`, `_`, `-`. */
export function parseEntitlementList(flag: string, raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const names = raw
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  for (const n of names) if (!ENTITLEMENT_RE.test(n)) throw new UsageError(`${flag}: entitlement names are 1-64 of a-z, 0-9, '.', '_', '-' (starting with a letter or digit), not ${JSON.stringify(n)}`);
  return names;
}

/** `--max-deactivations N --per DURATION`: both or neither. */
export function parseBudget(maxRaw: string | undefined, perRaw: string | undefined): { maxDeactivations: number | null; deactivationWindowSeconds: number | null } {
  if (maxRaw === undefined && perRaw === undefined) return { maxDeactivations: null, deactivationWindowSeconds: null };
  if (maxRaw === undefined || perRaw === undefined) throw new UsageError('a deactivation budget needs both --max-deactivations N and --per DURATION');
  if (!/^\d+$/.test(maxRaw) || Number(maxRaw) < 1 || Number(maxRaw) > 2_147_483_647) throw new UsageError(`--max-deactivations must be a positive integer, not ${JSON.stringify(maxRaw)}`);
  return { maxDeactivations: Number(maxRaw), deactivationWindowSeconds: parseSeconds('--per', perRaw)! };
}
