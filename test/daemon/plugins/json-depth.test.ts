// JSON depth (issue 11, defect 8): a body nested deeper than MAX_JSON_DEPTH is a 400 {"error"}
// before any handler runs — sync push `data`, rotation batch `data`, tickets — the server lives
// on and what was stored is unchanged; a body exactly at the limit is stored and served back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { MAX_JSON_DEPTH } from '../../../daemon/plugins/body.js';
import { jsonDepthExceeds } from '../../../src/util/json-depth.js';
import { startService, type RunningService } from '../../../daemon/start.js';
import { createLogger } from '../../../daemon/logger.js';
import { startSyncServer, type SyncServer } from '../../helpers/sync-server.js';
import { tempDir } from '../../helpers/tmp.js';

const TS = '2026-03-01T12:00:00.000Z';
const DEEP = 5_000; // JSON.stringify overflows the stack near 4,500
/** `depth` nested arrays as JSON text (built as text: JSON.stringify itself would overflow). */
const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
const tooDeep = { error: `JSON nested deeper than ${MAX_JSON_DEPTH} levels` };

describe('jsonDepthExceeds', () => {
  it('counts arrays and objects, not brackets inside strings or after escaped quotes', () => {
    expect(jsonDepthExceeds(nested(3), 3)).toBe(false);
    expect(jsonDepthExceeds(nested(4), 3)).toBe(true);
    expect(jsonDepthExceeds('{"a":{"b":[1]}}', 3)).toBe(false);
    expect(jsonDepthExceeds('{"a":{"b":[{}]}}', 3)).toBe(true);
    expect(jsonDepthExceeds(JSON.stringify({ s: '[[[[{{{{' }), 1)).toBe(false);
    expect(jsonDepthExceeds(JSON.stringify({ s: 'a "quoted" [[[[ \\ end' }), 1)).toBe(false);
    expect(jsonDepthExceeds(JSON.stringify({ s: 'ends in a backslash \\' }) + '[[', 1)).toBe(true);
    expect(jsonDepthExceeds('[[], [], []]', 2)).toBe(false);
    expect(jsonDepthExceeds('"unterminated [[[[', 1)).toBe(false);
  });
});

