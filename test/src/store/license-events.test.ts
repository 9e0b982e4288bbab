// The license audit trail on both engines (docs/license-events.md): events recorded inside the
// change's transaction with their webhook outbox rows (and gone with it when it rolls back),
// aggregation of lease renewals per (machine, hour) and refusals per (code, hour), webhook
// patterns, the outbox's claim order per (webhook, key), retries and giving up, and what the audit
// job tidies: lapsed leases (database clock), expired keys once, events past retention.
import { expect, it } from 'vitest';
import { SqlLicenseAuditStore, recordLicenseEvent } from '../../../src/store/license-events-sql.js';
import { parseEventPatterns } from '../../../src/store/license-events.js';
import { describeEngines } from '../../helpers/engines.js';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 10, 1, 10, 0, 0);

function hook(id: string, events: string[]) {
  return { id, url: `http://127.0.0.1:9/${id}`, events, secret: `whsec_${id}`, created_at: '2026-11-01T00:00:00.000Z' };
}

describeEngines('license audit trail', (open) => {
  it('records events in the change transaction; a rollback leaves neither the event nor its outbox row', async () => {
    const db = await open();
    const s = await SqlLicenseAuditStore.open(db);
    await s.addWebhook(hook('wh_all', ['license.*']));
    await db.transaction(async (tx) => {
      await recordLicenseEvent(tx, { type: 'license.activated', key_id: 'lk_a', item_id: 'it', machine_id: 'm1', at_ms: T0, data: { seats: 1 } });
    });
    await expect(
      db.transaction(async (tx) => {
        await recordLicenseEvent(tx, { type: 'license.revoked', key_id: 'lk_a', item_id: 'it', at_ms: T0 + 1 });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    const events = await s.events('lk_a');
    expect(events.map((e) => e.type)).toEqual(['license.activated']);
    expect(events[0]).toMatchObject({ machine_id: 'm1', code: null, at_ms: T0, last_ms: T0, count: 1, data: { seats: 1 } });
    expect(events[0]!.id).toMatch(/^evt_[0-9a-f]{24}$/);
    expect(await s.pendingDeliveries()).toBe(1);
  });

  it('aggregates lease renewals per (machine, hour) and refusals per (code, hour); an outbox row only when the aggregate is new', async () => {
    const db = await open();
    const s = await SqlLicenseAuditStore.open(db);
    await s.addWebhook(hook('wh_all', ['license.*']));
    for (let i = 0; i < 5; i++) await recordLicenseEvent(db, { type: 'license.lease_renewed', key_id: 'lk_a', item_id: 'it', machine_id: 'm1', at_ms: T0 + i * 1000 });
    await recordLicenseEvent(db, { type: 'license.lease_renewed', key_id: 'lk_a', item_id: 'it', machine_id: 'm2', at_ms: T0 });
    await recordLicenseEvent(db, { type: 'license.lease_renewed', key_id: 'lk_a', item_id: 'it', machine_id: 'm1', at_ms: T0 + HOUR });
    for (let i = 0; i < 3; i++) await recordLicenseEvent(db, { type: 'license.verification_refused', key_id: 'lk_a', item_id: 'it', code: 'SUSPENDED', at_ms: T0 + 10 + i });
    await recordLicenseEvent(db, { type: 'license.verification_refused', key_id: 'lk_a', item_id: 'it', code: 'EXPIRED', at_ms: T0 });
    // Another key's renewals never fold into this key's.
    await recordLicenseEvent(db, { type: 'license.lease_renewed', key_id: 'lk_b', item_id: 'it', machine_id: 'm1', at_ms: T0 });
    const events = await s.events('lk_a');
    const summary = events.map((e) => [e.type, e.machine_id ?? e.code, e.count, e.at_ms, e.last_ms]);
    expect(summary).toEqual(
      expect.arrayContaining([
        ['license.lease_renewed', 'm1', 5, T0, T0 + 4000],
        ['license.lease_renewed', 'm2', 1, T0, T0],
        ['license.lease_renewed', 'm1', 1, T0 + HOUR, T0 + HOUR],
        ['license.verification_refused', 'SUSPENDED', 3, T0 + 10, T0 + 12],
        ['license.verification_refused', 'EXPIRED', 1, T0, T0],
      ]),
    );
    expect(events).toHaveLength(5);
    expect(await s.events('lk_b')).toHaveLength(1);
    // One outbox row per aggregate row created (5 for lk_a, 1 for lk_b), none per repeat.
    expect(await s.pendingDeliveries()).toBe(6);
    // --since reads the latest occurrence: the m1 aggregate of the first hour ended at T0 + 4000.
    expect((await s.events('lk_a', T0 + 4000)).map((e) => e.last_ms)).toEqual([T0 + 4000, T0 + HOUR]);
  });

  it('webhook patterns: exact types and prefixes choose the events; listing never shows the secret; removal drops its outbox', async () => {
    const db = await open();
    const s = await SqlLicenseAuditStore.open(db);
    await s.addWebhook(hook('wh_rev', ['license.revoked']));
    await s.addWebhook(hook('wh_lease', parseEventPatterns('license.lease_*, license.released')));
    // Two patterns matching one event still make one delivery.
    await s.addWebhook(hook('wh_any', parseEventPatterns('*,license.revoked')));
    for (const type of ['license.revoked', 'license.lease_expired', 'license.released', 'license.suspended'] as const) {
      await recordLicenseEvent(db, { type, key_id: `lk_${type}`, item_id: 'it', at_ms: T0 });
    }
    const claimed = await s.claimDeliveries(100, 60_000);
    const pairs = claimed.map((d) => `${d.webhook_id} ${d.event!.type}`).sort();
    expect(pairs).toEqual(
      [
        'wh_any license.lease_expired',
        'wh_any license.released',
        'wh_any license.revoked',
        'wh_any license.suspended',
        'wh_lease license.lease_expired',
        'wh_lease license.released',
        'wh_rev license.revoked',
      ].sort(),
    );
    expect(claimed.find((d) => d.webhook_id === 'wh_rev')).toMatchObject({ url: 'http://127.0.0.1:9/wh_rev', secret: 'whsec_wh_rev', attempts: 1 });
    const listed = await s.webhooks();
    expect(listed.map((w) => w.id).sort()).toEqual(['wh_any', 'wh_lease', 'wh_rev']);
    expect(listed.find((w) => w.id === 'wh_lease')!.events).toEqual(['license.lease_*', 'license.released']);
    expect(listed.find((w) => w.id === 'wh_any')!.events).toEqual(['*', 'license.revoked']);
    expect(JSON.stringify(listed)).not.toContain('whsec_');
    expect(await s.removeWebhook('wh_any')).toBe(true);
    expect(await s.removeWebhook('wh_any')).toBe(false);
    expect(await s.pendingDeliveries()).toBe(3);
    expect(() => parseEventPatterns('license.revokd')).toThrow(/unknown event pattern/);
    expect(() => parseEventPatterns('billing.*')).toThrow(/unknown event pattern/);
    expect(() => parseEventPatterns(' , ')).toThrow(/no event patterns/);
  });

  it('the outbox: one claim at a time per row, the oldest row per (webhook, key) first, a lapsed claim taken again, retries then giving up', async () => {
    const db = await open();
    const s = await SqlLicenseAuditStore.open(db);
    await s.addWebhook(hook('wh_1', ['license.*']));
    for (const [key, type] of [
      ['lk_a', 'license.activated'],
      ['lk_b', 'license.activated'],
      ['lk_a', 'license.suspended'],
      ['lk_a', 'license.reinstated'],
    ] as const) {
      await recordLicenseEvent(db, { type, key_id: key, item_id: 'it', at_ms: T0 });
    }
    // Two claimers at once (two instances): each row goes to one of them, and only the heads.
    const [c1, c2] = await Promise.all([s.claimDeliveries(10, 60_000), s.claimDeliveries(10, 60_000)]);
    const heads = [...c1, ...c2].map((d) => `${d.event!.key_id} ${d.event!.type}`).sort();
    expect(heads).toEqual(['lk_a license.activated', 'lk_b license.activated']);
    // Nothing else is due while the heads are claimed.
    expect(await s.claimDeliveries(10, 60_000)).toEqual([]);
    const a = [...c1, ...c2].find((d) => d.event!.key_id === 'lk_a')!;
    await s.delivered(a.seq);
    const next = await s.claimDeliveries(10, 60_000);
    expect(next.map((d) => d.event!.type)).toEqual(['license.suspended']);
    // A failure schedules a retry: not due at once (1 s, which a loaded machine cannot outrun), due after its delay.
    expect(await s.failed(next[0]!.seq, 1000, 24 * HOUR, 'HTTP 500')).toBe('retry');
    expect(await s.claimDeliveries(10, 60_000)).toEqual([]);
    const deadline = Date.now() + 5000;
    let again: Awaited<ReturnType<typeof s.claimDeliveries>> = [];
    while (again.length === 0 && Date.now() < deadline) again = await s.claimDeliveries(10, 60_000);
    expect(again.map((d) => [d.event!.type, d.attempts])).toEqual([['license.suspended', 2]]);
    // A claim whose instance died lapses and is taken again.
    const b = [...c1, ...c2].find((d) => d.event!.key_id === 'lk_b')!;
    await db.run('UPDATE license_webhook_outbox SET claimed_until_ms = 0 WHERE seq = ?', [b.seq]);
    expect((await s.claimDeliveries(10, 60_000)).map((d) => d.seq)).toEqual([b.seq]);
    // Older than the give-up age: a failure drops it, and the key's next event becomes due.
    expect(await s.failed(again[0]!.seq, 10, 0, 'HTTP 500')).toBe('given-up');
    expect((await s.claimDeliveries(10, 60_000)).map((d) => d.event!.type)).toEqual(['license.reinstated']);
  });

  it('while a head waits for its retry the rows behind it wait with it (the scan passes them), and are due again once it is delivered', async () => {
    const db = await open();
    const s = await SqlLicenseAuditStore.open(db);
    await s.addWebhook(hook('wh_1', ['license.*']));
    await recordLicenseEvent(db, { type: 'license.activated', key_id: 'lk_a', item_id: 'it', at_ms: T0 });
    await recordLicenseEvent(db, { type: 'license.revoked', key_id: 'lk_a', item_id: 'it', at_ms: T0 + 1 });
    await recordLicenseEvent(db, { type: 'license.activated', key_id: 'lk_b', item_id: 'it', at_ms: T0 });
    const held = async () =>
      (await db.all<{ held: number }>("SELECT next_attempt_ms - created_ms AS held FROM license_webhook_outbox WHERE key_id = 'lk_a' ORDER BY seq")).map((r) => Number(r.held));
    const heads = await s.claimDeliveries(10, 60_000);
    const a = heads.find((d) => d.event!.key_id === 'lk_a')!;
    await s.delivered(heads.find((d) => d.event!.key_id === 'lk_b')!.seq, 1);
    expect(await s.failed(a.seq, 60_000, 24 * HOUR, 'HTTP 500')).toBe('retry');
    const [head, follower] = await held();
    expect(head).toBeGreaterThanOrEqual(59_000);
    expect(follower).toBeGreaterThanOrEqual(59_000);
    // The head's retry comes early (as if its time had come): delivered on its second attempt.
    await db.run('UPDATE license_webhook_outbox SET next_attempt_ms = 0 WHERE seq = ?', [a.seq]);
    const retried = await s.claimDeliveries(10, 60_000);
    expect(retried.map((d) => [d.seq, d.attempts])).toEqual([[a.seq, 2]]);
    await s.delivered(a.seq, 2);
    expect((await s.claimDeliveries(10, 60_000)).map((d) => d.event!.type)).toEqual(['license.revoked']);
  });

  it('prunes events first seen before the retention; an outbox row whose event is gone claims as undefined', async () => {
    const db = await open();
    const s = await SqlLicenseAuditStore.open(db);
    await recordLicenseEvent(db, { type: 'license.activated', key_id: 'lk_a', item_id: 'it', at_ms: T0 - 500 * 24 * HOUR });
    await recordLicenseEvent(db, { type: 'license.lease_renewed', key_id: 'lk_a', item_id: 'it', machine_id: 'm', at_ms: T0 - 2 * HOUR + 1 });
    await recordLicenseEvent(db, { type: 'license.activated', key_id: 'lk_a', item_id: 'it', at_ms: T0 });
    await s.addWebhook(hook('wh_1', ['license.revoked']));
    await recordLicenseEvent(db, { type: 'license.revoked', key_id: 'lk_old', item_id: 'it', at_ms: T0 - 2 * HOUR });
    expect(await s.pruneEvents(T0 - HOUR)).toBe(3);
    expect((await s.events('lk_a')).map((e) => e.at_ms)).toEqual([T0]);
    const [d] = await s.claimDeliveries(10, 60_000);
    expect(d!.event).toBeUndefined();
  });
});
