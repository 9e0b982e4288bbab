// The sync store and the sync area's rules over it, on both engines: apps by key hash, atomic
// pushes with per-(user, app) sequence numbers and batch idempotency, paged pulls, devices, key
// versions and the rotation state machine; on PostgreSQL, two instances (two pools) on one
// database deciding concurrently.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeEngines } from '../../helpers/engines.js';
import { freshDatabaseUrl } from '../../helpers/pg.js';
import { PgDatabase } from '../../../src/store/sql-pg.js';
import type { SqlDatabase } from '../../../src/store/sql.js';
import { SqlSyncStore, entryFieldsJson, entrySeq } from '../../../src/store/sync-sql.js';
import { SYNC_MIGRATIONS } from '../../../src/store/sync-schema.js';
import { SqlAccountsStore } from '../../../src/store/accounts-sql.js';
import { entryBytes } from '../../../src/store/sync-usage.js';
import type { Owner } from '../../../src/store/sync.js';
import fastJsonStringify from 'fast-json-stringify';
import { PullResponseSchema, StoredChangeEntrySchema, type ChangeEntry } from '../../../src/schemas/sync.js';
import { parsedPage } from '../../../src/store/sync.js';
import { pullAnswer } from '../../../daemon/services/marketplace/sync/pull-answer.js';
import { pull, push } from '../../../daemon/services/marketplace/sync/changelog.js';
import { deleteDevice, registerDevice } from '../../../daemon/services/marketplace/sync/devices.js';
import { getKey, putKey } from '../../../daemon/services/marketplace/sync/keys.js';
import { beginRotation, cancelStaleRotation, completeRotation, rotationBatch, rotationEntries } from '../../../daemon/services/marketplace/sync/rotation.js';
import { syncCounts } from '../../../daemon/services/marketplace/sync/counts.js';

const NOW = '2026-01-01T00:00:00.000Z';
const T0 = Date.parse(NOW);
const pricing = { min_charge_cents: 100, per_gb_tenths_of_cent_per_month: 50, annual_multiplier: 10, min_cap_bytes: 1, max_cap_bytes: 10, free_bytes: 5 };
const entries = (n: number, tag = 'x'): ChangeEntry[] => Array.from({ length: n }, (_, i) => ({ table: 't', op: 'insert', row_id: `${tag}${i}`, timestamp: NOW, data: { c: `${tag}${i}` } }));
const ana: Owner = { appId: 'app1', userId: 'ana' };
const bo: Owner = { appId: 'app1', userId: 'bo' };

describe('entrySeq', () => {
  it("reads the seq an entry's text starts with, and refuses a text that does not", () => {
    expect(entrySeq('{"seq":42,"key_id":1}')).toBe(42);
    expect(entrySeq(`{"seq":${2 ** 53 - 1},"x":1}`)).toBe(2 ** 53 - 1);
    for (const bad of ['{"key_id":1,"seq":4}', '{"seq":"4","x":1}', '{"seq":4}', '[{"seq":4,']) expect(() => entrySeq(bad), bad).toThrow(/does not start with its seq/);
  });
});

