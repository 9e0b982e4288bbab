// Key rotation, row by row of the spec's table: begin (200 / 409 version mismatch / resume by the
// same device / 409 for another device), rotation_entries paged up to target_seq, rotation_batch
// for that rotation's entries only and all or none, complete (409 while entries remain, then the
// new key current), cancel (204 only after 24 idle hours on the service clock, 404 otherwise).
import { beforeEach, afterEach, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { openEntryData, sealEntryData } from '../../../src/crypto/sync-entry.js';
import type { StoredChangeEntry } from '../../../src/schemas/sync.js';
import { startSyncServer, type SyncServer } from '../../helpers/sync-server.js';

const HOUR = 3600_000;
let s: SyncServer;
let apiKey: string;
let token: string;
let laptop: string;
let phone: string;
const oldKey = randomBytes(32);
const newKey = randomBytes(32);

interface Begun {
  rotation_id: string;
  target_seq: number;
  new_key_id: number;
}
interface EntriesPage {
  entries: StoredChangeEntry[];
  has_more: boolean;
  remaining: number;
}

async function signIn(): Promise<void> {
  token = await s.signIn(apiKey, 'ana@example.com', 'pw-ana');
}
function sealed(row: string, keyId: number, key: Buffer) {
  return { table: 'notes', op: 'insert', row_id: row, timestamp: '2026-03-01T12:00:00Z', data: sealEntryData(key, { table: 'notes', op: 'insert', row_id: row, key_id: keyId }, { text: row }) };
}
const call = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) => s.call<T>(method, `/api/v1/sync${path}`, { token, body });
const begin = (device: string, envelope: string, version: number) => call<Begun>('POST', '/keys/rotate', { device_id: device, new_encrypted_key: envelope, expected_key_version: version });

beforeEach(async () => {
  s = await startSyncServer();
  apiKey = (await s.createApp('Notes')).apiKey;
  await s.addUser('ana', 'ana@example.com', 'pw-ana');
  await signIn();
  laptop = (await call<{ id: string }>('POST', '/devices', { name: 'laptop' })).body.id;
  phone = (await call<{ id: string }>('POST', '/devices', { name: 'phone' })).body.id;
  expect((await call('PUT', '/keys', { encrypted_key: 'OLD-ENVELOPE', expected_key_version: 0 })).status).toBe(204);
  const entries = Array.from({ length: 5 }, (_, i) => sealed(`r${i + 1}`, 1, oldKey));
  expect((await call('POST', '/push', { device_id: laptop, batch_id: 'seed', key_id: 1, entries })).body).toMatchObject({ cursor: 5 });
});
afterEach(async () => {
  await s.close();
});

