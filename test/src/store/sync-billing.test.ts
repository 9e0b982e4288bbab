// The sync storage store on both engines: its row operations (uploads and their parts, blobs,
// usage, subscriptions, checkouts, payment events), and the domain rules that run in its
// transactions (quota at reserve and confirm, upload state moves, webhook events applied once and
// never back in time), including under concurrency on PostgreSQL's pool and across two
// connections to one database, as two instances would be.
import { describe, expect, it } from 'vitest';
import { describeEngines } from '../../helpers/engines.js';
import { freshDatabaseUrl } from '../../helpers/pg.js';
import { PgDatabase } from '../../../src/store/sql-pg.js';
import type { SqlDatabase } from '../../../src/store/sql.js';
import { SqlSyncStorageStore } from '../../../src/store/sync-billing-sql.js';
import type { BillingEvent, SubscriptionRecord, SyncStorageStore, UploadSession } from '../../../src/store/sync-billing.js';
import { moveUpload, recordParts, settleConfirm, touchUpload } from '../../../daemon/services/marketplace/sync/uploads.js';
import { reserveUpload } from '../../../daemon/services/marketplace/sync/routes/uploads.js';
import { applyEvent } from '../../../daemon/services/marketplace/sync/subscriptions.js';
import { HttpError } from '../../../daemon/plugins/errors.js';

const MIB = 1024 * 1024;

async function addApp(sql: SqlDatabase, id: string, name: string, freeBytes: number): Promise<void> {
  await sql.run(
    `INSERT INTO sync_apps (id, name, api_key, min_charge_cents, per_gb_tenths_of_cent_per_month, annual_multiplier, min_cap_bytes, max_cap_bytes, free_bytes, created_at)
     VALUES (?, ?, ?, 100, 25, 10, ?, ?, ?, ?)`,
    [id, name, `key-${id}`, 1024 ** 3, 1024 ** 4, freeBytes, '2026-03-01T00:00:00.000Z'],
  );
}

let seq = 0;
function upload(over: Partial<UploadSession> = {}): UploadSession {
  const id = over.id ?? `up-${String(++seq).padStart(4, '0')}`;
  return {
    id,
    app_id: 'app1',
    user_id: 'u1',
    hash: 'h'.repeat(64),
    size_bytes: MIB,
    part_size: MIB,
    part_count: 1,
    state: 'single',
    store_upload_id: null,
    object_key: `app1/u1/hash.${id}`,
    expires_ms: 10_000,
    created_at: '2026-03-01T00:00:00.000Z',
    last_activity_ms: 1_000,
    ...over,
  };
}

function subscription(over: Partial<SubscriptionRecord> = {}): SubscriptionRecord {
  return {
    app_id: 'app1',
    user_id: 'u1',
    status: 'active',
    cap_bytes: 50 * MIB,
    pending_cap_bytes: null,
    interval: 'month',
    price_cents: 100,
    provider_subscription_id: 'sub_local_1',
    current_period_start: '2026-03-01T00:00:00.000Z',
    current_period_end: '2026-04-01T00:00:00.000Z',
    last_event_created: 100,
    updated_at: '2026-03-01T00:00:00.000Z',
    ...over,
  };
}

async function storeOn(open: () => Promise<SqlDatabase>, freeBytes = 10 * MIB): Promise<{ sql: SqlDatabase; store: SyncStorageStore }> {
  const sql = await open();
  const store = await SqlSyncStorageStore.open(sql);
  // Opening again (a second instance starting) changes nothing.
  await SqlSyncStorageStore.open(sql);
  await addApp(sql, 'app1', 'Notes App', freeBytes);
  return { sql, store };
}

async function status(p: Promise<unknown>): Promise<number | 'ok'> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    if (err instanceof HttpError) return err.statusCode;
    throw err;
  }
}

