// License-key endpoints (spec marketplace-notes-license "License keys", issue 5): every route
// and outcome, the atomic activation maximum, tokens checked by jose against the served JWKS
// across a key rotation, the abuse limit, and no key in the server log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRemoteJWKSet, jwtVerify, decodeProtectedHeader } from 'jose';
import { startLicenseServer, type LicenseServer } from '../../../helpers/license-server.js';
import { tempDir } from '../../../helpers/tmp.js';
import { freshDatabaseUrl, marketplaceDatabaseUrl } from '../../../helpers/pg.js';
import { rotateSigningKey } from '../../../../src/crypto/signing.js';
import type { LicenseStore } from '../../../../src/store/license.js';
import type { IssuedKey } from '../../../../daemon/services/marketplace/license/admin.js';

let s: LicenseServer;
const issued: string[] = [];

async function post(path: string, body: unknown, remoteAddress = '10.0.0.1'): Promise<{ status: number; body: Record<string, unknown>; headers: Record<string, unknown> }> {
  const res = await s.app.inject({ method: 'POST', url: path, payload: body as object, remoteAddress });
  return { status: res.statusCode, body: res.json(), headers: res.headers };
}

async function issue(itemId: string, opts: { count?: number; max?: number | null; expiresAt?: string | null; licensee?: string } = {}): Promise<IssuedKey[]> {
  const keys = await s.admin.issueKeys({ itemId, count: opts.count ?? 1, maxActivations: opts.max, expiresAt: opts.expiresAt ?? null, licensee: opts.licensee ?? null });
  issued.push(...keys.map((k) => k.key));
  return keys;
}

/** A well-formed key (valid check part) that was never issued. */
async function unknownKey(): Promise<string> {
  const { generateLicenseKey } = await import('../../../../src/crypto/license-key.js');
  return generateLicenseKey();
}

function typo(key: string): string {
  const i = 6;
  const c = key[i] === 'A' ? 'B' : 'A';
  return key.slice(0, i) + c + key.slice(i + 1);
}

beforeAll(async () => {
  s = await startLicenseServer();
  await s.admin.createItem({ id: 'font-pro', name: 'Font Pro', licenseTemplate: 'Font Pro license\nCopyright {{year}}, licensed to {{licensee}} for {{item_name}} (key {{key_prefix}}).', maxActivations: 2, verification: true });
  await s.admin.createItem({ id: 'no-text', name: 'No Text', licenseTemplate: null, maxActivations: null, verification: false });
});

afterAll(async () => {
  await s?.close();
});

