// The license audit job: on one instance at a time (SqlDatabase.exclusive, once per period across
// instances) it tidies floating leases that lapsed, recording `license.lease_expired`; records
// `license.expired` once per key whose expiry passed; and prunes events past the retention.
// Nothing depends on it running: a lapsed lease no longer counts as a seat whether or not its row
// is gone (the database's clock decides), so the job only keeps the trail and the table tidy.
import type { Logger } from '../../../logger.js';
import type { SqlDatabase } from '../../../../src/store/sql.js';
import type { LicenseStore } from '../../../../src/store/license.js';
import type { SqlLicenseAuditStore } from '../../../../src/store/license-events-sql.js';
import type { AuditRunResult } from '../../../../src/store/license-events.js';
import type { Clock } from '../../../../src/util/clock.js';

export const AUDIT_JOB = 'license-audit';
export const DEFAULT_AUDIT_INTERVAL_MS = 60_000;
export const DEFAULT_EVENT_RETENTION_DAYS = 400;
const DAY_MS = 86_400_000;
/** Keys tidied per read of the lapsed ones. */
const BATCH = 200;

export interface AuditJobContext {
  sql: Pick<SqlDatabase, 'exclusive'>;
  audit: SqlLicenseAuditStore;
  license: LicenseStore;
  clock: Clock;
  logger: Logger;
  retentionDays: number;
}

/**
 * Tidies one key's lapsed leases under its lock, as a request for the key does (the count's rule
 * lives in LicenseRows.tidyLeases), and records each in the same transaction.
 */
async function expireKeyLeases(c: AuditJobContext, keyId: string): Promise<number> {
  return c.license.transaction(async (tx) => {
    if (!(await tx.lockKey(keyId))) return 0;
    const gone = await tx.tidyLeases(keyId);
    if (gone.length === 0) return 0;
    const itemId = (await tx.getKey(keyId))?.item_id ?? '';
    for (const g of gone) {
      await tx.recordEvent({ type: 'license.lease_expired', key_id: keyId, item_id: itemId, machine_id: g.machine_id, at_ms: Number(g.lease_expires_ms) });
    }
    return gone.length;
  });
}

/** One run of the job's three tasks (called by the timer under `exclusive`, or by tests directly). */
export async function runAuditJob(c: AuditJobContext): Promise<AuditRunResult> {
  const result: AuditRunResult = { leasesExpired: 0, keysExpired: 0, eventsPruned: 0 };
  for (;;) {
    const keys = await c.audit.keysWithLapsedLeases(BATCH);
    let removed = 0;
    for (const k of keys) removed += await expireKeyLeases(c, k);
    result.leasesExpired += removed;
    // A key read as lapsed may have been renewed meanwhile: stop when a batch tidied nothing.
    if (keys.length < BATCH || removed === 0) break;
  }
  const now = c.clock.now();
  const keepFrom = now - c.retentionDays * DAY_MS;
  for (;;) {
    const n = await c.audit.expireKeys(now, keepFrom);
    result.keysExpired += n;
    if (n === 0) break;
  }
  result.eventsPruned = await c.audit.pruneEvents(keepFrom);
  if (result.leasesExpired + result.keysExpired + result.eventsPruned > 0) c.logger.info({ job: AUDIT_JOB, ...result }, 'license audit job');
  return result;
}

/**
 * Runs the job every `intervalMs`. Each instance's timer fires; the run happens where `exclusive`
 * takes the job's lock and claims the period (the interval the injected clock is in), so several
 * instances run it once per period between them.
 */
export function startAuditJob(c: AuditJobContext, intervalMs: number): { stop(): Promise<void> } {
  let running: Promise<unknown> | undefined;
  let stopped = false;
  const tick = (): void => {
    if (running || stopped) return;
    const period = Math.floor(c.clock.now() / intervalMs) * intervalMs;
    running = c.sql
      .exclusive(AUDIT_JOB, async () => void (await runAuditJob(c)), { period })
      .catch((err: unknown) => c.logger.error({ job: AUDIT_JOB, err: (err as Error).message }, 'license audit job failed'))
      .finally(() => (running = undefined));
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  tick();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
