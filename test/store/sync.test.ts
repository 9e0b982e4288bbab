// The SQLite sync store: apps by key hash, atomic pushes with per-(user, app) sequence numbers and
// batch idempotency, paged pulls, devices, key versions and the rotation state machine.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { openDatabase, type Db } from '../../src/store/sqlite.js';
import { SqliteSyncStore, type Owner } from '../../src/store/sync.js';
import type { ChangeEntry } from '../../src/schemas/sync.js';
import { tempDir } from '../helpers/tmp.js';

const NOW = '2026-01-01T00:00:00.000Z';
const T0 = Date.parse(NOW);
const pricing = { min_charge_cents: 100, per_gb_tenths_of_cent_per_month: 50, annual_multiplier: 10, min_cap_bytes: 1, max_cap_bytes: 10, free_bytes: 5 };
const entries = (n: number, tag = 'x'): ChangeEntry[] => Array.from({ length: n }, (_, i) => ({ table: 't', op: 'insert', row_id: `${tag}${i}`, timestamp: NOW, data: { c: `${tag}${i}` } }));

let dir: ReturnType<typeof tempDir>;
let db: Db;
let store: SqliteSyncStore;
const ana: Owner = { appId: 'app1', userId: 'ana' };
const bo: Owner = { appId: 'app1', userId: 'bo' };
let devA: string;
let devB: string;

beforeEach(async () => {
  dir = tempDir('mkt-sync-store-');
  db = openDatabase(join(dir.path, 'm.db'));
  store = new SqliteSyncStore(db);
  devA = (await store.registerDevice(ana, { name: 'laptop', now: NOW })).id;
  devB = (await store.registerDevice(ana, { name: 'phone', now: NOW })).id;
  await store.registerDevice(bo, { name: 'laptop', now: NOW });
});
afterEach(() => {
  db.close();
  dir.remove();
});