describe('license_text', () => {
  it('renders the item template as text/plain; charset=utf-8 (spec license_text)', async () => {
    const res = await s.app.inject({ method: 'GET', url: '/api/v1/items/font-pro/license.txt' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.body).toContain(`Copyright ${new Date(s.clock.now()).getUTCFullYear()}, licensed to the licensee for Font Pro`);
  });

  it('a key for the item personalises licensee and key prefix (Authorization: License)', async () => {
    const [k] = await issue('font-pro', { licensee: 'Ada Lovelace' });
    const res = await s.app.inject({ method: 'GET', url: '/api/v1/items/font-pro/license.txt', headers: { authorization: `License ${k!.key}` } });
    expect(res.body).toContain('licensed to Ada Lovelace for Font Pro');
    expect(res.body).toContain(`(key ${k!.key.slice(0, 9)})`);
    expect(res.body).not.toContain(k!.key);
  });

  it('404 when the item is missing or has no license configured (spec Errors)', async () => {
    for (const id of ['missing', 'no-text']) {
      const res = await s.app.inject({ method: 'GET', url: `/api/v1/items/${id}/license.txt` });
      expect(res.statusCode).toBe(404);
      expect(res.json().error).toMatch(/not found or has no license/);
    }
  });
});

describe('validate_key', () => {
  it('a valid key answers valid with code VALID and the license summary', async () => {
    const [k] = await issue('font-pro');
    const r = await post('/api/v1/keys/validate', { key: k!.key });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ valid: true, error: null, code: 'VALID', activated: false, license: { item_id: 'font-pro', activation_count: 0, max_activations: 2, remaining_activations: 2, created_at: k!.created_at } });
  });

  it('typos are rejected by the check part (MALFORMED_KEY); an unknown key is NOT_FOUND; both 200 (rule 4)', async () => {
    const [k] = await issue('font-pro');
    expect((await post('/api/v1/keys/validate', { key: typo(k!.key) })).body).toMatchObject({ valid: false, code: 'MALFORMED_KEY', license: null });
    expect((await post('/api/v1/keys/validate', { key: await unknownKey() })).body).toMatchObject({ valid: false, code: 'NOT_FOUND', error: 'license key not found', license: null });
  });

  it('accepts the key in lower case and without dashes', async () => {
    const [k] = await issue('font-pro');
    expect((await post('/api/v1/keys/validate', { key: k!.key.toLowerCase().replace(/-/g, '') })).body.code).toBe('VALID');
  });

  it('activate is idempotent for an active machine; an inactive machine is MACHINE_NOT_ACTIVATED; the maximum gives TOO_MANY_ACTIVATIONS', async () => {
    const [k] = await issue('font-pro');
    expect((await post('/api/v1/keys/validate', { key: k!.key, machine_id: 'm1' })).body).toMatchObject({ valid: false, code: 'MACHINE_NOT_ACTIVATED' });
    const first = await post('/api/v1/keys/validate', { key: k!.key, machine_id: 'm1', machine_name: 'ci-runner', activate: true });
    expect(first.body).toMatchObject({ valid: true, activated: true, license: { activation_count: 1, remaining_activations: 1 } });
    const again = await post('/api/v1/keys/validate', { key: k!.key, machine_id: 'm1', activate: true });
    expect(again.body).toMatchObject({ valid: true, activated: false, license: { activation_count: 1 } });
    expect((await post('/api/v1/keys/validate', { key: k!.key, machine_id: 'm1' })).body.code).toBe('VALID');
    expect((await post('/api/v1/keys/validate', { key: k!.key, machine_id: 'm2', activate: true })).body).toMatchObject({ valid: true, license: { activation_count: 2, remaining_activations: 0 } });
    const full = await post('/api/v1/keys/validate', { key: k!.key, machine_id: 'm3', activate: true });
    expect(full.status).toBe(200);
    expect(full.body).toMatchObject({ valid: false, code: 'TOO_MANY_ACTIVATIONS', activated: false, license: { activation_count: 2, remaining_activations: 0 } });
  });

  it('revoked and expired keys answer REVOKED and EXPIRED with the license summary', async () => {
    const [r, e] = await issue('font-pro', { count: 2 });
    await s.admin.revoke(r!.key);
    expect((await post('/api/v1/keys/validate', { key: r!.key })).body).toMatchObject({ valid: false, code: 'REVOKED', license: { item_id: 'font-pro' } });
    const [x] = await issue('font-pro', { expiresAt: new Date(s.clock.now() + 60_000).toISOString() });
    expect((await post('/api/v1/keys/validate', { key: x!.key })).body.code).toBe('VALID');
    s.clock.advance(61_000);
    expect((await post('/api/v1/keys/validate', { key: x!.key })).body).toMatchObject({ valid: false, code: 'EXPIRED', license: { expires_at: x!.expires_at } });
    expect((await post('/api/v1/keys/validate', { key: e!.key })).body.code).toBe('VALID');
  });

  it('rule 1: the JSON body is required; activate without machine_id and unknown fields are 400 {"error"}', async () => {
    const none = await s.app.inject({ method: 'POST', url: '/api/v1/keys/validate' });
    expect(none.statusCode).toBe(400);
    expect(typeof none.json().error).toBe('string');
    const [k] = await issue('font-pro');
    expect((await post('/api/v1/keys/validate', { key: k!.key, activate: true })).status).toBe(400);
    expect((await post('/api/v1/keys/validate', { key: k!.key, machine: 'x' })).status).toBe(400);
    expect((await post('/api/v1/keys/validate', { key: 5 })).status).toBe(400);
  });
});