describeEngines('SqlSyncStore', (open) => {
  let db: SqlDatabase;
  let store: SqlSyncStore;
  let devA: string;
  let devB: string;

  beforeEach(async () => {
    db = await open();
    store = await SqlSyncStore.open(db);
    devA = (await registerDevice(store, ana, { name: 'laptop', now: NOW })).id;
    devB = (await registerDevice(store, ana, { name: 'phone', now: NOW })).id;
    await registerDevice(store, bo, { name: 'laptop', now: NOW });
  });

  it('finds apps by key hash and id; names are unique', async () => {
    const app = await store.createApp({ name: 'Notes', apiKeyHash: 'h1', pricing, now: NOW });
    expect(await store.appByKeyHash('h1')).toEqual(app);
    expect(await store.getApp(app.id)).toEqual(app);
    expect(await store.appByKeyHash('h2')).toBeUndefined();
    await expect(store.createApp({ name: 'notes', apiKeyHash: 'h3', pricing, now: NOW })).rejects.toThrow(/unique/i);
    expect((await store.listApps()).map((a) => a.name)).toEqual(['Notes']);
  });

  it('push needs a stored key and the current key id, and a registered device of the owner', async () => {
    expect(await push(store, ana, { deviceId: devA, batchId: 'b', keyId: 1, entries: entries(1), now: NOW })).toEqual({ kind: 'wrong_key', expected: null });
    await putKey(store, ana, { encryptedKey: 'E1', expectedVersion: 0, now: NOW });
    expect(await push(store, ana, { deviceId: devA, batchId: 'b', keyId: 2, entries: entries(1), now: NOW })).toEqual({ kind: 'wrong_key', expected: 1 });
    const boDevice = (await store.listDevices(bo))[0]!.id;
    expect(await push(store, ana, { deviceId: boDevice, batchId: 'b', keyId: 1, entries: entries(1), now: NOW })).toEqual({ kind: 'unknown_device' });
    expect((await syncCounts(store, ana)).entry_count).toBe(0);
  });

  it('numbers entries per (user, app) from 1, applies a retried batch once, pages pulls', async () => {
    await putKey(store, ana, { encryptedKey: 'E1', expectedVersion: 0, now: NOW });
    await putKey(store, bo, { encryptedKey: 'E1', expectedVersion: 0, now: NOW });
    const boDevice = (await store.listDevices(bo))[0]!.id;
    expect(await push(store, ana, { deviceId: devA, batchId: 'b1', keyId: 1, entries: entries(3), now: NOW })).toEqual({ kind: 'ok', cursor: 3, accepted: 3, duplicate: false });
    expect(await push(store, ana, { deviceId: devA, batchId: 'b1', keyId: 1, entries: entries(3), now: NOW })).toEqual({ kind: 'ok', cursor: 3, accepted: 3, duplicate: true });
    // The same batch id from another device is another batch.
    expect(await push(store, ana, { deviceId: devB, batchId: 'b1', keyId: 1, entries: entries(2, 'y'), now: NOW })).toMatchObject({ cursor: 5, duplicate: false });
    expect(await push(store, bo, { deviceId: boDevice, batchId: 'b1', keyId: 1, entries: entries(1), now: NOW })).toMatchObject({ cursor: 1 });
    const p1 = await pull(store, ana, { cursor: 0, limit: 2 });
    expect(p1.entries.map((e) => e.seq)).toEqual([1, 2]);
    expect(p1).toMatchObject({ cursor: 2, has_more: true });
    expect(p1.entries[0]).toEqual({ seq: 1, key_id: 1, device_id: devA, table: 't', op: 'insert', row_id: 'x0', timestamp: NOW, data: { c: 'x0' } });
    const p2 = await pull(store, ana, { cursor: 2, limit: 3 });
    expect(p2.entries.map((e) => e.row_id)).toEqual(['x2', 'y0', 'y1']);
    expect(p2).toMatchObject({ cursor: 5, has_more: false });
    expect(await pull(store, ana, { cursor: 5, limit: 3 })).toEqual({ entries: [], cursor: 5, has_more: false });
    expect(await syncCounts(store, ana)).toMatchObject({ cursor: 5, entry_count: 5, device_count: 2, key_version: 1, key_id: 1, rotation_in_progress: false });
  });

  it('writes a page as the bytes the route\'s schema serializer writes, whatever the strings and data hold', async () => {
    await putKey(store, ana, { encryptedKey: 'E1', expectedVersion: 0, now: NOW });
    // Every kind of character the engines' JSON quoting must escape as JSON.stringify does, or leave
    // alone (PostgreSQL text holds no NUL, so neither does this test's); data of every JSON kind.
    const odd = 'quote " backslash \\ newline \n return \r tab \t bs \b ff \f ctl \u0001\u001f del \u007f caf\u00e9 line sep \u2028 emoji \ud83d\ude00 </script>';
    const datas: unknown[] = ['c2VhbGVk', { iv: 'aXY=', nested: { list: [1, 2.5, -0, 1e21, true, null], empty: {} } }, [{ a: 1 }, odd, 3], 0, -12.75, false, null, undefined, '', odd];
    const sent: ChangeEntry[] = datas.map((data, i) => ({ table: i % 2 ? odd : 't', op: i % 3 ? 'update' : odd, row_id: `${odd} ${i}`, timestamp: i % 4 ? NOW : odd, ...(data === undefined ? {} : { data }) }));
    expect(await push(store, ana, { deviceId: devA, batchId: 'odd', keyId: 1, entries: sent, now: NOW })).toMatchObject({ kind: 'ok', accepted: sent.length });
    // An entry of no device (the schema allows it; none of ours writes it).
    await db.run("INSERT INTO sync_entries (app_id, user_id, seq, key_id, device_id, tbl, op, row_id, ts, data, fields_json) VALUES (?, ?, ?, 1, NULL, 't', 'delete', 'r', ?, NULL, ?)", [
      ana.appId,
      ana.userId,
      sent.length + 1,
      NOW,
      entryFieldsJson(null, { table: 't', op: 'delete', row_id: 'r', timestamp: NOW }),
    ]);
    const serializer = fastJsonStringify(PullResponseSchema as object);
    for (const limit of [1, 4, sent.length + 1, 50]) {
      const page = await store.storedPage(ana, { cursor: 0, limit });
      const parsed = parsedPage(page);
      expect(pullAnswer(page)).toBe(serializer(parsed));
      expect(parsed.entries).toHaveLength(Math.min(limit, sent.length + 1));
      expect(page.cursor).toBe(parsed.entries.length);
      expect(page.has_more).toBe(limit < sent.length + 1);
    }
    const all = parsedPage(await store.storedPage(ana, { cursor: 0, limit: 50 })).entries;
    expect(all).toEqual([
      ...sent.map((e, i) => ({ seq: i + 1, key_id: 1, device_id: devA, table: e.table, op: e.op, row_id: e.row_id, timestamp: e.timestamp, data: e.data === undefined ? null : JSON.parse(JSON.stringify(e.data)) })),
      { seq: sent.length + 1, key_id: 1, device_id: null, table: 't', op: 'delete', row_id: 'r', timestamp: NOW, data: null },
    ]);
    // Every field of the entry schema, in its order (a field added to it and not to the page fails here).
    expect(Object.keys(all[0]!)).toEqual(Object.keys(StoredChangeEntrySchema.properties));
    // A page past the end: no entries, the cursor asked.
    expect(await store.storedPage(ana, { cursor: 99, limit: 5 })).toEqual({ entries_json: '[]', cursor: 99, has_more: false });
  });

  it('answers a lone surrogate in a pushed string as pushed, escaped as JSON.stringify escapes it', async () => {
    await putKey(store, ana, { encryptedKey: 'E1', expectedVersion: 0, now: NOW });
    const lone = 'half \ud83d of an emoji, and \ude00 the other';
    await push(store, ana, { deviceId: devA, batchId: 'lone', keyId: 1, entries: [{ table: lone, op: 'update', row_id: lone, timestamp: NOW, data: lone }], now: NOW });
    const page = await store.storedPage(ana, { cursor: 0, limit: 1 });
    expect(page.entries_json).toContain('"row_id":"half \\ud83d of an emoji, and \\ude00 the other"');
    expect(parsedPage(page).entries[0]).toMatchObject({ table: lone, row_id: lone, data: lone });
  });

  it('stores a push of any size whole: entries in several INSERTs, bytes, batch answer and device time with them', async () => {
    await putKey(store, ana, { encryptedKey: 'E1', expectedVersion: 0, now: NOW });
    const later = '2026-01-03T00:00:00.000Z';
    const sizes = [150, 64, 1, 0];
    let expectedBytes = 0;
    let cursor = 0;
    for (const [i, n] of sizes.entries()) {
      const batch = entries(n, `s${i}-`);
      expectedBytes += batch.reduce((b, e) => b + entryBytes({ ...e, dataJson: JSON.stringify(e.data) }), 0);
      cursor += n;
      expect(await push(store, ana, { deviceId: devA, batchId: `s${i}`, keyId: 1, entries: batch, now: later })).toEqual({ kind: 'ok', cursor, accepted: n, duplicate: false });
    }
    expect(await push(store, ana, { deviceId: devA, batchId: 's0', keyId: 1, entries: entries(1), now: later })).toEqual({ kind: 'ok', cursor: 150, accepted: 150, duplicate: true });
    const all = (await pull(store, ana, { cursor: 0, limit: 1000 })).entries;
    expect(all.map((e) => e.seq)).toEqual(Array.from({ length: cursor }, (_, i) => i + 1));
    expect(all[149]).toEqual({ seq: 150, key_id: 1, device_id: devA, table: 't', op: 'insert', row_id: 's0-149', timestamp: NOW, data: { c: 's0-149' } });
    expect(all[150]!.row_id).toBe('s1-0');
    expect((await store.usage(ana)).changelog_bytes).toBe(expectedBytes);
    expect((await store.device(ana, devA))?.last_seen_at).toBe(later);
    expect((await store.device(ana, devB))?.last_seen_at).toBe(NOW);
  });

  it('callerExists: the app and the user must both exist', async () => {
    const accounts = await SqlAccountsStore.open(db);
    const user = await accounts.addUser({ name: 'ana', email: 'ana@example.com' });
    const app = await store.createApp({ name: 'Notes', apiKeyHash: 'h1', pricing, now: NOW });
    expect(await store.callerExists(app.id, user.id)).toBe(true);
    expect(await store.callerExists('no-such-app', user.id)).toBe(false);
    expect(await store.callerExists(app.id, 'no-such-user')).toBe(false);
  });

  it('a push is atomic: a failing entry leaves nothing behind', async () => {
    await putKey(store, ana, { encryptedKey: 'E1', expectedVersion: 0, now: NOW });
    const bad = [...entries(2), { table: 't', op: 'insert', row_id: 'z', timestamp: null as unknown as string }];
    await expect(push(store, ana, { deviceId: devA, batchId: 'b', keyId: 1, entries: bad, now: NOW })).rejects.toThrow(/NOT NULL|null value/i);
    expect((await syncCounts(store, ana)).entry_count).toBe(0);
    expect(await push(store, ana, { deviceId: devA, batchId: 'b', keyId: 1, entries: entries(1), now: NOW })).toMatchObject({ cursor: 1, duplicate: false });
  });

  it('devices: same name updates, delete reports unknown ids', async () => {
    const again = await registerDevice(store, ana, { name: 'laptop', platform: 'linux', now: '2026-01-02T00:00:00.000Z' });
    expect(again).toMatchObject({ id: devA, platform: 'linux', created_at: NOW, last_seen_at: '2026-01-02T00:00:00.000Z' });
    expect((await store.listDevices(ana)).map((d) => d.name)).toEqual(['laptop', 'phone']);
    expect(await deleteDevice(store, bo, devA)).toBe(false);
    expect(await deleteDevice(store, ana, devA)).toBe(true);
    expect(await deleteDevice(store, ana, devA)).toBe(false);
  });

  it('keys: version checks; rotation re-seals old entries only, completes, and makes the new key current', async () => {
    expect(await putKey(store, ana, { encryptedKey: 'E1', expectedVersion: 1, now: NOW })).toEqual({ kind: 'version_mismatch', current: 0 });
    expect(await putKey(store, ana, { encryptedKey: 'E1', expectedVersion: 0, now: NOW })).toEqual({ kind: 'ok', key_version: 1, key_id: 1 });
    expect(await putKey(store, ana, { encryptedKey: 'E1b', expectedVersion: 1, now: NOW })).toEqual({ kind: 'ok', key_version: 2, key_id: 1 });
    await push(store, ana, { deviceId: devA, batchId: 'b1', keyId: 1, entries: entries(3), now: NOW });
    expect(await beginRotation(store, ana, { deviceId: devA, newEncryptedKey: 'E2', expectedVersion: 1, nowMs: T0 })).toEqual({ kind: 'version_mismatch', current: 2 });
    const begun = await beginRotation(store, ana, { deviceId: devA, newEncryptedKey: 'E2', expectedVersion: 2, nowMs: T0 });
    expect(begun).toMatchObject({ kind: 'ok', target_seq: 3, new_key_id: 2, resumed: false });
    if (begun.kind !== 'ok') throw new Error('not begun');
    const id = begun.rotation_id;
    expect(await beginRotation(store, ana, { deviceId: devA, newEncryptedKey: 'E2', expectedVersion: 2, nowMs: T0 })).toEqual({ ...begun, resumed: true });
    expect(await beginRotation(store, ana, { deviceId: devB, newEncryptedKey: 'E2', expectedVersion: 2, nowMs: T0 })).toMatchObject({ kind: 'in_progress', same_device: false });
    expect(await beginRotation(store, ana, { deviceId: devA, newEncryptedKey: 'E3', expectedVersion: 2, nowMs: T0 })).toMatchObject({ kind: 'in_progress', same_device: true });
    expect(await putKey(store, ana, { encryptedKey: 'E1c', expectedVersion: 2, now: NOW })).toEqual({ kind: 'rotating' });
    expect((await getKey(store, ana))?.pending_key).toEqual({ encrypted_key: 'E2', key_id: 2, rotation_id: id, target_seq: 3 });
    // Another user cannot touch it by its id.
    expect(await rotationEntries(store, bo, { rotationId: id, afterSeq: 0, limit: 10, nowMs: T0 })).toEqual({ kind: 'not_found' });
    expect(await rotationBatch(store, bo, { rotationId: id, entries: [{ seq: 1, data: 'X' }], nowMs: T0 })).toEqual({ kind: 'not_found' });
    expect(await completeRotation(store, bo, { rotationId: id, nowMs: T0 })).toEqual({ kind: 'not_found' });

    // Pushes during the rotation use the new key and are not part of it.
    expect(await push(store, ana, { deviceId: devB, batchId: 'old', keyId: 1, entries: entries(1), now: NOW })).toEqual({ kind: 'wrong_key', expected: 2 });
    expect(await push(store, ana, { deviceId: devB, batchId: 'new', keyId: 2, entries: entries(1, 'n'), now: NOW })).toMatchObject({ cursor: 4 });

    const page = await rotationEntries(store, ana, { rotationId: id, afterSeq: 0, limit: 2, nowMs: T0 });
    expect(page).toMatchObject({ kind: 'ok', has_more: true, remaining: 3 });
    if (page.kind !== 'ok') throw new Error('no page');
    expect(page.entries.map((e) => e.seq)).toEqual([1, 2]);
    expect(await completeRotation(store, ana, { rotationId: id, nowMs: T0 })).toEqual({ kind: 'remaining', remaining: 3 });
    // A batch naming an entry outside the rotation changes nothing.
    expect(await rotationBatch(store, ana, { rotationId: id, entries: [{ seq: 1, data: 'R1' }, { seq: 4, data: 'R4' }], nowMs: T0 })).toEqual({ kind: 'not_in_rotation', seq: 4 });
    expect(await rotationBatch(store, ana, { rotationId: id, entries: [{ seq: 1, data: 'R1' }, { seq: 99, data: 'R' }], nowMs: T0 })).toEqual({ kind: 'not_in_rotation', seq: 99 });
    expect((await pull(store, ana, { cursor: 0, limit: 1 })).entries[0]).toMatchObject({ key_id: 1, data: { c: 'x0' } });
    expect(await rotationBatch(store, ana, { rotationId: 'other', entries: [{ seq: 1, data: 'R1' }], nowMs: T0 })).toEqual({ kind: 'not_found' });
    expect(await rotationBatch(store, ana, { rotationId: id, entries: [{ seq: 1, data: 'R1' }, { seq: 2, data: 'R2' }], nowMs: T0 })).toEqual({ kind: 'ok', updated: 2, remaining: 1 });
    // A retried batch is harmless.
    expect(await rotationBatch(store, ana, { rotationId: id, entries: [{ seq: 2, data: 'R2' }], nowMs: T0 })).toEqual({ kind: 'ok', updated: 1, remaining: 1 });
    const rest = await rotationEntries(store, ana, { rotationId: id, afterSeq: 0, limit: 10, nowMs: T0 });
    expect(rest.kind === 'ok' && rest.entries.map((e) => e.seq)).toEqual([3]);
    await rotationBatch(store, ana, { rotationId: id, entries: [{ seq: 3, data: 'R3' }], nowMs: T0 });
    expect(await completeRotation(store, ana, { rotationId: id, nowMs: T0 })).toEqual({ kind: 'completed', key_version: 3, key_id: 2, already: false });
    expect(await completeRotation(store, ana, { rotationId: id, nowMs: T0 })).toMatchObject({ kind: 'completed', already: true });
    expect(await getKey(store, ana)).toEqual({ encrypted_key: 'E2', key_version: 3, key_id: 2, pending_key: null, retired_keys: [] });
    expect((await pull(store, ana, { cursor: 0, limit: 10 })).entries.map((e) => [e.key_id, e.data])).toEqual([
      [2, 'R1'],
      [2, 'R2'],
      [2, 'R3'],
      [2, { c: 'n0' }],
    ]);
  });

  it('cancels only a rotation idle at or before the given time; keeps the envelope its entries need', async () => {
    await putKey(store, ana, { encryptedKey: 'E1', expectedVersion: 0, now: NOW });
    await push(store, ana, { deviceId: devA, batchId: 'b1', keyId: 1, entries: entries(2), now: NOW });
    const begun = await beginRotation(store, ana, { deviceId: devA, newEncryptedKey: 'E2', expectedVersion: 1, nowMs: T0 });
    if (begun.kind !== 'ok') throw new Error('not begun');
    await rotationBatch(store, ana, { rotationId: begun.rotation_id, entries: [{ seq: 1, data: 'R1' }], nowMs: T0 + 1000 });
    expect(await cancelStaleRotation(store, ana, { idleSinceMs: T0 + 999, nowMs: T0 + 2000 })).toBe(false);
    expect(await cancelStaleRotation(store, ana, { idleSinceMs: T0 + 1000, nowMs: T0 + 2000 })).toBe(true);
    expect(await cancelStaleRotation(store, ana, { idleSinceMs: T0 + 1000, nowMs: T0 + 2000 })).toBe(false);
    expect(await getKey(store, ana)).toEqual({ encrypted_key: 'E1', key_version: 1, key_id: 1, pending_key: null, retired_keys: [{ encrypted_key: 'E2', key_id: 2 }] });
    // Back to the old key for pushes; a new rotation gets a fresh key id and re-seals both kinds.
    expect(await push(store, ana, { deviceId: devA, batchId: 'b2', keyId: 1, entries: entries(1, 'p'), now: NOW })).toMatchObject({ cursor: 3 });
    const again = await beginRotation(store, ana, { deviceId: devB, newEncryptedKey: 'E3', expectedVersion: 1, nowMs: T0 });
    expect(again).toMatchObject({ kind: 'ok', new_key_id: 3, target_seq: 3 });
    if (again.kind !== 'ok') throw new Error('not begun');
    const page = await rotationEntries(store, ana, { rotationId: again.rotation_id, afterSeq: 0, limit: 10, nowMs: T0 });
    expect(page.kind === 'ok' && page.entries.map((e) => [e.seq, e.key_id])).toEqual([
      [1, 2],
      [2, 1],
      [3, 1],
    ]);
    await rotationBatch(store, ana, { rotationId: again.rotation_id, entries: [1, 2, 3].map((seq) => ({ seq, data: 'S' })), nowMs: T0 });
    expect(await completeRotation(store, ana, { rotationId: again.rotation_id, nowMs: T0 })).toMatchObject({ kind: 'completed', key_id: 3, key_version: 2 });
    expect((await getKey(store, ana))?.retired_keys).toEqual([]);
  });

  it('begin needs a stored key and a registered device', async () => {
    expect(await beginRotation(store, ana, { deviceId: devA, newEncryptedKey: 'E2', expectedVersion: 0, nowMs: T0 })).toEqual({ kind: 'no_key' });
    await putKey(store, ana, { encryptedKey: 'E1', expectedVersion: 0, now: NOW });
    expect(await beginRotation(store, ana, { deviceId: 'nope', newEncryptedKey: 'E2', expectedVersion: 1, nowMs: T0 })).toEqual({ kind: 'unknown_device' });
  });

  it('the over-cap check reads usage inside the push transaction and stores nothing when refused', async () => {
    await putKey(store, ana, { encryptedKey: 'E1', expectedVersion: 0, now: NOW });
    const seen: number[] = [];
    const admit = (u: { changelog_bytes: number }, added: number): boolean => {
      seen.push(u.changelog_bytes);
      return u.changelog_bytes + added <= 200;
    };
    const first = await push(store, ana, { deviceId: devA, batchId: 'b1', keyId: 1, entries: entries(2), now: NOW, admit });
    expect(first).toMatchObject({ kind: 'ok', cursor: 2 });
    const refused = await push(store, ana, { deviceId: devA, batchId: 'b2', keyId: 1, entries: entries(5), now: NOW, admit });
    expect(refused).toMatchObject({ kind: 'over_cap' });
    expect(seen[0]).toBe(0);
    expect(seen[1]).toBeGreaterThan(0);
    expect(await syncCounts(store, ana)).toMatchObject({ cursor: 2, entry_count: 2 });
    expect((await store.usage(ana)).changelog_bytes).toBe(seen[1]);
  });

  it('counts re-sealed bytes in place of the old (the byte length of the stored text, multi-byte too)', async () => {
    await putKey(store, ana, { encryptedKey: 'E1', expectedVersion: 0, now: NOW });
    await push(store, ana, { deviceId: devA, batchId: 'b1', keyId: 1, entries: [{ table: 't', op: 'insert', row_id: 'r', timestamp: NOW, data: 'ab' }], now: NOW });
    const before = (await store.usage(ana)).changelog_bytes;
    const begun = await beginRotation(store, ana, { deviceId: devA, newEncryptedKey: 'E2', expectedVersion: 1, nowMs: T0 });
    if (begun.kind !== 'ok') throw new Error('not begun');
    await rotationBatch(store, ana, { rotationId: begun.rotation_id, entries: [{ seq: 1, data: 'ééé' }], nowMs: T0 });
    // '"ab"' is 4 bytes, '"ééé"' 8.
    expect((await store.usage(ana)).changelog_bytes).toBe(before + 4);
  });
});