describe('SqliteSyncStore', () => {
  it('finds apps by key hash and id; names are unique', async () => {
    const app = await store.createApp({ name: 'Notes', apiKeyHash: 'h1', pricing, now: NOW });
    expect(await store.appByKeyHash('h1')).toEqual(app);
    expect(await store.getApp(app.id)).toEqual(app);
    expect(await store.appByKeyHash('h2')).toBeUndefined();
    await expect(store.createApp({ name: 'notes', apiKeyHash: 'h3', pricing, now: NOW })).rejects.toThrow(/UNIQUE/);
    expect((await store.listApps()).map((a) => a.name)).toEqual(['Notes']);
  });

  it('push needs a stored key and the current key id, and a registered device of the owner', async () => {
    expect(await store.push(ana, { deviceId: devA, batchId: 'b', keyId: 1, entries: entries(1), now: NOW })).toEqual({ kind: 'wrong_key', expected: null });
    await store.putKey(ana, { encryptedKey: 'E1', expectedVersion: 0, now: NOW });
    expect(await store.push(ana, { deviceId: devA, batchId: 'b', keyId: 2, entries: entries(1), now: NOW })).toEqual({ kind: 'wrong_key', expected: 1 });
    const boDevice = (await store.listDevices(bo))[0]!.id;
    expect(await store.push(ana, { deviceId: boDevice, batchId: 'b', keyId: 1, entries: entries(1), now: NOW })).toEqual({ kind: 'unknown_device' });
    expect((await store.counts(ana)).entry_count).toBe(0);
  });

  it('numbers entries per (user, app) from 1, applies a retried batch once, pages pulls', async () => {
    await store.putKey(ana, { encryptedKey: 'E1', expectedVersion: 0, now: NOW });
    await store.putKey(bo, { encryptedKey: 'E1', expectedVersion: 0, now: NOW });
    const boDevice = (await store.listDevices(bo))[0]!.id;
    expect(await store.push(ana, { deviceId: devA, batchId: 'b1', keyId: 1, entries: entries(3), now: NOW })).toEqual({ kind: 'ok', cursor: 3, accepted: 3, duplicate: false });
    expect(await store.push(ana, { deviceId: devA, batchId: 'b1', keyId: 1, entries: entries(3), now: NOW })).toEqual({ kind: 'ok', cursor: 3, accepted: 3, duplicate: true });
    // The same batch id from another device is another batch.
    expect(await store.push(ana, { deviceId: devB, batchId: 'b1', keyId: 1, entries: entries(2, 'y'), now: NOW })).toMatchObject({ cursor: 5, duplicate: false });
    expect(await store.push(bo, { deviceId: boDevice, batchId: 'b1', keyId: 1, entries: entries(1), now: NOW })).toMatchObject({ cursor: 1 });
    const p1 = await store.pull(ana, { cursor: 0, limit: 2, now: NOW });
    expect(p1.entries.map((e) => e.seq)).toEqual([1, 2]);
    expect(p1).toMatchObject({ cursor: 2, has_more: true });
    expect(p1.entries[0]).toEqual({ seq: 1, key_id: 1, device_id: devA, table: 't', op: 'insert', row_id: 'x0', timestamp: NOW, data: { c: 'x0' } });
    const p2 = await store.pull(ana, { cursor: 2, limit: 3, now: NOW });
    expect(p2.entries.map((e) => e.row_id)).toEqual(['x2', 'y0', 'y1']);
    expect(p2).toMatchObject({ cursor: 5, has_more: false });
    expect(await store.pull(ana, { cursor: 5, limit: 3, now: NOW })).toEqual({ entries: [], cursor: 5, has_more: false });
    expect(await store.counts(ana)).toMatchObject({ cursor: 5, entry_count: 5, device_count: 2, key_version: 1, key_id: 1, rotation_in_progress: false });
  });

  it('a push is atomic: a failing entry leaves nothing behind', async () => {
    await store.putKey(ana, { encryptedKey: 'E1', expectedVersion: 0, now: NOW });
    const bad = [...entries(2), { table: 't', op: 'insert', row_id: 'z', timestamp: null as unknown as string }];
    await expect(store.push(ana, { deviceId: devA, batchId: 'b', keyId: 1, entries: bad, now: NOW })).rejects.toThrow(/NOT NULL/);
    expect((await store.counts(ana)).entry_count).toBe(0);
    expect(await store.push(ana, { deviceId: devA, batchId: 'b', keyId: 1, entries: entries(1), now: NOW })).toMatchObject({ cursor: 1, duplicate: false });
  });

  it('devices: same name updates, delete reports unknown ids', async () => {
    const again = await store.registerDevice(ana, { name: 'laptop', platform: 'linux', now: '2026-01-02T00:00:00.000Z' });
    expect(again).toMatchObject({ id: devA, platform: 'linux', created_at: NOW, last_seen_at: '2026-01-02T00:00:00.000Z' });
    expect((await store.listDevices(ana)).map((d) => d.name)).toEqual(['laptop', 'phone']);
    expect(await store.deleteDevice(bo, devA)).toBe(false);
    expect(await store.deleteDevice(ana, devA)).toBe(true);
    expect(await store.deleteDevice(ana, devA)).toBe(false);
  });

  it('keys: version checks; rotation re-seals old entries only, completes, and makes the new key current', async () => {
    expect(await store.putKey(ana, { encryptedKey: 'E1', expectedVersion: 1, now: NOW })).toEqual({ kind: 'version_mismatch', current: 0 });
    expect(await store.putKey(ana, { encryptedKey: 'E1', expectedVersion: 0, now: NOW })).toEqual({ kind: 'ok', key_version: 1, key_id: 1 });
    expect(await store.putKey(ana, { encryptedKey: 'E1b', expectedVersion: 1, now: NOW })).toEqual({ kind: 'ok', key_version: 2, key_id: 1 });
    await store.push(ana, { deviceId: devA, batchId: 'b1', keyId: 1, entries: entries(3), now: NOW });
    expect(await store.beginRotation(ana, { deviceId: devA, newEncryptedKey: 'E2', expectedVersion: 1, nowMs: T0 })).toEqual({ kind: 'version_mismatch', current: 2 });
    const begun = await store.beginRotation(ana, { deviceId: devA, newEncryptedKey: 'E2', expectedVersion: 2, nowMs: T0 });
    expect(begun).toMatchObject({ kind: 'ok', target_seq: 3, new_key_id: 2, resumed: false });
    if (begun.kind !== 'ok') throw new Error('not begun');
    const id = begun.rotation_id;
    expect(await store.beginRotation(ana, { deviceId: devA, newEncryptedKey: 'E2', expectedVersion: 2, nowMs: T0 })).toEqual({ ...begun, resumed: true });
    expect(await store.beginRotation(ana, { deviceId: devB, newEncryptedKey: 'E2', expectedVersion: 2, nowMs: T0 })).toMatchObject({ kind: 'in_progress', same_device: false });
    expect(await store.beginRotation(ana, { deviceId: devA, newEncryptedKey: 'E3', expectedVersion: 2, nowMs: T0 })).toMatchObject({ kind: 'in_progress', same_device: true });
    expect(await store.putKey(ana, { encryptedKey: 'E1c', expectedVersion: 2, now: NOW })).toEqual({ kind: 'rotating' });
    expect((await store.getKey(ana))?.pending_key).toEqual({ encrypted_key: 'E2', key_id: 2, rotation_id: id, target_seq: 3 });
    // Another user cannot touch it by its id.
    expect(await store.rotationEntries(bo, { rotationId: id, afterSeq: 0, limit: 10, nowMs: T0 })).toEqual({ kind: 'not_found' });
    expect(await store.rotationBatch(bo, { rotationId: id, entries: [{ seq: 1, data: 'X' }], nowMs: T0 })).toEqual({ kind: 'not_found' });
    expect(await store.completeRotation(bo, { rotationId: id, nowMs: T0 })).toEqual({ kind: 'not_found' });

    // Pushes during the rotation use the new key and are not part of it.
    expect(await store.push(ana, { deviceId: devB, batchId: 'old', keyId: 1, entries: entries(1), now: NOW })).toEqual({ kind: 'wrong_key', expected: 2 });
    expect(await store.push(ana, { deviceId: devB, batchId: 'new', keyId: 2, entries: entries(1, 'n'), now: NOW })).toMatchObject({ cursor: 4 });

    const page = await store.rotationEntries(ana, { rotationId: id, afterSeq: 0, limit: 2, nowMs: T0 });
    expect(page).toMatchObject({ kind: 'ok', has_more: true, remaining: 3 });
    if (page.kind !== 'ok') throw new Error('no page');
    expect(page.entries.map((e) => e.seq)).toEqual([1, 2]);
    expect(await store.completeRotation(ana, { rotationId: id, nowMs: T0 })).toEqual({ kind: 'remaining', remaining: 3 });
    // A batch naming an entry outside the rotation changes nothing.
    expect(await store.rotationBatch(ana, { rotationId: id, entries: [{ seq: 1, data: 'R1' }, { seq: 4, data: 'R4' }], nowMs: T0 })).toEqual({ kind: 'not_in_rotation', seq: 4 });
    expect(await store.rotationBatch(ana, { rotationId: id, entries: [{ seq: 1, data: 'R1' }, { seq: 99, data: 'R' }], nowMs: T0 })).toEqual({ kind: 'not_in_rotation', seq: 99 });
    expect((await store.pull(ana, { cursor: 0, limit: 1, now: NOW })).entries[0]).toMatchObject({ key_id: 1, data: { c: 'x0' } });
    expect(await store.rotationBatch(ana, { rotationId: 'other', entries: [{ seq: 1, data: 'R1' }], nowMs: T0 })).toEqual({ kind: 'not_found' });
    expect(await store.rotationBatch(ana, { rotationId: id, entries: [{ seq: 1, data: 'R1' }, { seq: 2, data: 'R2' }], nowMs: T0 })).toEqual({ kind: 'ok', updated: 2, remaining: 1 });
    // A retried batch is harmless.
    expect(await store.rotationBatch(ana, { rotationId: id, entries: [{ seq: 2, data: 'R2' }], nowMs: T0 })).toEqual({ kind: 'ok', updated: 1, remaining: 1 });
    const rest = await store.rotationEntries(ana, { rotationId: id, afterSeq: 0, limit: 10, nowMs: T0 });
    expect(rest.kind === 'ok' && rest.entries.map((e) => e.seq)).toEqual([3]);
    await store.rotationBatch(ana, { rotationId: id, entries: [{ seq: 3, data: 'R3' }], nowMs: T0 });
    expect(await store.completeRotation(ana, { rotationId: id, nowMs: T0 })).toEqual({ kind: 'completed', key_version: 3, key_id: 2, already: false });
    expect(await store.completeRotation(ana, { rotationId: id, nowMs: T0 })).toMatchObject({ kind: 'completed', already: true });
    expect(await store.getKey(ana)).toEqual({ encrypted_key: 'E2', key_version: 3, key_id: 2, pending_key: null, retired_keys: [] });
    expect((await store.pull(ana, { cursor: 0, limit: 10, now: NOW })).entries.map((e) => [e.key_id, e.data])).toEqual([
      [2, 'R1'],
      [2, 'R2'],
      [2, 'R3'],
      [2, { c: 'n0' }],
    ]);
  });

  it('cancels only a rotation idle at or before the given time; keeps the envelope its entries need', async () => {
    await store.putKey(ana, { encryptedKey: 'E1', expectedVersion: 0, now: NOW });
    await store.push(ana, { deviceId: devA, batchId: 'b1', keyId: 1, entries: entries(2), now: NOW });
    const begun = await store.beginRotation(ana, { deviceId: devA, newEncryptedKey: 'E2', expectedVersion: 1, nowMs: T0 });
    if (begun.kind !== 'ok') throw new Error('not begun');
    await store.rotationBatch(ana, { rotationId: begun.rotation_id, entries: [{ seq: 1, data: 'R1' }], nowMs: T0 + 1000 });
    expect(await store.cancelStaleRotation(ana, { idleSinceMs: T0 + 999, nowMs: T0 + 2000 })).toBe(false);
    expect(await store.cancelStaleRotation(ana, { idleSinceMs: T0 + 1000, nowMs: T0 + 2000 })).toBe(true);
    expect(await store.cancelStaleRotation(ana, { idleSinceMs: T0 + 1000, nowMs: T0 + 2000 })).toBe(false);
    expect(await store.getKey(ana)).toEqual({ encrypted_key: 'E1', key_version: 1, key_id: 1, pending_key: null, retired_keys: [{ encrypted_key: 'E2', key_id: 2 }] });
    // Back to the old key for pushes; a new rotation gets a fresh key id and re-seals both kinds.
    expect(await store.push(ana, { deviceId: devA, batchId: 'b2', keyId: 1, entries: entries(1, 'p'), now: NOW })).toMatchObject({ cursor: 3 });
    const again = await store.beginRotation(ana, { deviceId: devB, newEncryptedKey: 'E3', expectedVersion: 1, nowMs: T0 });
    expect(again).toMatchObject({ kind: 'ok', new_key_id: 3, target_seq: 3 });
    if (again.kind !== 'ok') throw new Error('not begun');
    const page = await store.rotationEntries(ana, { rotationId: again.rotation_id, afterSeq: 0, limit: 10, nowMs: T0 });
    expect(page.kind === 'ok' && page.entries.map((e) => [e.seq, e.key_id])).toEqual([
      [1, 2],
      [2, 1],
      [3, 1],
    ]);
    await store.rotationBatch(ana, { rotationId: again.rotation_id, entries: [1, 2, 3].map((seq) => ({ seq, data: 'S' })), nowMs: T0 });
    expect(await store.completeRotation(ana, { rotationId: again.rotation_id, nowMs: T0 })).toMatchObject({ kind: 'completed', key_id: 3, key_version: 2 });
    expect((await store.getKey(ana))?.retired_keys).toEqual([]);
  });

  it('begin needs a stored key and a registered device', async () => {
    expect(await store.beginRotation(ana, { deviceId: devA, newEncryptedKey: 'E2', expectedVersion: 0, nowMs: T0 })).toEqual({ kind: 'no_key' });
    await store.putKey(ana, { encryptedKey: 'E1', expectedVersion: 0, now: NOW });
    expect(await store.beginRotation(ana, { deviceId: 'nope', newEncryptedKey: 'E2', expectedVersion: 1, nowMs: T0 })).toEqual({ kind: 'unknown_device' });
  });
});