describe('max_activations is enforced atomically', () => {
  it('20 concurrent activations of different machines against a limit of 5 give exactly 5', async () => {
    const [k] = await issue('font-pro', { max: 5 });
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        fetch(`${s.url}/api/v1/keys/validate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key: k!.key, machine_id: `machine-${i}`, activate: true }) }).then(
          (r) => r.json() as Promise<{ valid: boolean; code: string }>,
        ),
      ),
    );
    expect(answers.filter((a) => a.valid)).toHaveLength(5);
    expect(answers.filter((a) => a.code === 'TOO_MANY_ACTIVATIONS')).toHaveLength(15);
    expect((await post('/api/v1/keys/status', { key: k!.key })).body.license).toMatchObject({ activation_count: 5, remaining_activations: 0 });
  });
});

describe('key_status_post and the deprecated GET key_status', () => {
  it('answers without activating; null max_activations means unlimited (remaining null)', async () => {
    await s.admin.createItem({ id: 'unlimited', name: 'Unlimited', licenseTemplate: null, maxActivations: null, verification: false });
    const [k] = await issue('unlimited');
    await post('/api/v1/keys/validate', { key: k!.key, machine_id: 'a', activate: true });
    const r = await post('/api/v1/keys/status', { key: k!.key });
    expect(r.body).toEqual({
      valid: true,
      error: null,
      code: 'VALID',
      license: {
        item_id: 'unlimited',
        activation_count: 1,
        created_at: k!.created_at,
        max_activations: null,
        remaining_activations: null,
        expires_at: null,
        activation_policy: 'node-locked',
        lease_seconds: null,
        entitlements: [],
        suspended_at: null,
      },
    });
  });

  it('GET gives the same answer plus Deprecation and Link rel="successor-version" headers (rule 2)', async () => {
    const [k] = await issue('font-pro');
    const viaPost = await post('/api/v1/keys/status', { key: k!.key });
    const viaGet = await s.app.inject({ method: 'GET', url: `/api/v1/keys/${k!.key}/status`, remoteAddress: '10.0.0.1' });
    expect(viaGet.statusCode).toBe(200);
    expect(viaGet.json()).toEqual(viaPost.body);
    expect(viaGet.headers.deprecation).toBe('@1767225600');
    expect(viaGet.headers.link).toBe('</api/v1/keys/status>; rel="successor-version"');
    expect(viaPost.headers.deprecation).toBeUndefined();
  });

  it('an unknown key is valid:false NOT_FOUND with license null', async () => {
    expect((await post('/api/v1/keys/status', { key: await unknownKey() })).body).toEqual({ valid: false, error: 'license key not found', code: 'NOT_FOUND', license: null });
  });
});

describe('deactivate_key and license_deactivate', () => {
  it('free exactly that machine slot', async () => {
    const [k] = await issue('font-pro');
    await post('/api/v1/keys/validate', { key: k!.key, machine_id: 'a', activate: true });
    await post('/api/v1/keys/validate', { key: k!.key, machine_id: 'b', activate: true });
    expect((await post('/api/v1/keys/deactivate', { key: k!.key, machine_id: 'a' })).body).toMatchObject({ success: true });
    expect((await post('/api/v1/keys/validate', { key: k!.key, machine_id: 'a' })).body.code).toBe('MACHINE_NOT_ACTIVATED');
    expect((await post('/api/v1/keys/validate', { key: k!.key, machine_id: 'b' })).body.code).toBe('VALID');
    expect((await post('/api/v1/license/deactivate', { key: k!.key, machine_fingerprint: 'b' })).body).toMatchObject({ success: true });
    expect((await post('/api/v1/keys/status', { key: k!.key })).body.license).toMatchObject({ activation_count: 0, remaining_activations: 2 });
  });

  it('an unknown key or machine is success:false with a message, never an exception', async () => {
    const [k] = await issue('font-pro');
    const unknownMachine = await post('/api/v1/keys/deactivate', { key: k!.key, machine_id: 'never' });
    expect(unknownMachine).toMatchObject({ status: 200, body: { success: false, message: 'the machine is not activated for this license key' } });
    const unknown = await post('/api/v1/license/deactivate', { key: await unknownKey(), machine_fingerprint: 'x' });
    expect(unknown).toMatchObject({ status: 200, body: { success: false, message: 'license key not found' } });
    expect((await post('/api/v1/keys/deactivate', { key: 'garbage', machine_id: 'x' })).body).toMatchObject({ success: false, code: 'MALFORMED_KEY' });
  });
});

describe('license_verify and the JWKS', () => {
  it('with verification disabled: a documented valid:false answer (VERIFICATION_DISABLED)', async () => {
    await s.admin.createItem({ id: 'plain', name: 'Plain', licenseTemplate: null, maxActivations: null, verification: false });
    const [k] = await issue('plain');
    expect((await post('/api/v1/license/verify', { key: k!.key, machine_fingerprint: 'fp' })).body).toEqual({
      valid: false,
      error: 'offline verification is not enabled for this item',
      expires_in: null,
      token: null,
      code: 'VERIFICATION_DISABLED',
      lease_expires_at: null,
      retry_after: null,
      entitlements: null,
    });
  });

  it('activates the fingerprint and returns a 7-day EdDSA token that jose verifies against the served JWKS, before and after a rotation (rule 3)', async () => {
    const [k] = await issue('font-pro');
    const jwks = createRemoteJWKSet(new URL(`${s.url}/api/v1/license/jwks.json`), { cacheMaxAge: 0, cooldownDuration: 0 });
    const before = await post('/api/v1/license/verify', { key: k!.key, machine_fingerprint: 'fp-1' });
    expect(before.body).toMatchObject({ valid: true, error: null, expires_in: 604800 });
    const token = before.body.token as string;
    const header = decodeProtectedHeader(token);
    expect(header).toMatchObject({ alg: 'EdDSA', typ: 'JWT' });
    expect(typeof header.kid).toBe('string');
    const now = new Date(s.clock.now());
    const { payload } = await jwtVerify(token, jwks, { issuer: 'mkt-marketplace', currentDate: now });
    expect(payload).toMatchObject({ license: k!.id, sub: k!.id, item: 'font-pro' });
    expect(payload.exp! - payload.iat!).toBe(604800);
    expect(payload.fph).not.toBe('fp-1');
    expect((await post('/api/v1/keys/validate', { key: k!.key, machine_id: 'fp-1' })).body.code).toBe('VALID');

    await s.admin.rotateSigningKey();
    // The server hears the rotation announced (no restart, no SIGHUP).
    const jwksNow = async () => ((await s.app.inject({ method: 'GET', url: '/api/v1/license/jwks.json' })).json() as { keys: { kid: string }[] }).keys;
    await expect.poll(async () => (await jwksNow()).length, { timeout: 5_000 }).toBe(2);
    const served = { keys: await jwksNow() };
    expect(served.keys.map((x) => x.kid)).toContain(header.kid);
    expect(served.keys).toHaveLength(2);
    const after = await post('/api/v1/license/verify', { key: k!.key, machine_fingerprint: 'fp-1' });
    const newToken = after.body.token as string;
    expect(decodeProtectedHeader(newToken).kid).not.toBe(header.kid);
    await expect(jwtVerify(newToken, jwks, { currentDate: now })).resolves.toBeTruthy();
    await expect(jwtVerify(token, jwks, { currentDate: now })).resolves.toBeTruthy();
    // a tampered token is rejected by the same independent library
    const [h, p, sig] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...payload, item: 'other' })).toString('base64url');
    await expect(jwtVerify(`${h}.${forged}.${sig}`, jwks, { currentDate: now })).rejects.toThrow();
    expect(p).toBeTruthy();
  });

  it('verify refuses a full key (TOO_MANY_ACTIVATIONS) and unknown keys, all 200', async () => {
    const [k] = await issue('font-pro', { max: 1 });
    expect((await post('/api/v1/license/verify', { key: k!.key, machine_fingerprint: 'one' })).body.valid).toBe(true);
    expect((await post('/api/v1/license/verify', { key: k!.key, machine_fingerprint: 'two' })).body).toMatchObject({ valid: false, code: 'TOO_MANY_ACTIVATIONS', token: null });
    expect((await post('/api/v1/license/verify', { key: await unknownKey(), machine_fingerprint: 'two' })).body).toMatchObject({ valid: false, code: 'NOT_FOUND' });
  });
});

describe('abuse limit', () => {
  it('failed lookups through license.txt count as well', async () => {
    const addr = '198.51.100.9';
    for (let i = 0; i < 20; i++) {
      const r = await s.app.inject({ method: 'GET', url: '/api/v1/items/font-pro/license.txt', remoteAddress: addr, headers: { authorization: `License ${await unknownKey()}` } });
      expect(r.statusCode).toBe(200);
    }
    expect((await post('/api/v1/keys/status', { key: await unknownKey() }, addr)).status).toBe(429);
  });

  it('20 failed lookups from one address in 10 minutes: then 429 with Retry-After, for that address only', async () => {
    const addr = '192.0.2.77';
    for (let i = 0; i < 20; i++) expect((await post('/api/v1/keys/status', { key: await unknownKey() }, addr)).status).toBe(200);
    const [k] = await issue('font-pro');
    const blocked = await post('/api/v1/keys/status', { key: k!.key }, addr);
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect(blocked.body.error).toMatch(/too many failed/);
    expect((await post('/api/v1/keys/status', { key: k!.key }, '192.0.2.78')).body.code).toBe('VALID');
    // license.txt with a presented key is a lookup too (no unlimited oracle); without a key it is not.
    const text = (authorization?: string) => s.app.inject({ method: 'GET', url: '/api/v1/items/font-pro/license.txt', remoteAddress: addr, headers: authorization ? { authorization } : {} });
    expect((await text(`License ${k!.key}`)).statusCode).toBe(429);
    expect((await text()).statusCode).toBe(200);
    s.clock.advance(Number(blocked.headers['retry-after']) * 1000);
    expect((await post('/api/v1/keys/status', { key: k!.key }, addr)).status).toBe(200);
  });
});

describe('abuse limit under concurrency and restarts (issue 11: limiters reserve before they spend)', () => {
  it('30 concurrent unknown-key lookups from one address: exactly 20 are looked up, 10 answer 429', async () => {
    const addr = '203.0.113.30';
    const keys = await Promise.all(Array.from({ length: 30 }, () => unknownKey()));
    const answers = await Promise.all(keys.map((key) => post('/api/v1/keys/status', { key }, addr)));
    expect(answers.filter((r) => r.status === 200 && r.body.code === 'NOT_FOUND')).toHaveLength(20);
    const limited = answers.filter((r) => r.status === 429);
    expect(limited).toHaveLength(10);
    for (const r of limited) expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('two instances sharing one database never let more than the limit through together', async () => {
    const dir = tempDir('mkt-license-shared-');
    const flags = { licenseAbuseFailures: 20, licenseAbuseWindowSeconds: 600 };
    const databaseUrl = await marketplaceDatabaseUrl();
    try {
      const a = await startLicenseServer({ dataDir: dir.path, databaseUrl, flags, listen: false, now: s.clock.now() });
      const b = await startLicenseServer({ dataDir: dir.path, databaseUrl, flags, listen: false, now: s.clock.now() });
      try {
        const keys = await Promise.all(Array.from({ length: 30 }, () => unknownKey()));
        const answers = await Promise.all(keys.map((key, i) => (i % 2 ? a : b).app.inject({ method: 'POST', url: '/api/v1/keys/status', payload: { key }, remoteAddress: '203.0.113.33' })));
        expect(answers.filter((r) => r.statusCode === 200)).toHaveLength(20);
        expect(answers.filter((r) => r.statusCode === 429)).toHaveLength(10);
      } finally {
        await a.close();
        await b.close();
      }
    } finally {
      dir.remove();
    }
  });

  it('good lookups give their slot back: 30 concurrent valid lookups all answer', async () => {
    const [k] = await issue('font-pro');
    const answers = await Promise.all(Array.from({ length: 30 }, () => post('/api/v1/keys/status', { key: k!.key }, '203.0.113.31')));
    expect(answers.map((r) => r.body.code)).toEqual(Array(30).fill('VALID'));
  });

  it('the window survives a restart on the same data dir', async () => {
    const dir = tempDir('mkt-license-limit-');
    const flags = { licenseAbuseFailures: 2, licenseAbuseWindowSeconds: 600 };
    const databaseUrl = await marketplaceDatabaseUrl();
    try {
      const first = await startLicenseServer({ dataDir: dir.path, databaseUrl, flags, listen: false, now: s.clock.now() });
      const lookup = async (srv: LicenseServer) => (await srv.app.inject({ method: 'POST', url: '/api/v1/keys/status', payload: { key: await unknownKey() }, remoteAddress: '203.0.113.32' })).statusCode;
      expect([await lookup(first), await lookup(first)]).toEqual([200, 200]);
      await first.close();
      const second = await startLicenseServer({ dataDir: dir.path, databaseUrl, flags, listen: false, now: s.clock.now() });
      try {
        expect(await lookup(second)).toBe(429);
      } finally {
        await second.close();
      }
    } finally {
      dir.remove();
    }
  });
});

describe('two instances on one PostgreSQL database (issue 12)', () => {
  let a: LicenseServer;
  let b: LicenseServer;
  const dir = tempDir('mkt-license-pg-');
  const flags = { licenseAbuseFailures: 20, licenseAbuseWindowSeconds: 600 };

  beforeAll(async () => {
    const databaseUrl = await freshDatabaseUrl();
    // `a` polls the version row often; `b` practically never, so only a notification can reach it.
    a = await startLicenseServer({ dataDir: dir.path, databaseUrl, flags: { ...flags, licenseKeysPollMs: 300 } });
    b = await startLicenseServer({ dataDir: dir.path, databaseUrl, flags: { ...flags, licenseKeysPollMs: 3_600_000 } });
    await a.admin.createItem({ id: 'tool', name: 'Tool', licenseTemplate: null, maxActivations: 3, verification: true });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    dir.remove();
  });

  const call = (srv: LicenseServer, path: string, body: unknown) =>
    fetch(`${srv.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));

  it('30 concurrent activations of a max-3 key spread over both give exactly 3', async () => {
    const [k] = await a.admin.issueKeys({ itemId: 'tool', count: 1, expiresAt: null, licensee: null });
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => call(i % 2 ? a : b, '/api/v1/keys/validate', { key: k!.key, machine_id: `m-${i}`, activate: true })));
    expect(answers.filter((r) => r.body.valid === true)).toHaveLength(3);
    expect(answers.filter((r) => r.body.code === 'TOO_MANY_ACTIVATIONS')).toHaveLength(27);
    for (const srv of [a, b]) expect((await call(srv, '/api/v1/keys/status', { key: k!.key })).body.license).toMatchObject({ activation_count: 3, remaining_activations: 0 });
  });

  it('a signing-key rotation on one instance is used by the other without a restart', async () => {
    const [k] = await a.admin.issueKeys({ itemId: 'tool', count: 1, expiresAt: null, licensee: null });
    const kidOf = async (srv: LicenseServer) => decodeProtectedHeader((await call(srv, '/api/v1/license/verify', { key: k!.key, machine_fingerprint: 'fp' })).body.token as string).kid;
    const jwksKids = async (srv: LicenseServer) => ((await (await fetch(`${srv.url}/api/v1/license/jwks.json`)).json()) as { keys: { kid: string }[] }).keys.map((x) => x.kid);
    const before = await kidOf(b);
    expect(await kidOf(a)).toBe(before);
    // Announced: the other instance hears it (LISTEN/NOTIFY).
    const { kid } = await a.admin.rotateSigningKey();
    await expect.poll(() => jwksKids(b), { timeout: 5_000, interval: 20 }).toContain(kid);
    expect(await jwksKids(b)).toContain(before);
    expect(await kidOf(b)).toBe(kid);
    const token = (await call(b, '/api/v1/license/verify', { key: k!.key, machine_fingerprint: 'fp' })).body.token as string;
    const { payload } = await jwtVerify(token, createRemoteJWKSet(new URL(`${a.url}/api/v1/license/jwks.json`)), { currentDate: new Date(b.clock.now()) });
    expect(payload.license).toBe(k!.id);
    // Not announced (a notification lost): the version row is polled, so the instance follows anyway.
    const silent: LicenseStore = Object.assign(Object.create(a.license) as LicenseStore, { announceSigningKeys: async () => undefined });
    const quiet = await rotateSigningKey(silent, a.clock.now(), 7 * 86_400_000);
    await expect.poll(() => kidOf(a), { timeout: 5_000, interval: 50 }).toBe(quiet.kid);
    // SIGHUP re-reads at once.
    await b.reload();
    expect(await kidOf(b)).toBe(quiet.kid);
  });

  it('the abuse limit holds across the two instances', async () => {
    const keys = await Promise.all(Array.from({ length: 30 }, () => unknownKey()));
    const answers = await Promise.all(keys.map((key, i) => (i % 2 ? a : b).app.inject({ method: 'POST', url: '/api/v1/keys/status', payload: { key }, remoteAddress: '203.0.113.90' })));
    expect(answers.filter((r) => r.statusCode === 200)).toHaveLength(20);
    expect(answers.filter((r) => r.statusCode === 429)).toHaveLength(10);
  });
});

