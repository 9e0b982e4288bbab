// Changelog (issue 6 "Changelog, devices, status, account"): push appends atomically with a
// per-(user, app) monotonic seq and the key id, returns the new cursor, applies a retried batch
// once; pull pages after a cursor; the server holds and answers ciphertext only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { openEntryData, sealEntryData } from '../../../src/crypto/sync-entry.js';
import { MAX_PUSH_ENTRIES, type StoredChangeEntry } from '../../../src/schemas/sync.js';
import { marketplaceTestEngine } from '../../helpers/pg.js';
import { startSyncServer, type SyncServer } from '../../helpers/sync-server.js';

let s: SyncServer;
let notes: { id: string; apiKey: string };
let photos: { id: string; apiKey: string };
let ana: string; // token of ana in Notes
let bo: string; // token of bo in Notes
let anaPhotos: string;
let laptop: string;
let phone: string;
const TS = '2026-03-01T12:00:00.000Z';
const entry = (row: string, data: unknown = { v: row }) => ({ table: 'notes', op: 'insert', row_id: row, timestamp: TS, data });

async function setUp(token: string, devices: string[]): Promise<string[]> {
  expect((await s.call('PUT', '/api/v1/sync/keys', { token, body: { encrypted_key: 'ENVELOPE-1', expected_key_version: 0 } })).status).toBe(204);
  const ids: string[] = [];
  for (const name of devices) ids.push((await s.call<{ id: string }>('POST', '/api/v1/sync/devices', { token, body: { name } })).body.id);
  return ids;
}
const push = (token: string, body: Record<string, unknown>) => s.call<Record<string, unknown>>('POST', '/api/v1/sync/push', { token, body: { key_id: 1, ...body } });
const pull = (token: string, body: Record<string, unknown>) => s.call<{ entries: StoredChangeEntry[]; cursor: number; has_more: boolean }>('POST', '/api/v1/sync/pull', { token, body });

beforeAll(async () => {
  s = await startSyncServer();
  notes = await s.createApp('Notes');
  photos = await s.createApp('Photos');
  await s.addUser('ana', 'ana@example.com', 'pw-ana');
  await s.addUser('bo', 'bo@example.com', 'pw-bo');
  ana = await s.signIn(notes.apiKey, 'ana@example.com', 'pw-ana');
  bo = await s.signIn(notes.apiKey, 'bo@example.com', 'pw-bo');
  anaPhotos = await s.signIn(photos.apiKey, 'ana@example.com', 'pw-ana');
  [laptop, phone] = await setUp(ana, ['laptop', 'phone']);
  await setUp(bo, ['desk']);
  await setUp(anaPhotos, ['laptop']);
});
afterAll(async () => {
  await s.close();
});

