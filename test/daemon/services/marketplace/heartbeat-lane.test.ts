// The floating seat's heartbeat taken before fastify (heartbeat-lane.ts), on a real marketplace
// server listening on 127.0.0.1: each request sent over HTTP, where the lane can take it, and the
// same request through inject(), which never reaches a lane (fastify's route answers it). Both
// answers must be the same bytes (the lease's end aside, which the database's clock moves), with
// the same headers, debug line and request line; spies on the server's DirectRoutes tell whether
// the lane answered, handed the read body to fastify, or declined before reading. A body dripped
// past the request timeout is cut by the lane as fastify's reader cuts it (408).
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startLicenseServer, type LicenseServer } from '../../../helpers/license-server.js';
import { lastReqId, linesOf, whoAnswers } from '../../../helpers/lane-spy.js';
import { generateLicenseKey } from '../../../../src/crypto/license-key.js';
import fastJson from 'fast-json-stringify';
import { LicenseHeartbeatResponseSchema } from '../../../../src/schemas/license.js';
import { heartbeatAnswerText, heartbeatFields } from '../../../../daemon/services/marketplace/license/heartbeat-lane.js';

const PATH = '/api/v1/license/heartbeat';
const JSON_TYPE = { 'content-type': 'application/json' };
let s: LicenseServer;

interface Answer {
  status: number;
  type: string | undefined;
  length: string | undefined;
  retryAfter: string | undefined;
  body: string;
}

/** One request over HTTP on its own connection; `chunked` sends the body without a content-length. */
function overHttp(body: string, opts: { headers?: Record<string, string>; path?: string; chunked?: boolean; method?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...JSON_TYPE, ...opts.headers };
    if (!opts.chunked) headers['content-length'] = String(Buffer.byteLength(body));
    const req = request(`${s.url}${opts.path ?? PATH}`, { method: opts.method ?? 'POST', headers, agent: false }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () =>
        resolve({ status: res.statusCode!, type: res.headers['content-type'], length: res.headers['content-length'], retryAfter: res.headers['retry-after'] as string | undefined, body: text }),
      );
    });
    req.on('error', reject);
    // A body given to end() alone gets a content-length from node: written first, it goes chunked.
    if (opts.chunked) req.write(body);
    req.end(opts.chunked ? undefined : body);
  });
}

async function injected(body: string, headers: Record<string, string> = JSON_TYPE): Promise<Answer> {
  const res = await s.app.inject({ method: 'POST', url: PATH, headers, payload: body, remoteAddress: '127.0.0.1' });
  const h = res.headers;
  return { status: res.statusCode, type: h['content-type'] as string, length: h['content-length'] as string, retryAfter: h['retry-after'] as string | undefined, body: res.body };
}

/** The lease's end (RFC 3339 with milliseconds, a fixed length) as a placeholder: the clock moves between the two answers. */
const timeless = (a: Answer): Answer => ({ ...a, body: a.body.replace(/"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"/g, '"<lease end>"') });

let floating: string;
let locked: string;
beforeAll(async () => {
  s = await startLicenseServer();
  await s.admin.createItem({ id: 'fleet', name: 'Fleet', licenseTemplate: null, maxActivations: 5, verification: true, activation: 'floating', leaseSeconds: 600 });
  await s.admin.createItem({ id: 'desk', name: 'Desk', licenseTemplate: null, maxActivations: 5, verification: true });
  [{ key: floating }] = await s.admin.issueKeys({ itemId: 'fleet', count: 1, expiresAt: null, licensee: null });
  [{ key: locked }] = await s.admin.issueKeys({ itemId: 'desk', count: 1, expiresAt: null, licensee: null });
  for (const key of [floating, locked]) {
    const r = await s.app.inject({ method: 'POST', url: '/api/v1/keys/validate', payload: { key, machine_id: 'runner-1', activate: true } });
    expect(r.json()).toMatchObject({ valid: true });
  }
});

