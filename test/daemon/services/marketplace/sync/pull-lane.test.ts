// POST /api/v1/sync/pull taken before fastify (pull-lane.ts), on a real marketplace server on
// 127.0.0.1 (SQLite, or PostgreSQL under MKT_TEST_ENGINE=postgres): each request sent over HTTP,
// where the lane can take it, and the same request through inject(), which never reaches a lane.
// Both answers must be the same bytes with the same request line; a spy on the server's
// DirectRoutes tells whether the lane answered, handed the read body to fastify, or declined
// before reading.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSyncServer, type SyncServer } from '../../../../helpers/sync-server.js';
import { lastReqId, linesOf, whoAnswers } from '../../../../helpers/lane-spy.js';
import { pullFields } from '../../../../../daemon/services/marketplace/sync/pull-lane.js';
import { SYNC_TOKEN_LIFETIME_SECONDS } from '../../../../../src/schemas/sync.js';
import { SqlSyncStore } from '../../../../../src/store/sync-sql.js';

const PULL = '/api/v1/sync/pull';
const TS = '2026-03-01T12:00:00.000Z';
let s: SyncServer;
let apiKey: string;
let ana: string;
let laptop: string;

interface Answer {
  status: number;
  type: string | undefined;
  length: string | undefined;
  auth: string | undefined;
  body: string;
}