describe('issue 33 over HTTP: floating seats, heartbeat, entitlements, suspension, budget', () => {
  it('license_heartbeat renews a live lease (RENEWED); a lapsed or foreign one is MACHINE_NOT_ACTIVATED; a full key says retry_after; deactivate releases', async () => {
    await s.admin.createItem({ id: 'fleet', name: 'Fleet', licenseTemplate: null, maxActivations: 1, verification: true, activation: 'floating', leaseSeconds: 300 });
    const [k, other] = await issue('fleet', { count: 2 });
    const v = await post('/api/v1/license/verify', { key: k!.key, machine_fingerprint: 'runner-1' });
    expect(v.body).toMatchObject({ valid: true, code: 'VALID', retry_after: null, entitlements: [] });
    expect(v.body.expires_in).toBeLessThanOrEqual(300);
    const hb = await post('/api/v1/license/heartbeat', { key: k!.key, machine_fingerprint: 'runner-1' });
    expect(hb).toMatchObject({ status: 200, body: { success: true, code: 'RENEWED', message: 'lease renewed' } });
    expect(Date.parse(hb.body.lease_expires_at as string)).toBeGreaterThanOrEqual(Date.parse(v.body.lease_expires_at as string));
    expect((await post('/api/v1/license/heartbeat', { key: other!.key, machine_fingerprint: 'runner-1' })).body).toMatchObject({ success: false, code: 'MACHINE_NOT_ACTIVATED', lease_expires_at: null });
    const full = await post('/api/v1/keys/validate', { key: k!.key, machine_id: 'runner-2', activate: true });
    expect(full.body).toMatchObject({ valid: false, code: 'TOO_MANY_ACTIVATIONS', lease_expires_at: null, license: { activation_count: 1, remaining_activations: 0, activation_policy: 'floating', lease_seconds: 300 } });
    expect(full.body.retry_after).toBeGreaterThanOrEqual(299);
    expect((await post('/api/v1/license/deactivate', { key: k!.key, machine_fingerprint: 'runner-1' })).body).toMatchObject({ success: true, code: 'RELEASED', retry_after: null, next_allowed_at: null });
    expect((await post('/api/v1/keys/validate', { key: k!.key, machine_id: 'runner-2', activate: true })).body).toMatchObject({ valid: true, activated: true });
    // The abuse guard covers it: a guessed key counts, bad bodies are 400 {"error"}.
    expect((await post('/api/v1/license/heartbeat', { key: k!.key })).status).toBe(400);
    expect((await post('/api/v1/license/heartbeat', { key: await unknownKey(), machine_fingerprint: 'x' })).body).toMatchObject({ success: false, code: 'NOT_FOUND' });
  });

  it('validate asks for entitlements (ENTITLEMENT_MISSING; a malformed name is 400); a suspended key is SUSPENDED; a node-locked budget answers DEACTIVATION_LIMIT', async () => {
    await s.admin.createItem({ id: 'budgeted', name: 'Budgeted', licenseTemplate: null, maxActivations: 5, verification: true, maxDeactivations: 1, deactivationWindowSeconds: 86_400 });
    const [k] = await s.admin.issueKeys({ itemId: 'budgeted', count: 1, expiresAt: null, licensee: null, entitlements: ['sso'] });
    issued.push(k!.key);
    expect((await post('/api/v1/keys/validate', { key: k!.key, entitlements: ['sso'] })).body).toMatchObject({ valid: true, license: { entitlements: ['sso'] } });
    expect((await post('/api/v1/keys/validate', { key: k!.key, entitlements: ['export-pdf'] })).body).toMatchObject({ valid: false, code: 'ENTITLEMENT_MISSING', error: 'the license key lacks the entitlement: export-pdf' });
    const bad = await post('/api/v1/keys/validate', { key: k!.key, entitlements: ['Not A Name'] });
    expect(bad.status).toBe(400);
    expect(typeof bad.body.error).toBe('string');
    for (const m of ['a', 'b']) await post('/api/v1/keys/validate', { key: k!.key, machine_id: m, activate: true });
    expect((await post('/api/v1/keys/deactivate', { key: k!.key, machine_id: 'a' })).body).toMatchObject({ success: true, code: 'DEACTIVATED' });
    const limited = await post('/api/v1/keys/deactivate', { key: k!.key, machine_id: 'b' });
    expect(limited.body).toMatchObject({ success: false, code: 'DEACTIVATION_LIMIT' });
    expect(limited.body.retry_after).toBeGreaterThan(86_000);
    expect(typeof limited.body.next_allowed_at).toBe('string');
    await s.admin.suspend(k!.id);
    for (const [path, body] of [
      ['/api/v1/keys/status', { key: k!.key }],
      ['/api/v1/keys/validate', { key: k!.key, machine_id: 'b' }],
      ['/api/v1/license/verify', { key: k!.key, machine_fingerprint: 'b' }],
      ['/api/v1/license/heartbeat', { key: k!.key, machine_fingerprint: 'b' }],
    ] as const) expect((await post(path, body)).body.code, path).toBe('SUSPENDED');
  });
});