afterAll(async () => {
  await s?.close();
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the heartbeat lane answers exactly as the fastify route', () => {
  it('each outcome: renewed (floating and node-locked), no lease, suspended, revoked, expired, unknown and malformed keys', async () => {
    const [{ key: suspended, id: suspendedId }] = await s.admin.issueKeys({ itemId: 'fleet', count: 1, expiresAt: null, licensee: null });
    const [{ key: revoked, id: revokedId }] = await s.admin.issueKeys({ itemId: 'fleet', count: 1, expiresAt: null, licensee: null });
    const [{ key: expired }] = await s.admin.issueKeys({ itemId: 'fleet', count: 1, expiresAt: new Date(s.clock.now() - 1000).toISOString(), licensee: null });
    await s.admin.suspend(suspendedId!);
    await s.admin.revoke(revokedId!);
    const cases: [string, object, string][] = [
      ['floating, seat held', { key: floating, machine_fingerprint: 'runner-1' }, 'RENEWED'],
      ['node-locked, activated', { key: locked, machine_fingerprint: 'runner-1' }, 'RENEWED'],
      ['floating, no seat', { key: floating, machine_fingerprint: 'runner-9' }, 'MACHINE_NOT_ACTIVATED'],
      ['node-locked, not activated', { key: locked, machine_fingerprint: 'runner-9' }, 'MACHINE_NOT_ACTIVATED'],
      ['suspended', { key: suspended, machine_fingerprint: 'runner-1' }, 'SUSPENDED'],
      ['revoked', { key: revoked, machine_fingerprint: 'runner-1' }, 'REVOKED'],
      ['expired', { key: expired, machine_fingerprint: 'runner-1' }, 'EXPIRED'],
      ['unknown key', { key: generateLicenseKey(), machine_fingerprint: 'runner-1' }, 'NOT_FOUND'],
      ['malformed key', { key: 'not-a-key', machine_fingerprint: 'runner-1' }, 'MALFORMED_KEY'],
      // Field order and escapes in the text do not matter: the same two fields.
      ['fields reversed', { machine_fingerprint: 'runner-1', key: floating }, 'RENEWED'],
    ];
    for (const [what, payload, code] of cases) {
      const body = JSON.stringify(payload);
      const { answer, by } = await whoAnswers(s.app.directRoutes, () => overHttp(body));
      const laneId = lastReqId(s.log());
      expect(by, what).toBe('lane');
      expect(JSON.parse(answer.body).code, what).toBe(code);
      const viaFastify = await injected(body);
      const fastifyId = lastReqId(s.log());
      expect(timeless(answer), what).toEqual(timeless(viaFastify));
      // The debug line of the outcome and the request line, field for field.
      expect(linesOf(s.log(), laneId), what).toEqual(linesOf(s.log(), fastifyId));
      expect(linesOf(s.log(), laneId).some((l) => l.includes(`"outcome":"${code}"`) && l.includes('"msg":"license key request"')), what).toBe(true);
      expect(linesOf(s.log(), laneId).some((l) => l.includes('"route":"/api/v1/license/heartbeat"') && l.includes('"status":200')), what).toBe(true);
    }
  });

  it('its template is what the route\'s response schema serializes (fastify\'s serializer), escapes and all', () => {
    // fastify's serializer, compiled from the route's own schema as fastify compiles it.
    const serialize = fastJson(LicenseHeartbeatResponseSchema as object);
    const answers = [
      { success: true, message: 'lease renewed', code: 'RENEWED', lease_expires_at: '2026-11-30T12:00:00.000Z' },
      { success: false, message: 'quote " and \\ and \n and é and 😀 and \u2028', code: 'NOT_FOUND', lease_expires_at: null },
    ];
    for (const a of answers) expect(heartbeatAnswerText(a)).toBe(serialize(a));
  });
});

