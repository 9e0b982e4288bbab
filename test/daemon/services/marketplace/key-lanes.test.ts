// POST /api/v1/keys/status and /api/v1/license/verify taken before fastify (key-lane.ts), on a
// real marketplace server listening on 127.0.0.1: each request sent over HTTP, where the lane can
// take it, and the same request through inject(), which never reaches a lane (fastify's route
// answers it). Both answers must be the same bytes (a verify's token and times aside, which the
// clock moves), with the same debug line and request line; a spy on the server's DirectRoutes
// tells whether the lane answered, handed the read body to fastify, or declined before reading.
// The heartbeat's lane, on the same code, has its own file (heartbeat-lane.test.ts).
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { startLicenseServer, type LicenseServer } from '../../../helpers/license-server.js';
import { lastReqId, linesOf, whoAnswers } from '../../../helpers/lane-spy.js';
import { generateLicenseKey } from '../../../../src/crypto/license-key.js';
import { keyFields } from '../../../../daemon/services/marketplace/license/key-lane.js';
import { Licenses } from '../../../../daemon/services/marketplace/license/licenses.js';

const STATUS = '/api/v1/keys/status';
const VERIFY = '/api/v1/license/verify';
let s: LicenseServer;

interface Answer {
  status: number;
  type: string | undefined;
  length: string | undefined;
  body: string;
}