describe('key rotation state machine', () => {
  it('no rotation: a version mismatch is 409; a match begins (pending_key shown); the same device resumes; another device gets 409', async () => {
    expect(await begin(laptop, 'NEW-ENVELOPE', 0)).toEqual({ status: 409, body: { error: 'key version mismatch: the stored version is 1, not 0' } });
    expect((await call('GET', '/keys')).body).toMatchObject({ pending_key: null });

    const b = await begin(laptop, 'NEW-ENVELOPE', 1);
    expect(b.status).toBe(200);
    expect(b.body).toEqual({ rotation_id: expect.stringMatching(/^[0-9a-f-]{36}$/) as string, target_seq: 5, new_key_id: 2 });
    expect((await call('GET', '/keys')).body).toEqual({
      encrypted_key: 'OLD-ENVELOPE',
      key_version: 1,
      key_id: 1,
      pending_key: { encrypted_key: 'NEW-ENVELOPE', key_id: 2, rotation_id: b.body.rotation_id, target_seq: 5 },
      retired_keys: [],
    });
    expect((await call('GET', '/status')).body).toMatchObject({ rotation_in_progress: true, key_version: 1, key_id: 1 });

    expect(await begin(laptop, 'NEW-ENVELOPE', 1)).toEqual(b);
    const other = await begin(phone, 'NEW-ENVELOPE', 1);
    expect(other.status).toBe(409);
    expect((other.body as unknown as { error: string }).error).toMatch(/another device/);
    expect((await begin(laptop, 'ANOTHER-ENVELOPE', 1)).status).toBe(409);
    expect((await begin(laptop, 'NEW-ENVELOPE', 2)).status).toBe(409);
    // The key cannot be re-wrapped under a running rotation.
    expect((await call('PUT', '/keys', { encrypted_key: 'X', expected_key_version: 1 })).status).toBe(409);
    expect((await begin('no-such-device', 'NEW-ENVELOPE', 1)).status).toBe(403);
  });

  it('re-seals page by page up to target_seq; pushes during the rotation use the new key; complete is 409 until none remain', async () => {
    const { body: rot } = await begin(laptop, 'NEW-ENVELOPE', 1);
    // Pushes during the rotation: the old key is refused, the new key is accepted and needs no re-sealing.
    expect((await call('POST', '/push', { device_id: phone, batch_id: 'late-old', key_id: 1, entries: [sealed('late', 1, oldKey)] })).status).toBe(409);
    expect((await call('POST', '/push', { device_id: phone, batch_id: 'late-new', key_id: 2, entries: [sealed('r6', 2, newKey)] })).body).toMatchObject({ cursor: 6 });

    const first = await call<EntriesPage>('POST', '/keys/rotate/entries', { rotation_id: rot.rotation_id, after_seq: 0, limit: 2 });
    expect(first.status).toBe(200);
    expect(first.body.entries.map((e) => [e.seq, e.key_id])).toEqual([
      [1, 1],
      [2, 1],
    ]);
    expect(first.body).toMatchObject({ has_more: true, remaining: 5 });
    expect(await call('POST', '/keys/rotate/complete', { rotation_id: rot.rotation_id })).toEqual({ status: 409, body: { error: '5 entries still need re-encryption' } });

    // A batch with an entry outside the rotation (seq 6, pushed with the new key) changes nothing.
    const reseal = (e: StoredChangeEntry) => ({ seq: e.seq, data: sealEntryData(newKey, { table: e.table, op: e.op, row_id: e.row_id, key_id: 2 }, openEntryData(oldKey, { table: e.table, op: e.op, row_id: e.row_id, key_id: 1 }, e.data)) });
    const outside = await call('POST', '/keys/rotate/batch', { rotation_id: rot.rotation_id, entries: [...first.body.entries.map(reseal), { seq: 6, data: 'x' }] });
    expect(outside.status).toBe(409);
    expect(outside.body.error).toMatch(/entry 6 is not part of this rotation/);
    expect((await call<EntriesPage>('POST', '/keys/rotate/entries', { rotation_id: rot.rotation_id, after_seq: 0 })).body.remaining).toBe(5);
    expect((await call('POST', '/keys/rotate/batch', { rotation_id: 'not-this-one', entries: first.body.entries.map(reseal) })).status).toBe(404);

    let after = 0;
    let pages = 0;
    for (;;) {
      const page = await call<EntriesPage>('POST', '/keys/rotate/entries', { rotation_id: rot.rotation_id, after_seq: after, limit: 2 });
      if (page.body.entries.length === 0) break;
      expect(page.body.entries.every((e) => e.seq <= rot.target_seq && e.key_id === 1)).toBe(true);
      const done = await call<{ updated: number; remaining: number }>('POST', '/keys/rotate/batch', { rotation_id: rot.rotation_id, entries: page.body.entries.map(reseal) });
      expect(done.body.updated).toBe(page.body.entries.length);
      after = page.body.entries[page.body.entries.length - 1]!.seq;
      pages++;
      if (!page.body.has_more) break;
    }
    expect(pages).toBe(3);
    const left = await call<EntriesPage>('POST', '/keys/rotate/entries', { rotation_id: rot.rotation_id });
    expect(left.body).toEqual({ entries: [], has_more: false, remaining: 0 });

    expect(await call('POST', '/keys/rotate/complete', { rotation_id: rot.rotation_id })).toEqual({ status: 204, body: null });
    // Completion: the new envelope is the stored one, key_id is the rotation's new_key_id, key_version + 1.
    expect((await call('GET', '/keys')).body).toEqual({ encrypted_key: 'NEW-ENVELOPE', key_version: 2, key_id: 2, pending_key: null, retired_keys: [] });
    // A repeated complete (a lost answer) is still 204; the rotation's other calls are 404 now.
    expect((await call('POST', '/keys/rotate/complete', { rotation_id: rot.rotation_id })).status).toBe(204);
    expect((await call('POST', '/keys/rotate/entries', { rotation_id: rot.rotation_id })).status).toBe(404);
    expect((await call('POST', '/keys/rotate/complete', { rotation_id: '00000000-0000-0000-0000-000000000000' })).status).toBe(404);

    const all = (await call<{ entries: StoredChangeEntry[] }>('POST', '/pull', { cursor: 0 })).body.entries;
    expect(all.map((e) => e.key_id)).toEqual([2, 2, 2, 2, 2, 2]);
    expect(all.map((e) => openEntryData(newKey, { table: e.table, op: e.op, row_id: e.row_id, key_id: 2 }, e.data))).toEqual(['r1', 'r2', 'r3', 'r4', 'r5', 'r6'].map((text) => ({ text })));
    // New pushes now use key 2 only; a next rotation starts from the new version.
    expect((await call('POST', '/push', { device_id: phone, batch_id: 'after', key_id: 1, entries: [sealed('z', 1, oldKey)] })).status).toBe(409);
    expect((await begin(phone, 'THIRD', 2)).body).toMatchObject({ target_seq: 6, new_key_id: 3 });
  });

  it('cancel: 404 without a rotation and for one not idle over 24 hours; 204 after; retired envelope kept for its entries', async () => {
    expect(await call('DELETE', '/keys/rotate')).toEqual({ status: 404, body: { error: 'no stale rotation: a rotation can be cancelled after 24 hours without activity' } });
    const { body: rot } = await begin(laptop, 'NEW-ENVELOPE', 1);
    const page = await call<EntriesPage>('POST', '/keys/rotate/entries', { rotation_id: rot.rotation_id, limit: 1 });
    await call('POST', '/keys/rotate/batch', { rotation_id: rot.rotation_id, entries: [{ seq: page.body.entries[0]!.seq, data: 'RESEALED' }] });

    // Activity resets the idle time: 23 hours, a resume, then exactly 24 hours is still not stale.
    s.clock.advance(23 * HOUR);
    await signIn();
    expect((await call('DELETE', '/keys/rotate')).status).toBe(404);
    expect((await begin(laptop, 'NEW-ENVELOPE', 1)).status).toBe(200);
    s.clock.advance(24 * HOUR);
    await signIn();
    expect((await call('DELETE', '/keys/rotate')).status).toBe(404);
    expect((await call('GET', '/keys')).body).toMatchObject({ pending_key: { rotation_id: rot.rotation_id } });
    s.clock.advance(1);
    expect(await call('DELETE', '/keys/rotate')).toEqual({ status: 204, body: null });
    expect((await call('DELETE', '/keys/rotate')).status).toBe(404);

    // The old key stays current; entry 1, re-sealed under the abandoned key, keeps its envelope.
    expect((await call('GET', '/keys')).body).toEqual({ encrypted_key: 'OLD-ENVELOPE', key_version: 1, key_id: 1, pending_key: null, retired_keys: [{ encrypted_key: 'NEW-ENVELOPE', key_id: 2 }] });
    expect((await call('POST', '/keys/rotate/complete', { rotation_id: rot.rotation_id })).status).toBe(404);
    // Another device may now rotate; the new key id is never a used one, and entry 1 is listed again.
    const next = await begin(phone, 'THIRD', 1);
    expect(next.body).toMatchObject({ new_key_id: 3, target_seq: 5 });
    const again = await call<EntriesPage>('POST', '/keys/rotate/entries', { rotation_id: next.body.rotation_id });
    expect(again.body.entries.map((e) => [e.seq, e.key_id])).toEqual([
      [1, 2],
      [2, 1],
      [3, 1],
      [4, 1],
      [5, 1],
    ]);
  });

  it('a stale rotation of a deleted device can only be cancelled', async () => {
    const { body: rot } = await begin(phone, 'NEW-ENVELOPE', 1);
    expect((await call('DELETE', `/devices/${phone}`)).status).toBe(204);
    expect((await begin(laptop, 'NEW-ENVELOPE', 1)).status).toBe(409);
    s.clock.advance(25 * HOUR);
    await signIn();
    expect((await call('DELETE', '/keys/rotate')).status).toBe(204);
    // Nothing was re-sealed or pushed under its key: no envelope needs keeping.
    expect((await call('GET', '/keys')).body).toMatchObject({ retired_keys: [], pending_key: null });
    expect((await begin(laptop, 'NEW-ENVELOPE-2', 1)).body).toMatchObject({ new_key_id: 3 });
    expect(rot.new_key_id).toBe(2);
  });
});