describe('what the lane does not answer itself', () => {
  it('a body it has read and finds unlike a heartbeat goes to fastify, which answers it as from the start', async () => {
    const bodies = [
      '{"key": "abc", ',
      JSON.stringify({ key: floating }),
      JSON.stringify({ key: floating, machine_fingerprint: 'runner-1', extra: 1 }),
      JSON.stringify({ key: floating, machine_fingerprint: 7 }),
      JSON.stringify({ key: '', machine_fingerprint: 'runner-1' }),
      JSON.stringify({ key: 'k'.repeat(201), machine_fingerprint: 'runner-1' }),
      `{"key": ${JSON.stringify(floating)}, "machine_fingerprint": "runner-1", "__proto__": {"x": 1}}`,
      JSON.stringify([floating, 'runner-1']),
      'null',
    ];
    for (const body of bodies) {
      const { answer, by } = await whoAnswers(s.app.directRoutes, () => overHttp(body));
      expect(by, body).toBe('hand-off');
      expect(answer.status, body).toBe(400);
      expect(answer, body).toEqual(await injected(body));
    }
  });

  it('a request fastify reads or refuses itself is declined before a byte is read: a query string or another method, a chunked, empty or oversized body, another content type', async () => {
    const ok = JSON.stringify({ key: floating, machine_fingerprint: 'runner-1' });
    const declined: [string, () => Promise<Answer>, number][] = [
      ['a query string', () => overHttp(ok, { path: `${PATH}?x=1` }), 200],
      ['chunked', () => overHttp(ok, { chunked: true }), 200],
      ['empty', () => overHttp(''), 400],
      ['over the body limit', () => overHttp(' '.repeat(1024 * 1024 + 1)), 413],
      ['a charset in capitals', () => overHttp(ok, { headers: { 'content-type': 'application/json; charset=UTF-8' } }), 200],
      ['text/plain', () => overHttp(ok, { headers: { 'content-type': 'text/plain' } }), 400],
      ['application/xml', () => overHttp(ok, { headers: { 'content-type': 'application/xml' } }), 415],
      ['GET', () => overHttp('', { method: 'GET' }), 404],
    ];
    for (const [what, send, status] of declined) {
      const { answer, by } = await whoAnswers(s.app.directRoutes, send);
      expect(by, what).toBe('fastify');
      expect(answer.status, what).toBe(status);
    }
  });

  it('the abuse limit holds on the lane: guesses take their slots, then 429 with Retry-After as fastify answers it', async () => {
    const limited = await startLicenseServer({ flags: { licenseAbuseFailures: 2, licenseAbuseWindowSeconds: 600 } });
    const main = s;
    s = limited;
    try {
      await s.admin.createItem({ id: 'fleet', name: 'Fleet', licenseTemplate: null, maxActivations: 5, verification: true, activation: 'floating', leaseSeconds: 600 });
      const [{ key }] = await s.admin.issueKeys({ itemId: 'fleet', count: 1, expiresAt: null, licensee: null });
      const guess = JSON.stringify({ key: generateLicenseKey(), machine_fingerprint: 'runner-1' });
      for (let i = 0; i < 2; i++) expect(JSON.parse((await overHttp(guess)).body).code).toBe('NOT_FOUND');
      const { answer, by } = await whoAnswers(s.app.directRoutes, () => overHttp(JSON.stringify({ key, machine_fingerprint: 'runner-1' })));
      expect(by).toBe('lane');
      expect(answer.status).toBe(429);
      expect(Number(answer.retryAfter)).toBeGreaterThan(0);
      const viaFastify = await injected(JSON.stringify({ key, machine_fingerprint: 'runner-1' }));
      expect(answer).toEqual(viaFastify);
    } finally {
      s = main;
      await limited.close();
    }
  });
});

