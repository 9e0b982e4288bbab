// The license audit job on both engines (docs/license-events.md): floating leases that lapsed by
// the database's clock are tidied under the key's lock with `license.lease_expired` (a live lease
// stays, the key's count follows); `license.expired` is recorded once per expired key (not for a
// key that expired before the retention); events past the retention are pruned; and the timer
// runs the job without being called.
import { expect, it } from 'vitest';
import { SqlLicenseStore } from '../../../../src/store/license-sql.js';
import { SqlLicenseAuditStore, dbNowMs } from '../../../../src/store/license-events-sql.js';
import type { SqlDatabase } from '../../../../src/store/sql.js';
import { ManualClock, systemClock, type Clock } from '../../../../src/util/clock.js';
import { runAuditJob, startAuditJob, type AuditJobContext } from '../../../../daemon/services/marketplace/license/audit-jobs.js';
import { describeEngines } from '../../../helpers/engines.js';
import { captureLog } from '../../../helpers/log-capture.js';
import { waitFor } from '../../../helpers/wait.js';

const DAY = 86_400_000;
const CREATED = '2026-11-01T00:00:00.000Z';

async function setup(db: SqlDatabase, clock: Clock): Promise<{ license: SqlLicenseStore; audit: SqlLicenseAuditStore; ctx: AuditJobContext }> {
  const license = await SqlLicenseStore.open(db);
  const audit = await SqlLicenseAuditStore.open(db);
  await license.createItem({
    id: 'ci-seats',
    name: 'CI seats',
    license_template: null,
    max_activations: 5,
    verification_enabled: true,
    created_at: CREATED,
    activation_policy: 'floating',
    lease_seconds: 1,
    max_deactivations: null,
    deactivation_window_seconds: null,
  });
  const key = (id: string, expires_at: string | null = null) => ({ id, item_id: 'ci-seats', key_prefix: id, key_hash: `h-${id}`, licensee: null, max_activations: 5, expires_at, created_at: CREATED });
  const now = clock.now();
  await license.transaction((tx) =>
    tx.addKeys([key('lk_0001'), key('lk_0002', new Date(now - DAY).toISOString()), key('lk_0003', new Date(now - 500 * DAY).toISOString()), key('lk_0004', new Date(now + DAY).toISOString())]),
  );
  const { logger } = captureLog();
  return { license, audit, ctx: { sql: db, audit, license, clock, logger, retentionDays: 400 } };
}

async function lapsedCount(db: SqlDatabase): Promise<number> {
  return Number(await db.value(`SELECT COUNT(*) FROM license_activations WHERE lease_expires_ms <= ${dbNowMs(db.engine)}`));
}

describeEngines('license audit job', (open) => {
  it('tidies lapsed leases with license.lease_expired, leaves a live one, records license.expired once, prunes past retention', async () => {
    const db = await open();
    const clock = new ManualClock(Date.now());
    const { license, audit, ctx } = await setup(db, clock);
    const lapsing = await license.transaction(async (tx) => {
      await tx.lockKey('lk_0001');
      const l = await tx.takeLease('lk_0001', 'runner-1', null, CREATED, 1);
      await tx.takeLease('lk_0001', 'runner-2', null, CREATED, 3600);
      return l;
    });
    expect(Number(await db.value("SELECT activation_count FROM license_keys WHERE id = 'lk_0001'"))).toBe(2);
    // The database's clock passes the first lease's end (bounded by what is checked).
    await waitFor(async () => (await lapsedCount(db)) === 1, 'the 1 s lease to lapse', 5000);
    // An event of the trail from long ago, past the 400 days.
    await audit.record({ type: 'license.activated', key_id: 'lk_0004', item_id: 'ci-seats', at_ms: clock.now() - 401 * DAY });

    const first = await runAuditJob(ctx);
    expect(first).toEqual({ leasesExpired: 1, keysExpired: 1, eventsPruned: 1 });
    const events = await audit.events('lk_0001');
    expect(events.map((e) => [e.type, e.machine_id, e.at_ms])).toEqual([['license.lease_expired', 'runner-1', lapsing.lease_expires_ms]]);
    const rows = await db.all<{ machine_id: string }>("SELECT machine_id FROM license_activations WHERE key_id = 'lk_0001'");
    expect(rows.map((r) => r.machine_id)).toEqual(['runner-2']);
    expect(Number(await db.value("SELECT activation_count FROM license_keys WHERE id = 'lk_0001'"))).toBe(1);
    expect((await audit.events('lk_0002')).map((e) => [e.type, e.at_ms])).toEqual([['license.expired', clock.now() - DAY]]);
    // Expired 500 days ago (before the retention): left alone; not expired yet: nothing.
    expect(await audit.events('lk_0003')).toEqual([]);
    expect(await audit.events('lk_0004')).toEqual([]);

    // Nothing twice.
    expect(await runAuditJob(ctx)).toEqual({ leasesExpired: 0, keysExpired: 0, eventsPruned: 0 });
    // A day later the fourth key has expired too.
    clock.advance(2 * DAY);
    expect((await runAuditJob(ctx)).keysExpired).toBe(1);
    expect((await audit.events('lk_0004')).map((e) => e.type)).toEqual(['license.expired']);
  });

  it('the timer runs the job on its own', async () => {
    const db = await open();
    const { license, audit, ctx } = await setup(db, systemClock);
    await license.transaction(async (tx) => {
      await tx.lockKey('lk_0001');
      await tx.takeLease('lk_0001', 'runner-9', null, CREATED, 1);
    });
    const job = startAuditJob(ctx, 100);
    try {
      await waitFor(async () => (await audit.events('lk_0001')).some((e) => e.type === 'license.lease_expired'), 'the lease_expired event', 10_000);
      expect(await lapsedCount(db)).toBe(0);
    } finally {
      await job.stop();
    }
  });
});