describe('OpenAPI and logging', () => {
  it('documents every license operation; the GET status form is deprecated', async () => {
    const doc = (await s.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, { operationId: string; deprecated?: boolean }>> };
    const ops = Object.values(doc.paths).flatMap((p) => Object.values(p).map((o) => o.operationId));
    for (const id of ['license_text', 'validate_key', 'key_status_post', 'key_status', 'deactivate_key', 'license_deactivate', 'license_verify', 'license_heartbeat']) expect(ops).toContain(id);
    expect(doc.paths['/api/v1/keys/{key_code}/status']!.get!.deprecated).toBe(true);
  });

  it('a key never appears in the server log at any level', async () => {
    const [k] = await issue('font-pro');
    // Error paths too: malformed JSON around a key, a schema violation, an unknown route.
    await s.app.inject({ method: 'POST', url: '/api/v1/keys/status', headers: { 'content-type': 'application/json' }, payload: `{"key": "${k!.key}",` });
    await s.app.inject({ method: 'POST', url: '/api/v1/keys/status', payload: { key: k!.key, extra: k!.key } });
    await s.app.inject({ method: 'GET', url: `/api/v1/keys/${k!.key}/nothing` });
    const log = s.log();
    expect(log.length).toBeGreaterThan(1000);
    expect(log).toContain('/api/v1/keys/:key_code/status');
    for (const key of issued) {
      expect(log).not.toContain(key);
      expect(log).not.toContain(key.replace(/-/g, ''));
      expect(log.toLowerCase()).not.toContain(key.slice(4).toLowerCase());
    }
  });
});