describe('the abuse limit under concurrency on the lane', () => {
  it('15 concurrent guesses against a limit of 5: exactly 5 are looked up (NOT_FOUND), 10 answer 429', async () => {
    const limited = await startLicenseServer({ flags: { licenseAbuseFailures: 5, licenseAbuseWindowSeconds: 600 } });
    const main = s;
    s = limited;
    try {
      const begin = vi.spyOn(s.app.directRoutes, 'begin');
      const answers = await Promise.all(Array.from({ length: 15 }, () => overHttp(JSON.stringify({ key: generateLicenseKey(), machine_fingerprint: 'runner-1' }))));
      expect(begin).toHaveBeenCalledTimes(15);
      const codes = answers.map((a) => (a.status === 200 ? (JSON.parse(a.body) as { code: string }).code : String(a.status)));
      expect(codes.filter((c) => c === 'NOT_FOUND')).toHaveLength(5);
      expect(codes.filter((c) => c === '429')).toHaveLength(10);
    } finally {
      vi.restoreAllMocks();
      s = main;
      await limited.close();
    }
  });
});

describe('a heartbeat whose body never finishes', () => {
  it('dripped a byte at a time, never idle: the lane answers 408 at the request timeout and closes the connection; no lease renewed', async () => {
    const slow = await startLicenseServer({ timeouts: { requestMs: 400, idleMs: 5_000 } });
    try {
      await slow.admin.createItem({ id: 'fleet', name: 'Fleet', licenseTemplate: null, maxActivations: 5, verification: true, activation: 'floating', leaseSeconds: 600 });
      const [{ key, id }] = await slow.admin.issueKeys({ itemId: 'fleet', count: 1, expiresAt: null, licensee: null });
      expect((await slow.app.inject({ method: 'POST', url: '/api/v1/keys/validate', payload: { key, machine_id: 'runner-1', activate: true } })).json()).toMatchObject({ valid: true });
      const leases = async (): Promise<unknown> => (await slow.license.transaction((tx) => tx.seats(id, 'runner-1'))).mine_ms;
      const before = await leases();
      const body = JSON.stringify({ key, machine_fingerprint: 'runner-1' });
      const begin = vi.spyOn(slow.app.directRoutes, 'begin');
      const socket = connect(Number(new URL(slow.url).port), '127.0.0.1');
      let answer = '';
      socket.on('data', (c: Buffer) => (answer += c.toString()));
      socket.on('error', () => undefined);
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      socket.write(`POST ${PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
      // One byte each 50 ms, never the last: bounded by the body's length, not by a clock.
      for (let i = 0; i < body.length - 1 && !socket.destroyed && answer === ''; i++) {
        socket.write(body[i]!);
        await new Promise((r) => setTimeout(r, 50));
      }
      await closed;
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(answer).toMatch(/connection: close/i);
      expect(answer).toContain('{"error":"request body not received within 400 ms"}');
      expect(begin).toHaveBeenCalled();
      expect(await leases()).toBe(before);
    } finally {
      vi.restoreAllMocks();
      await slow.close();
    }
  });
});

describe('heartbeatFields', () => {
  it('takes exactly two string fields within the schema\'s lengths', () => {
    expect(heartbeatFields(Buffer.from('{"key":"a","machine_fingerprint":"b"}'))).toEqual({ key: 'a', machine: 'b' });
    expect(heartbeatFields(Buffer.from(JSON.stringify({ key: 'k'.repeat(200), machine_fingerprint: 'm'.repeat(256) })))).toBeDefined();
    expect(heartbeatFields(Buffer.from(JSON.stringify({ key: 'k', machine_fingerprint: 'm'.repeat(257) })))).toBeUndefined();
    expect(heartbeatFields(Buffer.from('{"key":"a","machine_fingerprint":"b","key":"c"}'))).toEqual({ key: 'c', machine: 'b' });
    expect(heartbeatFields(Buffer.from('\ufeff{"key":"a","machine_fingerprint":"b"}'))).toBeUndefined();
  });
});
