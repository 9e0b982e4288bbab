// The ping's direct route (pingLane, daemon/direct-routes.ts): which requests it takes before
// fastify and which it leaves to fastify untouched. A real node:http server whose fallback stands
// in for fastify (it answers 599), so every request tells which of the two answered it.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../../daemon/logger.js';
import { DirectRoutes, MediaTypes, RequestIds } from '../../../../daemon/direct-routes.js';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { MAX_PING_BODY, pingLane, type PingDeps } from '../../../../daemon/services/monitor/ping-routes.js';
import { PingGuard } from '../../../../daemon/services/monitor/ping-guard.js';
import { BodyDeadlines } from '../../../../daemon/plugins/body.js';
import { PENDING } from '../../../../daemon/services/monitor/ping-keys.js';
import type { PingSignal } from '../../../../daemon/services/monitor/checks/heartbeat.js';

const KEY = 'lane-key-0123456789';
const lines: string[] = [];
const pings: { target: string; signal: PingSignal; log?: { text: string; truncated: boolean } }[] = [];
let pending = false;
let failWith: Error | undefined;
let direct: DirectRoutes;
let guard: PingGuard;
let server: Server;
let base: string;

const deps = {
  keys: { targetNow: (key: string) => (pending ? PENDING : key === KEY ? 'job' : undefined) },
  engine: {
    pingThen(target: string, signal: PingSignal, log: { text: string; truncated: boolean } | undefined, done: (err: Error | null) => void) {
      if (failWith) return done(failWith);
      pings.push({ target, signal, ...(log ? { log } : {}) });
      done(null);
    },
  },
  now: () => Date.now(),
} as unknown as PingDeps;

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/** One request on its own connection; `chunked` sends the body without a content-length. */
function send(method: string, path: string, opts: { body?: string; headers?: Record<string, string>; chunked?: boolean } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers = { ...opts.headers };
    if (opts.body !== undefined && !opts.chunked) headers['content-length'] = String(Buffer.byteLength(opts.body));
    const req = request(`${base}${path}`, { method, headers, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body, headers: res.headers }));
    });
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _e, cb) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      cb();
    },
  });
  direct = new DirectRoutes(createLogger({ level: 'debug', stream: sink, pretty: false }), new RequestIds());
  guard = new PingGuard({ now: () => Date.now(), limit: 2 });
  // Deadlines of bodies read too slowly: test/daemon/timeouts.test.ts drips a ping's log past them.
  direct.add('/ping/', pingLane(direct, deps, guard, new BodyDeadlines(60_000)));
  server = createServer((req, res) => {
    if (direct.take(req, res)) return;
    req.resume();
    res.statusCode = 599;
    res.end('fastify');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

beforeEach(() => {
  pings.length = 0;
  pending = false;
  failWith = undefined;
  direct.closing = false;
});

describe('the ping lane takes a ping it can answer at once', () => {
  it.each([
    ['GET', `/ping/${KEY}`, { kind: 'success' }, '/ping/:key', 'success'],
    ['GET', `/ping/${KEY}/start`, { kind: 'start' }, '/ping/:key/:signal', 'start'],
    ['GET', `/ping/${KEY}/fail?rid=7`, { kind: 'fail' }, '/ping/:key/:signal', 'fail'],
    ['POST', `/ping/${KEY}/0`, { kind: 'exit', code: 0 }, '/ping/:key/:signal', '0'],
    ['POST', `/ping/${KEY}`, { kind: 'success' }, '/ping/:key', 'success'],
  ])('%s %s: recorded, answered, one request line with the route pattern', async (method, path, signal, route, name) => {
    const before = lines.length;
    const a = await send(method, path);
    expect(a.status).toBe(200);
    expect(a.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(a.body)).toEqual({ ok: true, target: 'job', signal: name });
    expect(pings).toEqual([{ target: 'job', signal }]);
    const logged = lines.slice(before).map((l) => JSON.parse(l) as Record<string, unknown>);
    const line = logged.find((l) => l.msg === 'request')!;
    expect(line).toMatchObject({ level: 30, method, route, status: 200, msg: 'request' });
    expect(Object.keys(line)).toEqual(['level', 'time', 'pid', 'reqId', 'method', 'route', 'status', 'ms', 'msg']);
    expect(line.reqId).toMatch(/^req-[0-9a-z]+$/);
    // The debug line of the fastify route, with the same request id; never the key.
    expect(logged.find((l) => l.msg === 'ping')).toEqual({ level: 20, time: expect.any(Number), pid: process.pid, reqId: line.reqId, target: 'job', signal: name, msg: 'ping' });
    expect(lines.slice(before).join('\n')).not.toContain(KEY);
  });

  it('a POST body is the log: its tail kept, an empty one none', async () => {
    await send('POST', `/ping/${KEY}/3`, { body: 'line one\nline two\n', headers: { 'content-type': 'text/plain' } });
    await send('POST', `/ping/${KEY}`, { body: '', headers: { 'content-type': 'text/plain' } });
    await send('POST', `/ping/${KEY}/start`, { body: 'x'.repeat(MAX_PING_BODY) });
    expect(pings[0]).toEqual({ target: 'job', signal: { kind: 'exit', code: 3 }, log: { text: 'line one\nline two\n', truncated: false } });
    expect(pings[1]).toEqual({ target: 'job', signal: { kind: 'success' } });
    expect(pings[2]!.log).toEqual({ text: 'x'.repeat(10 * 1024), truncated: true });
  });

  it('an error of the engine is answered as fastify\'s error handler answers it, logged with the request id', async () => {
    failWith = Object.assign(new Error('SQLITE_FULL: database or disk is full'), { code: 'SQLITE_FULL' });
    const full = await send('GET', `/ping/${KEY}`);
    expect(full.status).toBe(507);
    expect(JSON.parse(full.body).error).toMatch(/disk is full/);
    failWith = new Error('a secret detail');
    const before = lines.length;
    const other = await send('POST', `/ping/${KEY}/fail`, { body: 'log' });
    expect({ status: other.status, body: JSON.parse(other.body) }).toEqual({ status: 500, body: { error: 'internal server error' } });
    const logged = lines.slice(before).map((l) => JSON.parse(l) as Record<string, unknown>);
    const request = logged.find((l) => l.msg === 'request')!;
    expect(request).toMatchObject({ method: 'POST', route: '/ping/:key/:signal', status: 500 });
    expect(logged.find((l) => l.msg === 'request failed')).toMatchObject({ level: 50, reqId: request.reqId });
  });

  it('request ids go on from one counter', async () => {
    const before = lines.length;
    await send('GET', `/ping/${KEY}`);
    await send('GET', `/ping/${KEY}`);
    const ids = lines.slice(before).map((l) => JSON.parse(l) as { msg: string; reqId: string }).filter((l) => l.msg === 'request').map((l) => parseInt(l.reqId.slice(4), 36));
    expect(ids[1]).toBe(ids[0]! + 1);
  });
});

describe('the ping lane leaves to fastify, untouched, what fastify answers otherwise', () => {
  it.each([
    ['HEAD', `/ping/${KEY}`],
    ['PUT', `/ping/${KEY}`],
    ['GET', '/ping/'],
    ['GET', `/ping/${KEY}/`],
    ['GET', `/ping/${KEY}/0/1`],
    ['GET', `/ping/${KEY}/256`],
    ['GET', `/ping/${KEY}/abc`],
    ['GET', `/ping/${KEY.replace('l', '%6c')}`],
    ['GET', `/ping/${KEY}x`],
    ['GET', `/ping/${'k'.repeat(1025)}`],
  ].map(([method, path]) => [method, path!.length > 60 ? `${path!.slice(0, 12)}… (${path!.length} characters)` : path, path]))('%s %s', async (method, _name, path) => {
    expect((await send(method!, path!)).status).toBe(599);
    expect(pings).toEqual([]);
  });

  it('a body fastify must bound or refuse: chunked, over the limit, on a GET', async () => {
    expect((await send('POST', `/ping/${KEY}`, { body: 'log', chunked: true })).status).toBe(599);
    expect((await send('POST', `/ping/${KEY}`, { body: 'x'.repeat(MAX_PING_BODY + 1) })).status).toBe(599);
    expect((await send('GET', `/ping/${KEY}`, { body: 'x' })).status).toBe(599);
    expect(pings).toEqual([]);
  });

  it('a content type fastify refuses (415): not type/subtype, or characters outside a token', async () => {
    for (const type of ['bogus', '', 'text/', '/plain', 'text/pl ain', 'te@xt/plain', 'undefined']) {
      expect((await send('POST', `/ping/${KEY}`, { body: 'log', headers: { 'content-type': type } })).status).toBe(599);
    }
    expect(pings).toEqual([]);
    // What fastify takes as a media type, the lane takes too (parameters do not matter).
    for (const type of ['text/plain', ' text/plain ', 'application/x-www-form-urlencoded', 'text/plain; charset=utf-8', 'Text/Plain;x']) {
      expect((await send('POST', `/ping/${KEY}`, { body: 'log', headers: { 'content-type': type } })).status).toBe(200);
    }
    expect(pings).toHaveLength(5);
  });

  it('while the keys are read again, and while the server closes', async () => {
    pending = true;
    expect((await send('GET', `/ping/${KEY}`)).status).toBe(599);
    pending = false;
    direct.closing = true;
    expect((await send('GET', `/ping/${KEY}`)).status).toBe(599);
    expect(pings).toEqual([]);
  });

  it('from an address the guard refuses, a valid key too (fastify answers its 429)', async () => {
    guard.failed('127.0.0.1');
    guard.failed('127.0.0.1');
    expect((await send('GET', `/ping/${KEY}`)).status).toBe(599);
    expect(pings).toEqual([]);
  });
});

describe('MediaTypes', () => {
  // fastify's own parser of content types (not exported; its file is the reference).
  const FastifyContentType = createRequire(import.meta.url)('fastify/lib/content-type.js') as new (value: string) => { isValid: boolean };
  const agrees = (value: string): void => void expect({ value, valid: new MediaTypes().valid(value) }).toEqual({ value, valid: new FastifyContentType(value).isValid });

  it('takes as valid exactly what fastify takes', () => {
    for (const v of ['bogus', '', 'text/', '/plain', 'text/pl ain', 'te@xt/plain', ' text/plain', 'text/plain ', 'a/b;', 'a/b; c', ';a/b', 'a /b', 'a/ b', 'text/plain; charset="x"', 'a/b/c', 'x-y/z+json']) agrees(v);
    const chars = fc.constantFrom(...'ab/; =-+"@'.split(''), '\t');
    fc.assert(fc.property(fc.array(chars, { maxLength: 12 }).map((a) => a.join('')), (v) => {
      agrees(v);
    }), { numRuns: 2000 });
  });
});

describe('DirectRoutes', () => {
  it('refuses a lane whose prefix overlaps another\'s', () => {
    expect(() => direct.add('/ping/x', () => false)).toThrow(/overlaps/);
    expect(() => direct.add('/pi', () => false)).toThrow(/overlaps/);
  });
});