describe('SqlSyncStore on PostgreSQL, two instances on one database', () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of closers.splice(0).reverse()) await c().catch(() => undefined);
  });

  /** Two stores, each on its own pool, as two marketplace instances have. */
  async function twoInstances(): Promise<[SqlSyncStore, SqlSyncStore]> {
    const url = await freshDatabaseUrl();
    const one = await PgDatabase.open(url);
    closers.push(() => one.close());
    const two = await PgDatabase.open(url);
    closers.push(() => two.close());
    return [await SqlSyncStore.open(one), await SqlSyncStore.open(two)];
  }

  it('20 concurrent pushes across both get distinct, gap-free sequence numbers', async () => {
    const [a, b] = await twoInstances();
    const dev = (await registerDevice(a, ana, { name: 'laptop', now: NOW })).id;
    await putKey(b, ana, { encryptedKey: 'E1', expectedVersion: 0, now: NOW });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => push(i % 2 ? a : b, ana, { deviceId: dev, batchId: `b${i}`, keyId: 1, entries: entries(1 + (i % 3), `p${i}-`), now: NOW })),
    );
    const total = results.reduce((n, r) => n + (r.kind === 'ok' ? r.accepted : 0), 0);
    expect(results.every((r) => r.kind === 'ok' && !r.duplicate)).toBe(true);
    const seqs = (await pull(a, ana, { cursor: 0, limit: 1000 })).entries.map((e) => e.seq);
    expect(seqs).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    // Each batch's entries are contiguous and end at its cursor.
    const cursors = results.map((r) => (r.kind === 'ok' ? r.cursor : -1)).sort((x, y) => x - y);
    expect(new Set(cursors).size).toBe(20);
    expect(cursors[19]).toBe(total);
  });

  it('concurrent rotation begins from two devices on two instances: one wins, the other is refused', async () => {
    const [a, b] = await twoInstances();
    const d1 = (await registerDevice(a, ana, { name: 'laptop', now: NOW })).id;
    const d2 = (await registerDevice(b, ana, { name: 'phone', now: NOW })).id;
    await putKey(a, ana, { encryptedKey: 'E1', expectedVersion: 0, now: NOW });
    for (let round = 0; round < 5; round++) {
      const [r1, r2] = await Promise.all([
        beginRotation(a, ana, { deviceId: d1, newEncryptedKey: `K1-${round}`, expectedVersion: 1, nowMs: T0 }),
        beginRotation(b, ana, { deviceId: d2, newEncryptedKey: `K2-${round}`, expectedVersion: 1, nowMs: T0 }),
      ]);
      const kinds = [r1.kind, r2.kind].sort();
      expect(kinds).toEqual(['in_progress', 'ok']);
      // Cancel it (stale by the clock given) for the next round.
      expect(await cancelStaleRotation(round % 2 ? a : b, ana, { idleSinceMs: T0, nowMs: T0 + 1 })).toBe(true);
    }
  });

  it('a rotation begun on one instance, batched on the other, completed on the first', async () => {
    const [a, b] = await twoInstances();
    const dev = (await registerDevice(a, ana, { name: 'laptop', now: NOW })).id;
    await putKey(a, ana, { encryptedKey: 'E1', expectedVersion: 0, now: NOW });
    await push(b, ana, { deviceId: dev, batchId: 'b1', keyId: 1, entries: entries(3), now: NOW });
    const begun = await beginRotation(a, ana, { deviceId: dev, newEncryptedKey: 'E2', expectedVersion: 1, nowMs: T0 });
    if (begun.kind !== 'ok') throw new Error('not begun');
    const page = await rotationEntries(b, ana, { rotationId: begun.rotation_id, afterSeq: 0, limit: 10, nowMs: T0 });
    expect(page).toMatchObject({ kind: 'ok', remaining: 3 });
    expect(await rotationBatch(b, ana, { rotationId: begun.rotation_id, entries: [1, 2, 3].map((seq) => ({ seq, data: `R${seq}` })), nowMs: T0 })).toEqual({ kind: 'ok', updated: 3, remaining: 0 });
    expect(await completeRotation(a, ana, { rotationId: begun.rotation_id, nowMs: T0 })).toEqual({ kind: 'completed', key_version: 2, key_id: 2, already: false });
    expect(await getKey(b, ana)).toMatchObject({ encrypted_key: 'E2', key_version: 2, key_id: 2, pending_key: null });
  });
});