describe('sync_push and sync_pull', () => {
  it('numbers entries per (user, app), records the key id and device, and answers the new cursor', async () => {
    expect(await push(ana, { device_id: laptop, batch_id: 'a1', entries: [entry('r1'), entry('r2')] })).toEqual({ status: 200, body: { cursor: 2, accepted: 2, duplicate: false } });
    expect((await push(ana, { device_id: phone, batch_id: 'a2', entries: [entry('r3')] })).body).toMatchObject({ cursor: 3 });
    // Other users and other apps count on their own.
    const boDesk = (await s.call<{ id: string }[]>('GET', '/api/v1/sync/devices', { token: bo })).body[0]!.id;
    expect((await push(bo, { device_id: boDesk, batch_id: 'a1', entries: [entry('b1')] })).body).toMatchObject({ cursor: 1 });
    const photoLaptop = (await s.call<{ id: string }[]>('GET', '/api/v1/sync/devices', { token: anaPhotos })).body[0]!.id;
    expect((await push(anaPhotos, { device_id: photoLaptop, batch_id: 'a1', entries: [entry('p1')] })).body).toMatchObject({ cursor: 1 });

    const all = await pull(ana, { cursor: 0 });
    expect(all.status).toBe(200);
    expect(all.body.has_more).toBe(false);
    expect(all.body.cursor).toBe(3);
    expect(all.body.entries).toEqual([
      { seq: 1, key_id: 1, device_id: laptop, table: 'notes', op: 'insert', row_id: 'r1', timestamp: TS, data: { v: 'r1' } },
      { seq: 2, key_id: 1, device_id: laptop, table: 'notes', op: 'insert', row_id: 'r2', timestamp: TS, data: { v: 'r2' } },
      { seq: 3, key_id: 1, device_id: phone, table: 'notes', op: 'insert', row_id: 'r3', timestamp: TS, data: { v: 'r3' } },
    ]);
    expect((await pull(bo, { cursor: 0 })).body.entries.map((e) => e.row_id)).toEqual(['b1']);
    expect((await pull(anaPhotos, { cursor: 0 })).body.entries.map((e) => e.row_id)).toEqual(['p1']);
  });

  it('applies a retried batch (same device, same batch id) once', async () => {
    const first = await push(ana, { device_id: laptop, batch_id: 'retry-me', entries: [entry('x1'), entry('x2')] });
    const again = await push(ana, { device_id: laptop, batch_id: 'retry-me', entries: [entry('x1'), entry('x2')] });
    expect(again.body).toEqual({ ...first.body, duplicate: true });
    const rows = (await pull(ana, { cursor: 0, limit: 1000 })).body.entries.filter((e) => e.row_id.startsWith('x'));
    expect(rows.map((e) => e.row_id)).toEqual(['x1', 'x2']);
    // Retries racing each other: one applies, the others answer duplicate.
    const racing = await Promise.all(Array.from({ length: 5 }, () => push(ana, { device_id: laptop, batch_id: 'race', entries: [entry('race')] })));
    expect(racing.filter((r) => r.body.duplicate === false)).toHaveLength(1);
    expect(new Set(racing.map((r) => r.body.cursor)).size).toBe(1);
    expect((await pull(ana, { cursor: 0, limit: 1000 })).body.entries.filter((e) => e.row_id === 'race')).toHaveLength(1);
    // The same batch id from another device is its own batch.
    expect((await push(ana, { device_id: phone, batch_id: 'retry-me', entries: [entry('x3')] })).body).toMatchObject({ accepted: 1, duplicate: false });
  });

  it('keeps concurrent pushes gap-free and unique', async () => {
    const before = (await s.call<{ cursor: number }>('GET', '/api/v1/sync/status', { token: ana })).body.cursor;
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => push(ana, { device_id: i % 2 ? laptop : phone, batch_id: `c${i}`, entries: [entry(`c${i}a`), entry(`c${i}b`)] })));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const cursors = answers.map((a) => a.body.cursor as number).sort((a, b) => a - b);
    expect(cursors).toEqual(Array.from({ length: 20 }, (_, i) => before + 2 * (i + 1)));
    const seqs = (await pull(ana, { cursor: before, limit: 1000 })).body.entries.map((e) => e.seq);
    expect(seqs).toEqual(Array.from({ length: 40 }, (_, i) => before + i + 1));
  });

  it('decides one owner\'s concurrent pushes in order, each on the state the ones before it left', async () => {
    // Arriving together, these are decided in groups (one transaction each): every answer must
    // still be its own push's, as if they had come one by one.
    const before = (await s.call<{ cursor: number }>('GET', '/api/v1/sync/status', { token: ana })).body.cursor;
    type Sent = { kind: 'new' | 'copy' | 'wrong_key' | 'unknown'; body: Record<string, unknown> };
    const sent: Sent[] = [];
    for (let i = 0; i < 24; i++) {
      sent.push({ kind: 'new', body: { device_id: i % 3 ? laptop : phone, batch_id: `g${i}`, entries: Array.from({ length: 1 + (i % 4) }, (_, j) => entry(`g${i}-${j}`)) } });
      if (i % 6 === 0) sent.push({ kind: 'copy', body: { device_id: laptop, batch_id: 'g-same', entries: [entry('g-same')] } });
      if (i % 8 === 0) sent.push({ kind: 'wrong_key', body: { device_id: phone, batch_id: `gw${i}`, key_id: 7, entries: [entry(`gw${i}`)] } });
      if (i % 12 === 0) sent.push({ kind: 'unknown', body: { device_id: 'no-such-device', batch_id: `gu${i}`, entries: [entry(`gu${i}`)] } });
    }
    const answers = await Promise.all(sent.map((p) => push(ana, p.body)));
    const entries = (await pull(ana, { cursor: before, limit: 1000 })).body.entries;
    const bySeq = new Map(entries.map((e) => [e.seq, e]));
    let stored = 0;
    for (const [i, p] of sent.entries()) {
      const a = answers[i]!;
      if (p.kind === 'wrong_key') expect(a.status).toBe(409);
      else if (p.kind === 'unknown') expect(a.status).toBe(403);
      else {
        expect(a.status).toBe(200);
        const rows = (p.body.entries as { row_id: string }[]).map((e) => e.row_id);
        expect(a.body.accepted).toBe(rows.length);
        // The push's own entries sit right before its cursor, from its own device.
        const cursor = a.body.cursor as number;
        const mine = rows.map((_, j) => bySeq.get(cursor - rows.length + 1 + j));
        expect(mine.map((e) => e?.row_id)).toEqual(rows);
        expect(mine.every((e) => e?.device_id === p.body.device_id)).toBe(true);
        if (a.body.duplicate === false) stored += rows.length;
      }
    }
    const copies = answers.filter((_, i) => sent[i]!.kind === 'copy');
    expect(copies.filter((a) => a.body.duplicate === false)).toHaveLength(1);
    expect(new Set(copies.map((a) => a.body.cursor)).size).toBe(1);
    // Gap-free: exactly the accepted entries, numbered on from the cursor before.
    expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: stored }, (_, i) => before + i + 1));
  });

  it('a push the database refuses fails alone, not the pushes decided with it', async () => {
    const good = Array.from({ length: 12 }, (_, i) => push(ana, { device_id: laptop, batch_id: `n${i}`, entries: [entry(`n${i}`)] }));
    // PostgreSQL cannot store a NUL in text: that push is a 400; SQLite stores it as given.
    const bad = push(ana, { device_id: laptop, batch_id: 'nul', entries: [entry('nul\u0000row')] });
    const answers = await Promise.all(good);
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200));
    expect((await bad).status).toBe(marketplaceTestEngine() === 'postgres' ? 400 : 200);
    const rows = (await pull(ana, { cursor: 0, limit: 1000 })).body.entries.map((e) => e.row_id);
    for (let i = 0; i < 12; i++) expect(rows).toContain(`n${i}`);
  });

  it('pages after a cursor with the next cursor and has_more', async () => {
    const total = (await s.call<{ cursor: number }>('GET', '/api/v1/sync/status', { token: ana })).body.cursor;
    const seen: number[] = [];
    let cursor = 0;
    let pages = 0;
    for (;;) {
      const page = await pull(ana, { cursor, limit: 7, device_id: laptop });
      seen.push(...page.body.entries.map((e) => e.seq));
      cursor = page.body.cursor;
      pages++;
      if (!page.body.has_more) break;
    }
    expect(seen).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    expect(pages).toBe(Math.ceil(total / 7));
    expect(await pull(ana, { cursor: total })).toEqual({ status: 200, body: { entries: [], cursor: total, has_more: false } });
    expect((await pull(ana, { cursor: 0, limit: 1001 })).status).toBe(400);
    expect((await pull(ana, { cursor: -1 })).status).toBe(400);
  });

  it('rejects a whole push for one bad entry, an unregistered device, or the wrong key; nothing is stored', async () => {
    const before = (await s.call<{ cursor: number }>('GET', '/api/v1/sync/status', { token: ana })).body.cursor;
    const bad = await push(ana, { device_id: laptop, batch_id: 'bad', entries: [entry('ok'), { ...entry('no'), op: 'not an op!' }] });
    expect(bad.status).toBe(400);
    expect(typeof bad.body.error).toBe('string');
    expect((await push(ana, { device_id: laptop, batch_id: 'big', entries: Array.from({ length: MAX_PUSH_ENTRIES + 1 }, (_, i) => entry(`b${i}`)) })).status).toBe(400);
    const stranger = await push(ana, { device_id: 'not-a-device', batch_id: 'x', entries: [entry('s')] });
    expect(stranger.status).toBe(403);
    expect(stranger.body.error).toMatch(/not registered/);
    const wrongKey = await push(ana, { device_id: laptop, batch_id: 'k', key_id: 7, entries: [entry('k')] });
    expect(wrongKey).toEqual({ status: 409, body: { error: 'entries must be sealed with key 1, not 7 (GET /api/v1/sync/keys)' } });
    const newcomer = await s.addUser('cy', 'cy@example.com', 'pw-cy');
    expect(newcomer).toBeTruthy();
    const cy = await s.signIn(notes.apiKey, 'cy@example.com', 'pw-cy');
    const cyDevice = (await s.call<{ id: string }>('POST', '/api/v1/sync/devices', { token: cy, body: { name: 'tablet' } })).body.id;
    expect((await push(cy, { device_id: cyDevice, batch_id: 'k', entries: [entry('k')] })).status).toBe(409);
    expect((await s.call<{ cursor: number }>('GET', '/api/v1/sync/status', { token: ana })).body.cursor).toBe(before);
  });

  it('holds ciphertext only: a sealed plaintext appears nowhere on the server (answers, database, log)', async () => {
    const master = randomBytes(32);
    const secretText = `plaintext-${randomBytes(8).toString('hex')}`;
    const binding = { table: 'notes', op: 'update', row_id: 'secret-row', key_id: 1 };
    const sealed = sealEntryData(master, binding, { body: secretText });
    const r = await push(ana, { device_id: laptop, batch_id: 'sealed', entries: [{ table: 'notes', op: 'update', row_id: 'secret-row', timestamp: TS, data: sealed }] });
    const page = await s.call('POST', '/api/v1/sync/pull', { token: ana, body: { cursor: (r.body.cursor as number) - 1 } });
    const got = (page.body as { entries: StoredChangeEntry[] }).entries[0]!;
    expect(got.data).toBe(sealed);
    expect(openEntryData(master, binding, got.data)).toEqual({ body: secretText });
    expect(JSON.stringify(page.body)).not.toContain(secretText);
    expect(JSON.stringify((await s.call('GET', '/api/v1/sync/status', { token: ana })).body)).not.toContain(secretText);
    for (const f of readdirSync(s.dataDir).filter((n) => n.startsWith('marketplace.db'))) expect(readFileSync(join(s.dataDir, f)).includes(secretText)).toBe(false);
    expect(s.log()).not.toContain(secretText);
    expect(s.log()).not.toContain(sealed);
  });
});