describeEngines('SqlSyncStorageStore rows', (open) => {
  it('finds apps by id or by name in any case', async () => {
    const { sql, store } = await storeOn(open);
    await addApp(sql, 'app2', 'app1', 0);
    expect((await store.app('app1'))?.app_name).toBe('Notes App');
    expect((await store.app('app1'))?.free_bytes).toBe(10 * MIB);
    expect((await store.appByNameOrId('NOTES app'))?.app_id).toBe('app1');
    // The id wins over another app's name.
    expect((await store.appByNameOrId('app1'))?.app_id).toBe('app1');
    expect(await store.appByNameOrId('nope')).toBeUndefined();
  });

  it('keeps uploads, their object-store ids, parts and states', async () => {
    const { store } = await storeOn(open);
    const single = upload({ id: 'a-single' });
    const multi = upload({ id: 'b-multi', state: 'open', store_upload_id: 'S3-UPLOAD-ID', part_count: 2, size_bytes: 2 * MIB, expires_ms: null, last_activity_ms: 2_000 });
    await store.insertUpload(single);
    await store.insertUpload(multi);
    expect(await store.upload('a-single')).toEqual(single);
    expect(await store.upload('b-multi')).toEqual(multi);
    expect((await store.uploadByStoreId('S3-UPLOAD-ID'))?.id).toBe('b-multi');
    expect(await store.pendingUploads('app1', 'u1', single.hash)).toBe(2);
    expect((await store.openUploads(10)).map((u) => u.id)).toEqual(['b-multi']);
    expect(await store.openUploads(10, 'b-multi')).toEqual([]);

    expect(await store.touchOpenUpload('b-multi', 5_000)).toBe(true);
    expect(await store.touchOpenUpload('a-single', 5_000)).toBe(false);
    await store.replaceParts('b-multi', [{ part_number: 1, size_bytes: MIB, etag: '"e1"' }]);
    await store.replaceParts('b-multi', [{ part_number: 1, size_bytes: MIB, etag: '"e1"' }, { part_number: 2, size_bytes: 1000, etag: '"e2"' }]);
    const u = await store.usage('app1', 'u1');
    expect(u).toMatchObject({ open_part_bytes: MIB + 1000, reserved_bytes: 3 * MIB, blob_bytes: 0, used_bytes: MIB + 1000, cap_bytes: 10 * MIB, subscription_active: false });

    expect(await store.setUploadState('b-multi', ['single'], 'aborted', 6_000)).toBe(false);
    expect(await store.setUploadState('b-multi', ['open', 'completed'], 'completed', 6_000)).toBe(true);
    expect((await store.upload('b-multi'))).toMatchObject({ state: 'completed', last_activity_ms: 6_000 });
    expect((await store.confirmable('app1', 'u1', single.hash)).map((x) => x.id)).toEqual(['b-multi', 'a-single']);
  });

  it('lists idle uploads and settle candidates', async () => {
    const { store } = await storeOn(open);
    await store.insertUpload(upload({ id: 'i1', state: 'open', expires_ms: null, last_activity_ms: 100 }));
    await store.insertUpload(upload({ id: 'i2', state: 'single', expires_ms: 500, last_activity_ms: 200 }));
    await store.insertUpload(upload({ id: 'i3', state: 'confirmed', expires_ms: 400, last_activity_ms: 50 }));
    await store.insertUpload(upload({ id: 'i4', state: 'rejected', expires_ms: 900, last_activity_ms: 50 }));
    expect((await store.idleUploads(150, 10)).map((u) => u.id)).toEqual(['i1']);
    expect((await store.idleUploads(1_000, 10)).map((u) => u.id)).toEqual(['i1', 'i2']);
    expect((await store.settleCandidates(600, 10, '')).map((u) => u.id)).toEqual(['i2', 'i3']);
    expect((await store.settleCandidates(1_000, 10, 'i2')).map((u) => u.id)).toEqual(['i3', 'i4']);
    await store.clearExpiry('i3');
    expect((await store.settleCandidates(1_000, 10, '')).map((u) => u.id)).toEqual(['i2', 'i4']);
  });

  it('records blobs, which count as stored bytes', async () => {
    const { store } = await storeOn(open);
    await store.insertBlob({ app_id: 'app1', user_id: 'u1', hash: 'x', size_bytes: 3 * MIB, created_at: '2026-03-02T00:00:00.000Z', object_key: 'app1/u1/x.1' });
    expect(await store.blob('app1', 'u1', 'x')).toEqual({ size_bytes: 3 * MIB, created_at: '2026-03-02T00:00:00.000Z', object_key: 'app1/u1/x.1' });
    expect(await store.blob('app1', 'u2', 'x')).toBeUndefined();
    expect(await store.usage('app1', 'u1')).toMatchObject({ blob_bytes: 3 * MIB, blob_count: 1, used_bytes: 3 * MIB });
  });

  it('keeps subscriptions, checkouts and payment events', async () => {
    const { store } = await storeOn(open);
    await store.putSubscription(subscription());
    await store.putSubscription(subscription({ user_id: 'u2', provider_subscription_id: 'sub_local_2', status: 'canceled' }));
    expect(await store.subscription('app1', 'u1')).toEqual(subscription());
    expect((await store.subscriptionByProvider('sub_local_2'))?.user_id).toBe('u2');
    expect((await store.subscriptions({})).map((s) => s.user_id)).toEqual(['u1', 'u2']);
    expect((await store.subscriptions({ user_id: 'u2' })).map((s) => s.status)).toEqual(['canceled']);
    expect(await store.subscriptions({ app_id: 'other' })).toEqual([]);
    expect(await store.usage('app1', 'u1')).toMatchObject({ cap_bytes: 50 * MIB, subscription_active: true });
    expect(await store.setPendingCap('app1', 'u1', 80 * MIB, '2026-03-03T00:00:00.000Z')).toBe(true);
    expect(await store.setPendingCap('app1', 'u2', 80 * MIB, '2026-03-03T00:00:00.000Z')).toBe(false);
    expect((await store.subscription('app1', 'u1'))?.pending_cap_bytes).toBe(80 * MIB);
    await store.putSubscription(subscription({ cap_bytes: 80 * MIB }));
    expect(await store.subscription('app1', 'u1')).toMatchObject({ cap_bytes: 80 * MIB, pending_cap_bytes: null });

    const co = { id: 'cs_1', app_id: 'app1', user_id: 'u1', cap_bytes: 50 * MIB, interval: 'year' as const, price_cents: 1000, state: 'open' as const, created_at: '2026-03-01T00:00:00.000Z' };
    await store.createCheckout(co);
    expect(await store.checkout('cs_1')).toEqual(co);
    expect(await store.completeCheckout('cs_1')).toBe(true);
    expect(await store.completeCheckout('cs_1')).toBe(false);
    expect(await store.recordEvent('evt_1', 'invoice.paid', '2026-03-01T00:00:00.000Z')).toBe(true);
    expect(await store.recordEvent('evt_1', 'invoice.paid', '2026-03-01T00:00:00.000Z')).toBe(false);
  });

  it('rolls back a transaction that throws', async () => {
    const { store } = await storeOn(open);
    await expect(
      store.transaction(async (tx) => {
        await tx.insertUpload(upload({ id: 'rolled' }));
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    expect(await store.upload('rolled')).toBeUndefined();
  });
});

describeEngines('sync storage rules in store transactions', (open) => {
  it('reserves within the cap only, and at most 8 pending uploads of one blob', async () => {
    const { store } = await storeOn(open, 10 * MIB);
    const c = { store };
    expect(await reserveUpload(c, upload({ size_bytes: 6 * MIB }))).toBe('reserved');
    expect(await status(reserveUpload(c, upload({ size_bytes: 5 * MIB, hash: 'other' })))).toBe(413);
    expect(await reserveUpload(c, upload({ size_bytes: 4 * MIB, hash: 'other' }))).toBe('reserved');
    for (let i = 0; i < 7; i++) await reserveUpload(c, upload({ size_bytes: 0 }));
    expect(await status(reserveUpload(c, upload({ size_bytes: 0 })))).toBe(409);
    await store.insertBlob({ app_id: 'app1', user_id: 'u1', hash: 'done', size_bytes: 0, created_at: 'x', object_key: 'k' });
    expect(await reserveUpload(c, upload({ size_bytes: 1, hash: 'done' }))).toBe('exists');
  });

  it('never reserves past the cap under 30 concurrent grants', async () => {
    const { store } = await storeOn(open, 10 * MIB);
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => status(reserveUpload({ store }, upload({ size_bytes: MIB, hash: `c${i}` })))));
    expect(results.filter((r) => r === 'ok')).toHaveLength(10);
    expect(results.filter((r) => r === 413)).toHaveLength(20);
    expect((await store.usage('app1', 'u1')).reserved_bytes).toBe(10 * MIB);
  });

  it('confirms a promoting upload within the cap, rejects over it, and loses to a reaper', async () => {
    const { store } = await storeOn(open, 20 * MIB);
    const at = '2026-03-02T00:00:00.000Z';
    const a = upload({ size_bytes: 4 * MIB, hash: 'a' });
    await reserveUpload({ store }, a);
    expect(await moveUpload(store, a.id, ['single'], 'promoting', 2_000)).toBe(true);
    // The stored object is larger than signed: still fits after releasing its own reservation.
    const ok = await settleConfirm(store, { upload_id: a.id, app_id: 'app1', user_id: 'u1', hash: 'a', size_bytes: 5 * MIB, object_key: 'k-a', at, now_ms: 3_000 });
    expect(ok).toMatchObject({ kind: 'created', usage: { blob_bytes: 5 * MIB, reserved_bytes: 0 } });
    expect((await store.upload(a.id))?.state).toBe('confirmed');

    const b = upload({ size_bytes: 5 * MIB, hash: 'b' });
    await reserveUpload({ store }, b);
    await moveUpload(store, b.id, ['single'], 'promoting', 2_000);
    const over = await settleConfirm(store, { upload_id: b.id, app_id: 'app1', user_id: 'u1', hash: 'b', size_bytes: 16 * MIB, object_key: 'k-b', at, now_ms: 3_000 });
    expect(over.kind).toBe('over_cap');
    expect((await store.upload(b.id))?.state).toBe('rejected');
    expect(await store.blob('app1', 'u1', 'b')).toBeUndefined();
    // A refused upload still reserves its size until the reaper settles it.
    expect((await store.usage('app1', 'u1')).reserved_bytes).toBe(5 * MIB);

    const d = upload({ size_bytes: MIB, hash: 'd' });
    await reserveUpload({ store }, d);
    await moveUpload(store, d.id, ['single'], 'promoting', 2_000);
    expect(await moveUpload(store, d.id, ['promoting'], 'reaped', 2_500)).toBe(true);
    expect((await settleConfirm(store, { upload_id: d.id, app_id: 'app1', user_id: 'u1', hash: 'd', size_bytes: MIB, object_key: 'k-d', at, now_ms: 3_000 })).kind).toBe('gone');
    expect(await store.blob('app1', 'u1', 'd')).toBeUndefined();
  });

  it('records parts only while a session is open, and drops them when it ends', async () => {
    const { store } = await storeOn(open);
    const s = upload({ state: 'open', store_upload_id: 'sid', expires_ms: null });
    await reserveUpload({ store }, s);
    await touchUpload(store, s.id, 5_000, [{ part_number: 1, size_bytes: 100, etag: '"a"' }]);
    expect((await store.upload(s.id))?.last_activity_ms).toBe(5_000);
    await recordParts(store, s.id, [{ part_number: 1, size_bytes: 100, etag: '"a"' }, { part_number: 2, size_bytes: 50, etag: '"b"' }]);
    expect((await store.usage('app1', 'u1')).open_part_bytes).toBe(150);
    expect((await store.upload(s.id))?.last_activity_ms).toBe(5_000);
    // Concurrent refreshes of one session's parts take turns (no duplicate part rows).
    await Promise.all(Array.from({ length: 10 }, (_, i) => touchUpload(store, s.id, 6_000 + i, [{ part_number: 1, size_bytes: 100, etag: '"a"' }])));
    expect((await store.usage('app1', 'u1')).open_part_bytes).toBe(100);
    expect(await moveUpload(store, s.id, ['open'], 'aborted', 7_000)).toBe(true);
    expect((await store.usage('app1', 'u1')).open_part_bytes).toBe(0);
    await recordParts(store, s.id, [{ part_number: 1, size_bytes: 100, etag: '"a"' }]);
    await touchUpload(store, s.id, 8_000, [{ part_number: 1, size_bytes: 100, etag: '"a"' }]);
    expect((await store.usage('app1', 'u1')).open_part_bytes).toBe(0);
    expect(await moveUpload(store, s.id, ['open'], 'reaped', 9_000)).toBe(false);
  });

  it('applies payment events once and never back in time', async () => {
    const { store } = await storeOn(open);
    const at = '2026-03-01T00:00:00.000Z';
    await store.createCheckout({ id: 'cs_1', app_id: 'app1', user_id: 'u1', cap_bytes: 50 * MIB, interval: 'month', price_cents: 100, state: 'open', created_at: at });
    const completed: BillingEvent = {
      id: 'evt_1', type: 'checkout.session.completed', created: 100, kind: 'checkout_completed', checkout_id: 'cs_1',
      provider_subscription_id: 'sub_local_1', current_period_start: '2026-03-01T00:00:00.000Z', current_period_end: '2026-04-01T00:00:00.000Z',
    };
    // Redeliveries racing each other: exactly one applies.
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => applyEvent(store, completed, at)));
    expect(outcomes.sort()).toEqual(['applied', 'duplicate', 'duplicate', 'duplicate', 'duplicate']);
    expect(await applyEvent(store, { ...completed, id: 'evt_1b' }, at)).toBe('stale');
    expect(await store.subscription('app1', 'u1')).toMatchObject({ status: 'active', cap_bytes: 50 * MIB, last_event_created: 100 });

    await store.setPendingCap('app1', 'u1', 100 * MIB, at);
    const renewal: BillingEvent = { id: 'evt_2', type: 'invoice.paid', created: 200, kind: 'renewed', provider_subscription_id: 'sub_local_1', current_period_start: '2026-04-01T00:00:00.000Z', current_period_end: '2026-05-01T00:00:00.000Z' };
    expect(await applyEvent(store, renewal, at)).toBe('applied');
    expect(await store.subscription('app1', 'u1')).toMatchObject({ cap_bytes: 100 * MIB, pending_cap_bytes: null, current_period_end: '2026-05-01T00:00:00.000Z', last_event_created: 200 });
    // The same period again under another event id does not renew twice.
    expect(await applyEvent(store, { ...renewal, id: 'evt_2b' }, at)).toBe('stale');
    expect(await applyEvent(store, { id: 'evt_0', type: 'customer.subscription.deleted', created: 150, kind: 'canceled', provider_subscription_id: 'sub_local_1' }, at)).toBe('stale');
    expect(await applyEvent(store, { id: 'evt_3', type: 'customer.subscription.deleted', created: 300, kind: 'canceled', provider_subscription_id: 'sub_local_1' }, at)).toBe('applied');
    expect((await store.subscription('app1', 'u1'))?.status).toBe('canceled');
    expect(await applyEvent(store, { id: 'evt_4', type: 'x', created: 1, kind: 'ignored' }, at)).toBe('ignored');
    expect(await applyEvent(store, { ...renewal, id: 'evt_5', provider_subscription_id: 'sub_unknown' }, at)).toBe('ignored');
  });
});

describe('sync storage on one PostgreSQL database from two instances', () => {
  it('holds the cap across instances: 30 concurrent grants through two connections pools', async () => {
    const url = await freshDatabaseUrl();
    const one = await PgDatabase.open(url);
    const two = await PgDatabase.open(url);
    try {
      const [a, b] = await Promise.all([SqlSyncStorageStore.open(one), SqlSyncStorageStore.open(two)]);
      await addApp(one, 'app1', 'Notes App', 10 * MIB);
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) => status(reserveUpload({ store: i % 2 === 0 ? a : b }, upload({ id: `x-${i}`, size_bytes: MIB, hash: `h${i}` })))),
      );
      expect(results.filter((r) => r === 'ok')).toHaveLength(10);
      expect((await b.usage('app1', 'u1')).reserved_bytes).toBe(10 * MIB);
    } finally {
      await one.close();
      await two.close();
    }
  });
});