describe('sync: deep JSON in push and rotation batch', () => {
  let s: SyncServer;
  let token: string;
  let device: string;
  const call = (method: string, path: string, body?: unknown) => s.call<Record<string, unknown>>(method, `/api/v1/sync${path}`, { token, body });
  /** A POST whose body is given as text. */
  const raw = async (path: string, text: string): Promise<{ status: number; body: unknown }> => {
    const res = await fetch(`${s.url}/api/v1/sync${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: text });
    return { status: res.status, body: (await res.json()) as unknown };
  };
  const pushText = (batch: string, row: string, dataText: string): string =>
    `{"device_id":${JSON.stringify(device)},"batch_id":"${batch}","key_id":1,"entries":[{"table":"notes","op":"insert","row_id":"${row}","timestamp":"${TS}","data":${dataText}}]}`;
  const stored = async (): Promise<unknown> => (await call('POST', '/pull', { cursor: 0 })).body;

  beforeAll(async () => {
    s = await startSyncServer();
    const app = await s.createApp('Notes');
    await s.addUser('ana', 'ana@example.com', 'pw-ana');
    token = await s.signIn(app.apiKey, 'ana@example.com', 'pw-ana');
    device = (await call('POST', '/devices', { name: 'laptop' })).body.id as string;
    expect((await call('PUT', '/keys', { encrypted_key: 'ENVELOPE-1', expected_key_version: 0 })).status).toBe(204);
    expect((await call('POST', '/push', { device_id: device, batch_id: 'seed', key_id: 1, entries: [{ table: 'notes', op: 'insert', row_id: 'r1', timestamp: TS, data: { v: 1 } }] })).status).toBe(200);
  });
  afterAll(() => s.close());

  it('push with `data` 5,000 levels deep: 400 {"error"}, nothing stored, the server still answers', async () => {
    const before = await stored();
    expect(await raw('/push', pushText('deep', 'deep', nested(DEEP)))).toEqual({ status: 400, body: tooDeep });
    expect(await raw('/push', pushText('deep', 'deep', `{"a":${nested(MAX_JSON_DEPTH)}}`))).toEqual({ status: 400, body: tooDeep });
    expect(await stored()).toEqual(before);
    expect((await call('GET', '/status')).status).toBe(200);
  });

  it('push at exactly the limit is stored, and pulled back whole', async () => {
    // The body object, `entries` and the entry take three levels; `data` gets the rest.
    const dataDepth = MAX_JSON_DEPTH - 3;
    const pushed = await raw('/push', pushText('edge', 'edge', nested(dataDepth)));
    expect(pushed).toMatchObject({ status: 200, body: { accepted: 1 } });
    const res = await fetch(`${s.url}/api/v1/sync/pull`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"cursor":1}' });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain(`"data":${nested(dataDepth)}`);
    // One level more is refused.
    expect(await raw('/push', pushText('edge2', 'edge2', nested(dataDepth + 1)))).toEqual({ status: 400, body: tooDeep });
  });

  it('rotation batch with `data` 5,000 levels deep: 400 {"error"}, the rotation and the entries unchanged', async () => {
    const begun = await call('POST', '/keys/rotate', { device_id: device, new_encrypted_key: 'ENVELOPE-2', expected_key_version: 1 });
    expect(begun.status).toBe(200);
    const rotationId = begun.body.rotation_id as string;
    const entriesBefore = (await call('POST', '/keys/rotate/entries', { rotation_id: rotationId, after_seq: 0 })).body;
    const pulledBefore = await stored();
    const batch = `{"rotation_id":"${rotationId}","entries":[{"seq":1,"data":${nested(DEEP)}}]}`;
    expect(await raw('/keys/rotate/batch', batch)).toEqual({ status: 400, body: tooDeep });
    expect((await call('POST', '/keys/rotate/entries', { rotation_id: rotationId, after_seq: 0 })).body).toEqual(entriesBefore);
    expect(await stored()).toEqual(pulledBefore);
    // The rotation goes on: a well-formed batch for the same entry is applied.
    const ok = await call('POST', '/keys/rotate/batch', { rotation_id: rotationId, entries: [{ seq: 1, data: 'resealed' }] });
    expect(ok.status).toBe(200);
    expect(ok.body.updated).toBe(1);
  });
});

describe('tickets: deep JSON', () => {
  let svc: RunningService;
  let dir: { path: string; remove(): void };
  const auth = { authorization: 'Bearer t0ken', 'content-type': 'application/json' };
  beforeAll(async () => {
    dir = tempDir('mkt-depth-');
    svc = await startService('tickets', { host: '127.0.0.1', port: 0, dataDir: dir.path, options: { token: 't0ken' }, env: {}, logger: createLogger({ level: 'silent' }), out: new Writable({ write: (_c, _e, cb) => cb() }) });
  });
  afterAll(async () => {
    await svc.close();
    dir.remove();
  });

  it('POST /tickets 5,000 levels deep: 400 {"error"}, no ticket stored, the server still answers', async () => {
    expect((await fetch(`${svc.url}/tickets`, { method: 'POST', headers: auth, body: JSON.stringify({ title: 'kept' }) })).status).toBe(201);
    const list = async (): Promise<unknown> => (await fetch(`${svc.url}/tickets`, { headers: auth })).json();
    const before = await list();
    for (const body of [`{"title":"x","tags":${nested(DEEP)}}`, `{"title":${nested(DEEP)}}`, nested(DEEP)]) {
      const res = await fetch(`${svc.url}/tickets`, { method: 'POST', headers: auth, body });
      expect({ status: res.status, body: await res.json() }).toEqual({ status: 400, body: tooDeep });
    }
    expect(await list()).toEqual(before);
  });
});