describeEngines('sync migration to fields_json', (open) => {
  it('writes fields_json for the entries stored before it as a push writes it, and pages them as the serializer does', async () => {
    const db = await open();
    await db.migrate('sync', { sqlite: SYNC_MIGRATIONS.sqlite.slice(0, -1), postgres: SYNC_MIGRATIONS.postgres.slice(0, -1) });
    const odd = 'quote " backslash \\ newline \n tab \t ctl \u0001\u001f del \u007f caf\u00e9 line sep \u2028 emoji \ud83d\ude00 </script>';
    const rows = [
      { device: 'dev-1', table: odd, op: 'update', row_id: odd, ts: NOW, data: JSON.stringify({ a: odd, n: [1, 2.5] }) },
      { device: null, table: 't', op: odd, row_id: 'r', ts: odd, data: null },
    ];
    for (const [i, r] of rows.entries()) {
      await db.run('INSERT INTO sync_entries (app_id, user_id, seq, key_id, device_id, tbl, op, row_id, ts, data) VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?)', [ana.appId, ana.userId, i + 1, r.device, r.table, r.op, r.row_id, r.ts, r.data]);
    }
    const store = await SqlSyncStore.open(db);
    expect(await db.column('SELECT fields_json FROM sync_entries ORDER BY seq')).toEqual(rows.map((r) => entryFieldsJson(r.device, { table: r.table, op: r.op, row_id: r.row_id, timestamp: r.ts })));
    const page = await store.storedPage(ana, { cursor: 0, limit: 10 });
    expect(pullAnswer(page)).toBe(fastJsonStringify(PullResponseSchema as object)(parsedPage(page)));
    expect(parsedPage(page).entries.map((e) => [e.device_id, e.table, e.op, e.row_id, e.timestamp])).toEqual(rows.map((r) => [r.device, r.table, r.op, r.row_id, r.ts]));
  });

  it('pages an entry an instance of the earlier version inserted after the migration (fields_json NULL) as the serializer does', async () => {
    const db = await open();
    const store = await SqlSyncStore.open(db);
    const odd = 'quote " backslash \\ ctl \u0001 line sep \u2028 emoji \ud83d\ude00';
    // This version's row, then the earlier version's, whose INSERT names ten columns: fields_json stays NULL.
    await db.run("INSERT INTO sync_entries (app_id, user_id, seq, key_id, device_id, tbl, op, row_id, ts, data, fields_json) VALUES (?, ?, 1, 1, NULL, 'notes', 'insert', 'a', ?, '{\"x\":1}', ?)", [
      ana.appId,
      ana.userId,
      NOW,
      entryFieldsJson(null, { table: 'notes', op: 'insert', row_id: 'a', timestamp: NOW }),
    ]);
    await db.run('INSERT INTO sync_entries (app_id, user_id, seq, key_id, device_id, tbl, op, row_id, ts, data) VALUES (?, ?, 2, 1, ?, ?, ?, ?, ?, ?)', [ana.appId, ana.userId, odd, odd, 'update', odd, NOW, JSON.stringify({ s: odd })]);
    const page = await store.storedPage(ana, { cursor: 0, limit: 10 });
    expect(pullAnswer(page)).toBe(fastJsonStringify(PullResponseSchema as object)(parsedPage(page)));
    expect(parsedPage(page).entries.map((e) => [e.seq, e.device_id, e.table, e.row_id, e.data])).toEqual([
      [1, null, 'notes', 'a', { x: 1 }],
      [2, odd, odd, odd, { s: odd }],
    ]);
  });
});