function overHttp(path: string, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${s.url}${path}`, { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, agent: false }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, type: res.headers['content-type'], length: res.headers['content-length'], body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function injected(path: string, body: string): Promise<Answer> {
  const res = await s.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/json' }, payload: body, remoteAddress: '127.0.0.1' });
  return { status: res.statusCode, type: res.headers['content-type'] as string, length: res.headers['content-length'] as string, body: res.body };
}

/** The token and the times in an answer as placeholders (the clock moves between the two answers); the length follows the body. */
function timeless(a: Answer): Answer {
  const body = a.body
    .replace(/"token":"[^"]+"/, '"token":"<token>"')
    .replace(/"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"/g, '"<time>"')
    .replace(/"expires_in":\d+/, '"expires_in":<n>');
  return { ...a, length: a.body === body ? a.length : '<length>', body };
}

let desk: string;
let fleet: string;
beforeAll(async () => {
  s = await startLicenseServer();
  await s.admin.createItem({ id: 'desk', name: 'Desk', licenseTemplate: null, maxActivations: 2, verification: true });
  await s.admin.createItem({ id: 'fleet', name: 'Fleet', licenseTemplate: null, maxActivations: 1, verification: true, activation: 'floating', leaseSeconds: 600 });
  await s.admin.createItem({ id: 'quiet', name: 'Quiet', licenseTemplate: null, maxActivations: 2, verification: false });
  [{ key: desk }] = await s.admin.issueKeys({ itemId: 'desk', count: 1, expiresAt: null, licensee: 'Ana "the admin" Example' });
  [{ key: fleet }] = await s.admin.issueKeys({ itemId: 'fleet', count: 1, expiresAt: null, licensee: null });
});

afterAll(async () => {
  await s?.close();
});

/** Sends `payload` over HTTP (expecting the lane) and through inject, and holds the two equal. */
async function sameAsFastify(path: string, payload: object, code: string, what: string): Promise<Answer> {
  const body = JSON.stringify(payload);
  const { answer, by } = await whoAnswers(s.app.directRoutes, () => overHttp(path, body));
  const laneId = lastReqId(s.log());
  expect(by, what).toBe('lane');
  expect(answer.status, what).toBe(200);
  expect(JSON.parse(answer.body).code, what).toBe(code);
  const viaFastify = await injected(path, body);
  const fastifyId = lastReqId(s.log());
  expect(timeless(answer), what).toEqual(timeless(viaFastify));
  expect(linesOf(s.log(), laneId), what).toEqual(linesOf(s.log(), fastifyId));
  expect(linesOf(s.log(), laneId).some((l) => l.includes(`"route":"${path}"`) && l.includes('"status":200')), what).toBe(true);
  return answer;
}

describe('the key lanes answer exactly as the fastify routes', () => {
  it('keys/status: valid, suspended, revoked, expired, unknown and malformed keys', async () => {
    const [{ key: suspended, id: suspendedId }] = await s.admin.issueKeys({ itemId: 'desk', count: 1, expiresAt: null, licensee: null });
    const [{ key: revoked, id: revokedId }] = await s.admin.issueKeys({ itemId: 'desk', count: 1, expiresAt: null, licensee: null });
    const [{ key: expired }] = await s.admin.issueKeys({ itemId: 'desk', count: 1, expiresAt: new Date(s.clock.now() - 1000).toISOString(), licensee: null });
    await s.admin.suspend(suspendedId!);
    await s.admin.revoke(revokedId!);
    const cases: [string, string, string][] = [
      ['valid', desk, 'VALID'],
      ['suspended', suspended, 'SUSPENDED'],
      ['revoked', revoked, 'REVOKED'],
      ['expired', expired, 'EXPIRED'],
      ['unknown', generateLicenseKey(), 'NOT_FOUND'],
      ['malformed', 'not-a-key', 'MALFORMED_KEY'],
    ];
    for (const [what, key, code] of cases) await sameAsFastify(STATUS, { key }, code, what);
  });

  it('verify: a new machine, a known one, a floating seat, no seat free, verification off, unknown and malformed keys', async () => {
    const [{ key: quiet }] = await s.admin.issueKeys({ itemId: 'quiet', count: 1, expiresAt: null, licensee: null });
    const cases: [string, object, string][] = [
      ['a new machine', { key: desk, machine_fingerprint: 'laptop-1' }, 'VALID'],
      ['the same machine again', { key: desk, machine_fingerprint: 'laptop-1' }, 'VALID'],
      ['a floating seat', { key: fleet, machine_fingerprint: 'runner-1' }, 'VALID'],
      ['fields reversed', { machine_fingerprint: 'runner-1', key: fleet }, 'VALID'],
      ['verification off', { key: quiet, machine_fingerprint: 'laptop-1' }, 'VERIFICATION_DISABLED'],
      ['unknown', { key: generateLicenseKey(), machine_fingerprint: 'laptop-1' }, 'NOT_FOUND'],
      ['malformed', { key: 'not-a-key', machine_fingerprint: 'laptop-1' }, 'MALFORMED_KEY'],
    ];
    for (const [what, payload, code] of cases) await sameAsFastify(VERIFY, payload, code, what);
    // The floating key's one seat is runner-1's: another runner waits (retry_after), on both paths alike.
    const full = JSON.stringify({ key: fleet, machine_fingerprint: 'runner-2' });
    const { answer, by } = await whoAnswers(s.app.directRoutes, () => overHttp(VERIFY, full));
    expect(by).toBe('lane');
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'TOO_MANY_ACTIVATIONS', valid: false });
    expect(Object.keys(JSON.parse(answer.body))).toEqual(Object.keys(JSON.parse((await injected(VERIFY, full)).body)));
  });
});

describe('answers made from memory, without waiting', () => {
  /**
   * Sends `payload` (the lane, compared with the route as sameAsFastify does) until one answer was
   * made from memory (`kept` answered): on SQLite once the key's lookup is kept under an unchanged
   * database. On PostgreSQL nothing is kept, and `kept` never answers.
   */
  async function fromMemory(path: string, payload: object, code: string, kept: MockInstance): Promise<Answer> {
    let answer: Answer | undefined;
    const once = async (): Promise<boolean> => {
      kept.mockClear();
      answer = await sameAsFastify(path, payload, code, `${path} from memory`);
      return kept.mock.results.some((r) => r.value !== undefined);
    };
    if (s.databaseUrl) {
      for (let i = 0; i < 3; i++) expect(await once()).toBe(false);
    } else await expect.poll(once).toBe(true);
    return answer!;
  }

  it("keys/status and a known machine's verify, with the route's bytes and lines; a revoke by another connection is refused by the very next request", async () => {
    const [{ key, id }] = await s.admin.issueKeys({ itemId: 'desk', count: 1, expiresAt: null, licensee: 'Memo' });
    const status = vi.spyOn(Licenses.prototype, 'keptStatus');
    const verify = vi.spyOn(Licenses.prototype, 'keptVerify');
    try {
      await fromMemory(STATUS, { key }, 'VALID', status);
      // The first verify activates the machine (a write); the ones after it are a known machine's.
      await sameAsFastify(VERIFY, { key, machine_fingerprint: 'ci-9' }, 'VALID', 'activation');
      await fromMemory(VERIFY, { key, machine_fingerprint: 'ci-9' }, 'VALID', verify);
      // A second later the token is signed again, for that second: never an earlier one from memory.
      const iatOf = (a: Answer): number => JSON.parse(Buffer.from((JSON.parse(a.body) as { token: string }).token.split('.')[1]!, 'base64url').toString()).iat as number;
      s.clock.advance(1000);
      const later = await fromMemory(VERIFY, { key, machine_fingerprint: 'ci-9' }, 'VALID', verify);
      expect(iatOf(later)).toBe(Math.floor(s.clock.now() / 1000));
      await s.admin.revoke(id!);
      await sameAsFastify(STATUS, { key }, 'REVOKED', 'status after the revoke');
      await sameAsFastify(VERIFY, { key, machine_fingerprint: 'ci-9' }, 'REVOKED', 'verify after the revoke');
    } finally {
      status.mockRestore();
      verify.mockRestore();
    }
  });

  it('a key kept in memory expires with the clock', async () => {
    const [{ key }] = await s.admin.issueKeys({ itemId: 'desk', count: 1, expiresAt: new Date(s.clock.now() + 3_600_000).toISOString(), licensee: null });
    const status = vi.spyOn(Licenses.prototype, 'keptStatus');
    try {
      await fromMemory(STATUS, { key }, 'VALID', status);
      s.clock.advance(3_600_000);
      await fromMemory(STATUS, { key }, 'EXPIRED', status);
    } finally {
      status.mockRestore();
    }
  });

  it('an unknown key is never answered from memory: it takes its slot in the failure window', async () => {
    const status = vi.spyOn(Licenses.prototype, 'keptStatus');
    try {
      const unknown = generateLicenseKey();
      for (let i = 0; i < 3; i++) await sameAsFastify(STATUS, { key: unknown }, 'NOT_FOUND', 'unknown');
      expect(status.mock.results.every((r) => r.value === undefined)).toBe(true);
    } finally {
      status.mockRestore();
    }
  });
});

describe('what the key lanes leave to fastify', () => {
  it('a body unlike the route\'s goes to fastify with the bytes read, which answers 400 as from the start', async () => {
    const bodies: [string, string][] = [
      [STATUS, JSON.stringify({ key: desk, machine_fingerprint: 'x' })],
      [STATUS, JSON.stringify({ key: 7 })],
      [STATUS, JSON.stringify({ key: '' })],
      [STATUS, '{"key": '],
      [VERIFY, JSON.stringify({ key: desk })],
      [VERIFY, JSON.stringify({ key: desk, machine_fingerprint: 'm'.repeat(257) })],
      [VERIFY, `{"key": ${JSON.stringify(desk)}, "machine_fingerprint": "a", "__proto__": {"x": 1}}`],
    ];
    for (const [path, body] of bodies) {
      const { answer, by } = await whoAnswers(s.app.directRoutes, () => overHttp(path, body));
      expect(by, body).toBe('hand-off');
      expect(answer.status, body).toBe(400);
      expect(answer, body).toEqual(await injected(path, body));
    }
  });

  it('another content type or a query string is declined before a byte is read', async () => {
    const ok = JSON.stringify({ key: desk });
    for (const [what, send] of [
      ['text/plain', () => overHttp(STATUS, ok, { 'content-type': 'text/plain' })],
      ['a query string', () => overHttp(`${STATUS}?x=1`, ok)],
    ] as const) {
      const { by } = await whoAnswers(s.app.directRoutes, send);
      expect(by, what).toBe('fastify');
    }
  });
});

describe('keyFields', () => {
  it('takes exactly the route\'s fields, strings within the schema\'s lengths', () => {
    expect(keyFields(Buffer.from('{"key":"a"}'), false)).toEqual({ key: 'a', machine: '' });
    expect(keyFields(Buffer.from('{"key":"a","machine_fingerprint":"b"}'), false)).toBeUndefined();
    expect(keyFields(Buffer.from('{"key":"a"}'), true)).toBeUndefined();
    expect(keyFields(Buffer.from(JSON.stringify({ key: 'k'.repeat(201) })), false)).toBeUndefined();
    expect(keyFields(Buffer.from(JSON.stringify({ key: 'k'.repeat(200) })), false)).toBeDefined();
  });
});