function overHttp(body: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${s.url}${PULL}`, { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, agent: false }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, type: res.headers['content-type'], length: res.headers['content-length'], auth: res.headers['www-authenticate'], body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function injected(body: string, headers: Record<string, string>): Promise<Answer> {
  const res = await s.svc.app.inject({ method: 'POST', url: PULL, headers, payload: body });
  return { status: res.statusCode, type: res.headers['content-type'] as string, length: res.headers['content-length'] as string, auth: res.headers['www-authenticate'] as string | undefined, body: res.body };
}

const bearer = (token: string): Record<string, string> => ({ 'content-type': 'application/json', authorization: `Bearer ${token}` });

/** Sends `body` over HTTP and through inject; expects `by` to have answered the first, and the two the same. */
async function same(body: string, headers: Record<string, string>, by: 'lane' | 'hand-off' | 'fastify', what: string): Promise<Answer> {
  const sent = await whoAnswers(s.svc.app.directRoutes, () => overHttp(body, headers));
  const overId = lastReqId(s.log());
  expect(sent.by, what).toBe(by);
  const viaFastify = await injected(body, headers);
  const fastifyId = lastReqId(s.log());
  expect(sent.answer, what).toEqual(viaFastify);
  expect(linesOf(s.log(), overId), what).toEqual(linesOf(s.log(), fastifyId));
  expect(linesOf(s.log(), overId).some((l) => l.includes(`"route":"${PULL}"`) && l.includes(`"status":${sent.answer.status}`)), what).toBe(true);
  return sent.answer;
}

beforeAll(async () => {
  s = await startSyncServer();
  ({ apiKey } = await s.createApp('Notes'));
  await s.addUser('ana', 'ana@example.com', 'pw-ana');
  ana = await s.signIn(apiKey, 'ana@example.com', 'pw-ana');
  expect((await s.call('PUT', '/api/v1/sync/keys', { token: ana, body: { encrypted_key: 'ENVELOPE-1', expected_key_version: 0 } })).status).toBe(204);
  laptop = (await s.call<{ id: string }>('POST', '/api/v1/sync/devices', { token: ana, body: { name: 'laptop' } })).body.id;
  const entries = [
    { table: 'notes', op: 'insert', row_id: 'r1', timestamp: TS, data: { iv: 'aXY=', text: 'quote " backslash \\ tab \t line\u2028 emoji 😀' } },
    { table: 'notes', op: 'delete', row_id: 'r2', timestamp: TS, data: null },
    { table: 'tags', op: 'update', row_id: 'r3', timestamp: TS, data: [1, 2.5, 'x'] },
  ];
  expect((await s.call('POST', '/api/v1/sync/push', { token: ana, body: { key_id: 1, device_id: laptop, batch_id: 'b1', entries } })).status).toBe(200);
});

afterAll(async () => {
  await s?.close();
});

describe('the pull lane answers exactly as the fastify route', () => {
  it('pages after a cursor, with and without a limit, and past the end', async () => {
    const first = await same(JSON.stringify({ cursor: 0 }), bearer(ana), 'lane', 'every entry');
    expect(JSON.parse(first.body)).toMatchObject({ cursor: 3, has_more: false });
    expect((JSON.parse(first.body) as { entries: unknown[] }).entries).toHaveLength(3);
    const paged = await same(JSON.stringify({ limit: 2, cursor: 0 }), bearer(ana), 'lane', 'a page of two');
    expect(JSON.parse(paged.body)).toMatchObject({ cursor: 2, has_more: true });
    await same(JSON.stringify({ cursor: 2, limit: 1000 }), bearer(ana), 'lane', 'the rest');
    expect(JSON.parse((await same(JSON.stringify({ cursor: 99 }), bearer(ana), 'lane', 'past the end')).body)).toEqual({ entries: [], cursor: 99, has_more: false });
    await same(JSON.stringify({ cursor: 0 }), { ...bearer(ana), 'content-type': 'application/json; charset=utf-8' }, 'lane', 'with a charset');
  });

  it('sees the pulling device now, as the route does, and an unknown device alike', async () => {
    const seen = async (): Promise<string | undefined> => (await s.call<{ id: string; last_seen_at: string }[]>('GET', '/api/v1/sync/devices', { token: ana })).body.find((d) => d.id === laptop)?.last_seen_at;
    const body = JSON.stringify({ cursor: 3, device_id: laptop });
    s.clock.advance(60_000);
    // The lane alone first (same() sends the request to fastify too, which would see it as well).
    expect((await whoAnswers(s.svc.app.directRoutes, () => overHttp(body, bearer(ana)))).by).toBe('lane');
    expect(await seen()).toBe(new Date(s.clock.now()).toISOString());
    s.clock.advance(60_000);
    await same(body, bearer(ana), 'lane', 'a named device');
    expect(await seen()).toBe(new Date(s.clock.now()).toISOString());
    await same(JSON.stringify({ cursor: 3, device_id: 'no-such-device' }), bearer(ana), 'lane', 'an unknown device');
  });

  it('writes a device\'s sighting at most once a minute, through the lane and the route alike; a failed write is tried again', async () => {
    const seen = async (): Promise<string | undefined> => (await s.call<{ id: string; last_seen_at: string }[]>('GET', '/api/v1/sync/devices', { token: ana })).body.find((d) => d.id === laptop)?.last_seen_at;
    const touches = vi.spyOn(SqlSyncStore.prototype, 'touchDevice');
    try {
      const body = JSON.stringify({ cursor: 3, device_id: laptop });
      s.clock.advance(60_000);
      const written = new Date(s.clock.now()).toISOString();
      expect((await whoAnswers(s.svc.app.directRoutes, () => overHttp(body, bearer(ana)))).by).toBe('lane');
      expect(touches).toHaveBeenCalledTimes(1);
      // 59.999 s later: neither the lane nor the route writes it again.
      s.clock.advance(59_999);
      expect((await whoAnswers(s.svc.app.directRoutes, () => overHttp(body, bearer(ana)))).by).toBe('lane');
      expect((await injected(body, bearer(ana))).status).toBe(200);
      expect(touches).toHaveBeenCalledTimes(1);
      expect(await seen()).toBe(written);
      // A minute after the write, another user's pull naming this device id writes nothing of ana's
      // and holds back none of her sightings; hers is written, unless the write fails, and then at
      // her next pull.
      s.clock.advance(1);
      await s.addUser('cy', 'cy@example.com', 'pw-cy');
      const cy = await s.signIn(apiKey, 'cy@example.com', 'pw-cy');
      expect((await overHttp(body, bearer(cy))).status).toBe(200);
      expect(await seen()).toBe(written);
      touches.mockRejectedValueOnce(new Error('database is locked'));
      expect((await overHttp(body, bearer(ana))).status).toBe(500);
      expect(await seen()).toBe(written);
      await same(body, bearer(ana), 'lane', 'the sighting due');
      expect(await seen()).toBe(new Date(s.clock.now()).toISOString());
      // A clock set back writes at once (last_seen_at stays the clock's).
      s.clock.advance(-10_000);
      expect((await overHttp(body, bearer(ana))).status).toBe(200);
      expect(await seen()).toBe(new Date(s.clock.now()).toISOString());
    } finally {
      touches.mockRestore();
    }
  });

  it("a failing store is the route's 500, answered and logged alike", async () => {
    const failing = vi.spyOn(SqlSyncStore.prototype, 'storedPage').mockRejectedValue(new Error('disk I/O error'));
    try {
      const a = await same(JSON.stringify({ cursor: 0 }), bearer(ana), 'lane', 'a failing store');
      expect(a.status).toBe(500);
      expect(a.body).not.toContain('disk I/O');
    } finally {
      failing.mockRestore();
    }
  });
});

describe('what the pull lane leaves to fastify', () => {
  it('a caller not seen yet is declined before reading, and taken from its next pull', async () => {
    await s.addUser('bo', 'bo@example.com', 'pw-bo');
    const bo = await s.signIn(apiKey, 'bo@example.com', 'pw-bo');
    const body = JSON.stringify({ cursor: 0 });
    const first = await whoAnswers(s.svc.app.directRoutes, () => overHttp(body, bearer(bo)));
    expect(first.by).toBe('fastify');
    expect(JSON.parse(first.answer.body)).toEqual({ entries: [], cursor: 0, has_more: false });
    await same(body, bearer(bo), 'lane', 'the same caller again');
  });

  it('no token, another spelling, a tampered, foreign or expired token: declined untouched, the route answers 401', async () => {
    const body = JSON.stringify({ cursor: 0 });
    const [head, claims, sig] = ana.split('.') as [string, string, string];
    const flipped = sig.slice(0, -2) + (sig.at(-2) === 'A' ? 'B' : 'A') + sig.at(-1);
    const cases: [string, Record<string, string>, number][] = [
      ['no token', { 'content-type': 'application/json' }, 401],
      ['lower-case scheme', { 'content-type': 'application/json', authorization: `bearer ${ana}` }, 200],
      ['two spaces', { 'content-type': 'application/json', authorization: `Bearer  ${ana}` }, 200],
      ['Basic', { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`x:${ana}`).toString('base64')}` }, 401],
      ['a signature changed', bearer(`${head}.${claims}.${flipped}`), 401],
      ['claims of another user', bearer(`${head}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(claims, 'base64url').toString()), sub: 'someone' })).toString('base64url')}.${sig}`), 401],
      ['a token past the header limit', bearer('x'.repeat(5000)), 401],
    ];
    for (const [what, headers, status] of cases) expect((await same(body, headers, 'fastify', what)).status, what).toBe(status);
    s.clock.advance((SYNC_TOKEN_LIFETIME_SECONDS + 1) * 1000);
    try {
      const expired = await same(body, bearer(ana), 'fastify', 'expired');
      expect(expired.status).toBe(401);
      expect(expired.auth).toContain('Bearer');
    } finally {
      // Later tests sign in again for a token of the clock's time.
      ana = await s.signIn(apiKey, 'ana@example.com', 'pw-ana');
    }
  });

  it("a body unlike the schema's goes to fastify with the bytes read, which answers as from the start", async () => {
    // The caller is known, not the token: a new token of a known caller is the lane's at once.
    await same(JSON.stringify({ cursor: 0 }), bearer(ana), 'lane', 'a new token of a known caller');
    const bodies = [
      JSON.stringify({ cursor: 0, extra: 1 }),
      JSON.stringify({ cursor: '0' }),
      JSON.stringify({ cursor: -1 }),
      JSON.stringify({ cursor: 1.5 }),
      JSON.stringify({ cursor: 2 ** 53 }),
      JSON.stringify({ limit: 5 }),
      JSON.stringify({ cursor: 0, limit: 0 }),
      JSON.stringify({ cursor: 0, limit: 1001 }),
      JSON.stringify({ cursor: 0, device_id: '' }),
      JSON.stringify({ cursor: 0, device_id: 'd'.repeat(201) }),
      JSON.stringify({ cursor: 0, device_id: 7 }),
      '{"cursor": 0, "__proto__": {"x": 1}}',
      '[{"cursor": 0}]',
      '{"cursor": ',
      'null',
    ];
    for (const body of bodies) await same(body, bearer(ana), 'hand-off', body);
  });

  it('another content type or a query string is declined before a byte is read', async () => {
    const body = JSON.stringify({ cursor: 0 });
    expect((await whoAnswers(s.svc.app.directRoutes, () => overHttp(body, { ...bearer(ana), 'content-type': 'text/plain' }))).by).toBe('fastify');
    const q = await whoAnswers(s.svc.app.directRoutes, async () => (await fetch(`${s.url}${PULL}?x=1`, { method: 'POST', headers: bearer(ana), body })).status);
    expect(q).toEqual({ answer: 200, by: 'fastify' });
  });
});

describe('pullFields', () => {
  it("takes exactly the schema's fields, with values it takes as they are", () => {
    const f = (o: unknown): unknown => pullFields(Buffer.from(JSON.stringify(o)));
    expect(f({ cursor: 0 })).toEqual({ cursor: 0, limit: undefined, deviceId: undefined });
    expect(f({ device_id: 'd', limit: 1000, cursor: 2 ** 53 - 1 })).toEqual({ cursor: 2 ** 53 - 1, limit: 1000, deviceId: 'd' });
    expect(f({ cursor: 0, device_id: 'd'.repeat(200), limit: 1 })).toEqual({ cursor: 0, limit: 1, deviceId: 'd'.repeat(200) });
    for (const bad of [{}, { cursor: null }, { cursor: 0, limit: null }, { cursor: 0, device_id: null }, { cursor: 0, limit: 1.5 }, { cursor: true }]) expect(f(bad), JSON.stringify(bad)).toBeUndefined();
  });
});
