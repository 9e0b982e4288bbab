// Two marketplace instances on one PostgreSQL database (and one data dir, so one sync secret):
// a token of one works on the other, a key rotation moves between them, concurrent pushes
// through both get distinct gap-free sequence numbers, and concurrent rotation begins from two
// devices on two instances let exactly one win (the other 409).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshDatabaseUrl } from '../../helpers/pg.js';
import { startSyncServer, type SyncServer } from '../../helpers/sync-server.js';

const HOUR = 3600_000;
let a: SyncServer;
let b: SyncServer;
let token: string;
let apiKey: string;
let laptop: string;
let phone: string;

const entry = (row: string) => ({ table: 'notes', op: 'insert', row_id: row, timestamp: '2026-03-01T12:00:00Z', data: `sealed-${row}` });
const call = <T = Record<string, unknown>>(s: SyncServer, method: string, path: string, body?: unknown) => s.call<T>(method, `/api/v1/sync${path}`, { token, body });

beforeEach(async () => {
  const databaseUrl = await freshDatabaseUrl();
  a = await startSyncServer({ databaseUrl });
  b = await startSyncServer({ databaseUrl, dataDir: a.dataDir });
  apiKey = (await a.createApp('Notes')).apiKey;
  await b.addUser('ana', 'ana@example.com', 'pw-ana-long');
  token = await a.signIn(apiKey, 'ana@example.com', 'pw-ana-long');
  laptop = (await call<{ id: string }>(a, 'POST', '/devices', { name: 'laptop' })).body.id;
  phone = (await call<{ id: string }>(b, 'POST', '/devices', { name: 'phone' })).body.id;
  expect((await call(b, 'PUT', '/keys', { encrypted_key: 'OLD', expected_key_version: 0 })).status).toBe(204);
});
afterEach(async () => {
  // b runs on a's data dir: it goes first, a removes the dir.
  await b.close();
  await a.close();
});

describe('two sync instances on one PostgreSQL database', () => {
  it('a rotation begun on one instance is listed and batched on the other and completed on the first', async () => {
    expect((await call(a, 'POST', '/push', { device_id: laptop, batch_id: 'seed', key_id: 1, entries: ['r1', 'r2', 'r3'].map(entry) })).body).toMatchObject({ cursor: 3 });
    const begun = await call<{ rotation_id: string; target_seq: number; new_key_id: number }>(a, 'POST', '/keys/rotate', { device_id: laptop, new_encrypted_key: 'NEW', expected_key_version: 1 });
    expect(begun).toMatchObject({ status: 200, body: { target_seq: 3, new_key_id: 2 } });
    const id = begun.body.rotation_id;
    expect((await call(b, 'GET', '/keys')).body).toMatchObject({ pending_key: { rotation_id: id, key_id: 2 } });
    const page = await call<{ entries: { seq: number }[]; remaining: number }>(b, 'POST', '/keys/rotate/entries', { rotation_id: id });
    expect(page.body.entries.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect((await call(a, 'POST', '/keys/rotate/complete', { rotation_id: id })).status).toBe(409);
    const batch = await call(b, 'POST', '/keys/rotate/batch', { rotation_id: id, entries: page.body.entries.map((e) => ({ seq: e.seq, data: `resealed-${e.seq}` })) });
    expect(batch.body).toEqual({ updated: 3, remaining: 0 });
    expect((await call(a, 'POST', '/keys/rotate/complete', { rotation_id: id })).status).toBe(204);
    expect((await call(b, 'GET', '/keys')).body).toMatchObject({ encrypted_key: 'NEW', key_version: 2, key_id: 2, pending_key: null });
    expect((await call<{ entries: { key_id: number; data: unknown }[] }>(b, 'POST', '/pull', { cursor: 0 })).body.entries.map((e) => [e.key_id, e.data])).toEqual([
      [2, 'resealed-1'],
      [2, 'resealed-2'],
      [2, 'resealed-3'],
    ]);
  });

  it('20 concurrent pushes across both instances get distinct, gap-free sequence numbers', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call<{ cursor: number; accepted: number; duplicate: boolean }>(i % 2 ? a : b, 'POST', '/push', {
          device_id: i % 3 ? laptop : phone,
          batch_id: `batch-${i}`,
          key_id: 1,
          entries: Array.from({ length: 1 + (i % 4) }, (_, j) => entry(`p${i}-${j}`)),
        }),
      ),
    );
    for (const r of answers) expect(r.status).toBe(200);
    const total = answers.reduce((n, r) => n + r.body.accepted, 0);
    expect(new Set(answers.map((r) => r.body.cursor)).size).toBe(20);
    for (const s of [a, b]) {
      const pulled = await call<{ entries: { seq: number; row_id: string }[] }>(s, 'POST', '/pull', { cursor: 0, limit: 1000 });
      expect(pulled.body.entries.map((e) => e.seq)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    }
    // Each push's entries are contiguous and end at the cursor it was answered.
    const pulled = (await call<{ entries: { seq: number; row_id: string }[] }>(a, 'POST', '/pull', { cursor: 0, limit: 1000 })).body.entries;
    answers.forEach((r, i) => {
      const mine = pulled.filter((e) => e.row_id.startsWith(`p${i}-`)).map((e) => e.seq);
      expect(mine).toEqual(Array.from({ length: r.body.accepted }, (_, j) => r.body.cursor - r.body.accepted + 1 + j));
    });
    // batch-1 went through a; retried through b it is answered as the first time, storing nothing.
    const again = await call(b, 'POST', '/push', { device_id: laptop, batch_id: 'batch-1', key_id: 1, entries: [entry('x')] });
    expect(again.body).toEqual({ ...answers[1]!.body, duplicate: true });
    expect((await call(a, 'GET', '/status')).body).toMatchObject({ cursor: total, entry_count: total });
  });

  it('concurrent rotation begins from two devices on two instances: one wins, the other gets 409', async () => {
    for (let round = 0; round < 3; round++) {
      const [one, two] = await Promise.all([
        call(a, 'POST', '/keys/rotate', { device_id: laptop, new_encrypted_key: `L${round}`, expected_key_version: 1 }),
        call(b, 'POST', '/keys/rotate', { device_id: phone, new_encrypted_key: `P${round}`, expected_key_version: 1 }),
      ]);
      expect([one.status, two.status].sort()).toEqual([200, 409]);
      const loser = one.status === 409 ? one : two;
      expect(loser.body.error).toMatch(/in progress on another device/);
      const winner = one.status === 200 ? laptop : phone;
      expect((await call(b, 'GET', '/keys')).body).toMatchObject({ pending_key: { encrypted_key: `${winner === laptop ? 'L' : 'P'}${round}` } });
      // Stale on the service clocks of both instances: either may cancel it.
      a.clock.advance(25 * HOUR);
      b.clock.advance(25 * HOUR);
      token = await b.signIn(apiKey, 'ana@example.com', 'pw-ana-long');
      expect((await call(round % 2 ? a : b, 'DELETE', '/keys/rotate')).status).toBe(204);
    }
  });
});
