// Sync authentication (spec Authentication, issue 6 "Apps, users, tokens"): app key checks in the
// body, sign-in answering an HS256 JWT with user and app id, the same answer for unknown email and
// wrong password, and 401 for missing, expired, tampered, foreign and other-app tokens.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ExistingCallers, loadSyncSecret, tokenKey, type SyncCaller } from '../../../daemon/services/marketplace/sync/auth.js';
import { signSyncToken, verifySyncToken } from '../../../src/crypto/sync-token.js';
import { tempDir } from '../../helpers/tmp.js';
import { startSyncServer, type SyncServer } from '../../helpers/sync-server.js';

let s: SyncServer;
let app: { id: string; apiKey: string };
let other: { id: string; apiKey: string };
let ana: string;
const PASSWORD = 'correct horse battery staple';

beforeAll(async () => {
  s = await startSyncServer();
  app = await s.createApp('Notes', { min_charge_cents: 150, per_gb_tenths_of_cent_per_month: 40, annual_multiplier: 11, min_cap_bytes: 1000, max_cap_bytes: 9000 });
  other = await s.createApp('Photos');
  ana = await s.addUser('ana', 'ana@example.com', PASSWORD);
});
afterAll(async () => {
  await s.close();
});

const decode = (part: string): Record<string, unknown> => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;

describe('ExistingCallers (the bearer check of app and user)', () => {
  const caller = (n: number): SyncCaller => ({ appId: 'app', userId: `u${n}` });

  it('remembers a yes, asks again after a no, and forgets the least recently used past its bound', async () => {
    const asked: string[] = [];
    const existing = new Set(['u1', 'u2', 'u3']);
    const callers = new ExistingCallers(async (c) => {
      asked.push(c.userId);
      return existing.has(c.userId);
    }, 2);
    const check = (c: SyncCaller): Promise<boolean> => callers.exists(c);
    expect(await check(caller(1))).toBe(true);
    expect(await check(caller(1))).toBe(true);
    expect(asked).toEqual(['u1']);
    // A no is not remembered: the user may be created since.
    expect(await check(caller(4))).toBe(false);
    existing.add('u4');
    expect(await check(caller(4))).toBe(true);
    expect(asked).toEqual(['u1', 'u4', 'u4']);
    // Kept: u1 and u4. Using u1 makes u4 the least recently used, which u2 pushes out.
    expect(await check(caller(1))).toBe(true);
    expect(await check(caller(2))).toBe(true);
    asked.length = 0;
    expect(await check(caller(1))).toBe(true);
    expect(await check(caller(2))).toBe(true);
    expect(asked).toEqual([]);
    expect(await check(caller(4))).toBe(true);
    expect(asked).toEqual(['u4']);
    // The pair is the key: the same user of another app is asked about.
    expect(await check({ appId: 'other', userId: 'u1' })).toBe(true);
    expect(asked).toEqual(['u4', 'u1']);
  });

  it('knows a caller without asking only once a yes is remembered, and a no never', async () => {
    const asked: string[] = [];
    const callers = new ExistingCallers(async (c) => {
      asked.push(c.userId);
      return c.userId !== 'u9';
    }, 2);
    expect(callers.known(caller(1))).toBe(false);
    expect(await callers.exists(caller(9))).toBe(false);
    expect(callers.known(caller(9))).toBe(false);
    expect(await callers.exists(caller(1))).toBe(true);
    expect(callers.known(caller(1))).toBe(true);
    expect(asked).toEqual(['u9', 'u1']);
    // known() counts as a use: after it, u2 is the least recently used, and u3 pushes it out.
    expect(await callers.exists(caller(2))).toBe(true);
    expect(callers.known(caller(1))).toBe(true);
    expect(await callers.exists(caller(3))).toBe(true);
    expect(callers.known(caller(2))).toBe(false);
    expect(callers.known(caller(1))).toBe(true);
  });
});

describe('validate_app and get_app_pricing (key in the body)', () => {
  it('names the app of a valid key and answers 401 for an unknown one', async () => {
    expect(await s.call('POST', '/api/v1/sync/validate-app', { body: { api_key: app.apiKey } })).toEqual({ status: 200, body: { valid: true, app_id: app.id, app_name: 'Notes' } });
    const bad = await s.call('POST', '/api/v1/sync/validate-app', { body: { api_key: app.apiKey + 'x' } });
    expect(bad).toEqual({ status: 401, body: { error: 'invalid API key' } });
    // Not in a query string: the body is required.
    const q = await s.call('POST', `/api/v1/sync/validate-app?api_key=${app.apiKey}`, { body: {} });
    expect(q.status).toBe(400);
  });

  it('returns the constants the app was created with', async () => {
    const r = await s.call('POST', '/api/v1/sync/app/pricing', { body: { api_key: app.apiKey } });
    expect(r).toEqual({ status: 200, body: { app_name: 'Notes', min_charge_cents: 150, per_gb_tenths_of_cent_per_month: 40, annual_multiplier: 11, min_cap_bytes: 1000, max_cap_bytes: 9000 } });
    expect((await s.call('POST', '/api/v1/sync/app/pricing', { body: { api_key: 'nope' } })).status).toBe(401);
  });
});

describe('sync_auth', () => {
  it('answers a short-lived HS256 JWT carrying user id and app id', async () => {
    const r = await s.call<Record<string, unknown>>('POST', '/api/v1/sync/auth', { body: { api_key: app.apiKey, email: 'ANA@example.com', password: PASSWORD } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, user_id: ana, app_id: app.id, expires_at: '2026-03-01T13:00:00.000Z' });
    const [h, p] = (r.body.token as string).split('.');
    expect(decode(h!)).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(decode(p!)).toMatchObject({ sub: ana, app: app.id, iat: Date.parse('2026-03-01T12:00:00Z') / 1000, exp: Date.parse('2026-03-01T13:00:00Z') / 1000 });
  });

  it('gives the same answer for a wrong password, an unknown email, a user without password; 401 for a bad app key', async () => {
    await s.call('POST', '/api/v1/sync/auth', { body: { api_key: app.apiKey, email: 'x', password: 'y' } });
    const wrong = await s.call('POST', '/api/v1/sync/auth', { body: { api_key: app.apiKey, email: 'ana@example.com', password: 'wrong' } });
    const unknown = await s.call('POST', '/api/v1/sync/auth', { body: { api_key: app.apiKey, email: 'nobody@example.com', password: PASSWORD } });
    expect(wrong).toEqual({ status: 401, body: { error: 'invalid email or password' } });
    expect(unknown).toEqual(wrong);
    await s.addUser('nopass', 'nopass@example.com');
    expect(await s.call('POST', '/api/v1/sync/auth', { body: { api_key: app.apiKey, email: 'nopass@example.com', password: PASSWORD } })).toEqual(wrong);
    const badKey = await s.call('POST', '/api/v1/sync/auth', { body: { api_key: 'mkt_app_nope', email: 'ana@example.com', password: PASSWORD } });
    expect(badKey).toEqual({ status: 401, body: { error: 'invalid API key' } });
    expect((await s.call('POST', '/api/v1/sync/auth', { body: { api_key: app.apiKey, email: 'ana@example.com' } })).status).toBe(400);
  });

  it('keeps the secret in a 0600 file and passwords and tokens out of the log', async () => {
    const token = await s.signIn(app.apiKey, 'ana@example.com', PASSWORD);
    await s.call('GET', '/api/v1/sync/account', { token });
    expect(statSync(join(s.dataDir, 'sync-secret')).mode & 0o777).toBe(0o600);
    expect(s.log()).toContain('sync sign-in');
    expect(s.log()).not.toContain(PASSWORD);
    expect(s.log()).not.toContain(token);
    expect(s.log()).not.toContain(app.apiKey);
  });
});

describe('bearer endpoints', () => {
  it('answer the token owner and reject missing, malformed, expired, tampered, foreign and other-app tokens with 401', async () => {
    const token = await s.signIn(app.apiKey, 'ana@example.com', PASSWORD);
    const ok = await s.call('GET', '/api/v1/sync/account', { token });
    expect(ok).toEqual({ status: 200, body: { user_id: ana, email: 'ana@example.com', username: 'ana', created_at: expect.any(String) as string, app_id: app.id, app_name: 'Notes' } });

    const missing = await s.call('GET', '/api/v1/sync/account');
    expect(missing.status).toBe(401);
    expect(missing.body.error).toMatch(/missing bearer token/);
    expect((await s.call('GET', '/api/v1/sync/account', { headers: { authorization: `Token ${token}` } })).status).toBe(401);
    expect((await s.call('GET', '/api/v1/sync/account', { token: 'a.b.c' })).status).toBe(401);

    // Tampered: the app claim rewritten to another app, signature kept.
    const [h, p, sig] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...decode(p!), app: other.id })).toString('base64url');
    expect((await s.call('GET', '/api/v1/sync/account', { token: `${h}.${forged}.${sig}` })).status).toBe(401);

    // Foreign: a well-formed token of another marketplace (another secret).
    const elsewhere = tempDir();
    const foreign = signSyncToken(tokenKey(loadSyncSecret(elsewhere.path)), { userId: ana, appId: app.id, nowMs: s.clock.now(), lifetimeSeconds: 3600 }).token;
    elsewhere.remove();
    expect((await s.call('GET', '/api/v1/sync/account', { token: foreign })).status).toBe(401);

    // Other app: signed here, but for an app this server does not have.
    const key = tokenKey(loadSyncSecret(s.dataDir));
    const ghost = signSyncToken(key, { userId: ana, appId: 'no-such-app', nowMs: s.clock.now(), lifetimeSeconds: 3600 }).token;
    expect((await s.call('GET', '/api/v1/sync/status', { token: ghost })).status).toBe(401);
    // A refusal is not remembered as anything: asked again, still refused.
    expect((await s.call('GET', '/api/v1/sync/status', { token: ghost })).status).toBe(401);
    const ghostUser = signSyncToken(key, { userId: 'no-such-user', appId: app.id, nowMs: s.clock.now(), lifetimeSeconds: 3600 }).token;
    expect((await s.call('GET', '/api/v1/sync/status', { token: ghostUser })).status).toBe(401);

    // A token of the other app works there and sees that app only.
    const photos = await s.signIn(other.apiKey, 'ana@example.com', PASSWORD);
    expect((await s.call('GET', '/api/v1/sync/account', { token: photos })).body).toMatchObject({ app_id: other.id, app_name: 'Photos' });

    // Expired: one hour later (the service clock) it is refused.
    s.clock.advance(3599_000);
    expect((await s.call('GET', '/api/v1/sync/account', { token })).status).toBe(200);
    s.clock.advance(1_000);
    const expired = await s.call('GET', '/api/v1/sync/account', { token });
    expect(expired).toEqual({ status: 401, body: { error: 'invalid or expired token' } });
  });

  it('status reports the free allowance and empty counters for a new user', async () => {
    const token = await s.signIn(app.apiKey, 'ana@example.com', PASSWORD);
    const r = await s.call('GET', '/api/v1/sync/status', { token });
    expect(r).toEqual({
      status: 200,
      body: {
        user_id: ana,
        app_id: app.id,
        cursor: 0,
        entry_count: 0,
        device_count: 0,
        key_version: null,
        key_id: null,
        rotation_in_progress: false,
        blob_count: 0,
        storage_used_bytes: 0,
        storage_cap_bytes: 1024 ** 3,
        subscription_active: false,
      },
    });
    // Storage use is what blob confirm reckons: a confirmed one-shot blob counts.
    const bytes = Buffer.from('ciphertext bytes of a blob');
    const hash = 'ab'.repeat(32);
    const up = await s.call<{ upload_url: string }>('POST', '/api/v1/sync/blobs/upload', { token, body: { hash, size_bytes: bytes.length } });
    expect((await fetch(up.body.upload_url, { method: 'PUT', body: bytes })).ok).toBe(true);
    expect((await s.call('POST', '/api/v1/sync/blobs/confirm', { token, body: { hash } })).status).toBe(204);
    expect((await s.call('GET', '/api/v1/sync/status', { token })).body).toMatchObject({ blob_count: 1, storage_used_bytes: bytes.length, storage_cap_bytes: 1024 ** 3 });
  });
});

describe('token lifetime', () => {
  it('follows the service setting, and a bad setting stops the start', async () => {
    const short = await startSyncServer({ flags: { syncTokenLifetimeSeconds: 600 } });
    try {
      const a = await short.createApp('Short');
      await short.addUser('ana', 'ana@example.com', PASSWORD);
      const r = await short.call('POST', '/api/v1/sync/auth', { body: { api_key: a.apiKey, email: 'ana@example.com', password: PASSWORD } });
      expect(r.body).toMatchObject({ expires_in: 600 });
      short.clock.advance(600_000);
      expect((await short.call('GET', '/api/v1/sync/account', { token: r.body.token as string })).status).toBe(401);
    } finally {
      await short.close();
    }
    await expect(startSyncServer({ flags: { syncTokenLifetimeSeconds: 5 } })).rejects.toThrow(/MKT_SYNC_TOKEN_LIFETIME_SECONDS/);
  });
});

describe('sign-in limit', () => {
  it('answers 429 with Retry-After after too many failed sign-ins from one address, until the window ends', async () => {
    const guarded = await startSyncServer({ flags: { syncSignInFailures: 3, syncSignInWindowSeconds: 600 }, now: '2026-03-01T12:00:00.000Z' });
    try {
      const a = await guarded.createApp('Guarded');
      await guarded.addUser('ana', 'ana@example.com', PASSWORD);
      const attempt = (password: string) => guarded.call('POST', '/api/v1/sync/auth', { body: { api_key: a.apiKey, email: 'ana@example.com', password } });
      expect((await attempt(PASSWORD)).status).toBe(200);
      for (let i = 0; i < 3; i++) expect((await attempt('wrong')).status).toBe(401);
      // Even the right password is refused now: nothing is checked until the window ends.
      const limited = await guarded.call('POST', '/api/v1/sync/auth', { body: { api_key: a.apiKey, email: 'ana@example.com', password: PASSWORD } });
      expect(limited.status).toBe(429);
      expect(limited.body.error).toMatch(/too many failed sign-ins/);
      const res = await fetch(`${guarded.url}/api/v1/sync/auth`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: a.apiKey, email: 'x@example.com', password: 'y' }) });
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('600');
      guarded.clock.advance(600_000);
      expect((await attempt(PASSWORD)).status).toBe(200);
    } finally {
      await guarded.close();
    }
  });
});

describe('sign-in limit under concurrency and restarts (issue 11: the limit raced)', () => {
  it('30 parallel wrong-password sign-ins: at most 10 get their password checked (401), the rest 429 with Retry-After', async () => {
    const guarded = await startSyncServer({ now: '2026-03-01T12:00:00.000Z' });
    try {
      const a = await guarded.createApp('Raced');
      await guarded.addUser('ana', 'ana@example.com', PASSWORD);
      const answers = await Promise.all(
        Array.from({ length: 30 }, async () => {
          const res = await fetch(`${guarded.url}/api/v1/sync/auth`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: a.apiKey, email: 'ana@example.com', password: 'wrong' }) });
          return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as { error: string } };
        }),
      );
      expect(answers.filter((r) => r.status === 401)).toHaveLength(10);
      const limited = answers.filter((r) => r.status === 429);
      expect(limited).toHaveLength(20);
      for (const r of limited) {
        expect(r.retryAfter).toBe('900');
        expect(r.body.error).toMatch(/too many failed sign-ins/);
      }
    } finally {
      await guarded.close();
    }
  });

  it('the window survives a restart on the same data dir', async () => {
    const dir = tempDir('mkt-sync-limit-');
    try {
      const flags = { syncSignInFailures: 2, syncSignInWindowSeconds: 600 };
      const first = await startSyncServer({ dataDir: dir.path, flags });
      const a = await first.createApp('Kept');
      await first.addUser('ana', 'ana@example.com', PASSWORD);
      const attempt = (srv: SyncServer, password: string) => srv.call('POST', '/api/v1/sync/auth', { body: { api_key: a.apiKey, email: 'ana@example.com', password } });
      for (let i = 0; i < 2; i++) expect((await attempt(first, 'wrong')).status).toBe(401);
      await first.close();
      const second = await startSyncServer({ dataDir: dir.path, flags });
      try {
        expect((await attempt(second, PASSWORD)).status).toBe(429);
      } finally {
        await second.close();
      }
    } finally {
      dir.remove();
    }
  });
});

describe('OpenAPI', () => {
  it('documents every sync operation of this area, bearer ones with the bearer scheme', async () => {
    const doc = (await (await fetch(`${s.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, { operationId: string; security?: unknown[] }>> };
    const ops = new Map<string, unknown[] | undefined>();
    for (const [path, methods] of Object.entries(doc.paths)) {
      if (!path.startsWith('/api/v1/sync/')) continue;
      for (const op of Object.values(methods)) ops.set(op.operationId, op.security);
    }
    for (const id of ['sync_auth', 'validate_app', 'get_app_pricing']) expect(ops.get(id)).toEqual([]);
    const bearer = ['sync_account', 'sync_status', 'sync_push', 'sync_pull', 'list_devices', 'register_device', 'delete_device', 'get_sync_key', 'put_sync_key', 'begin_rotation', 'cancel_rotation', 'rotation_entries', 'rotation_batch', 'complete_rotation'];
    for (const id of bearer) expect(ops.get(id), id).toEqual([{ bearer: [] }]);
  });
});

describe('the sync secret', () => {
  it('is created once: tokens stay valid across a restart on the same data dir', async () => {
    const dir = tempDir('mkt-sync-restart-');
    try {
      const first = await startSyncServer({ dataDir: dir.path });
      const a = await first.createApp('Keep');
      await first.addUser('ana', 'ana@example.com', PASSWORD);
      const token = await first.signIn(a.apiKey, 'ana@example.com', PASSWORD);
      const secret = readFileSync(join(dir.path, 'sync-secret'), 'utf8');
      await first.close();
      const second = await startSyncServer({ dataDir: dir.path });
      try {
        expect(readFileSync(join(dir.path, 'sync-secret'), 'utf8')).toBe(secret);
        expect((await second.call('GET', '/api/v1/sync/account', { token })).status).toBe(200);
      } finally {
        await second.close();
      }
    } finally {
      dir.remove();
    }
  });
});

describe('the sync secret provisioned by the operator (MKT_SYNC_SECRET_FILE)', () => {
  it('is used instead of the data dir file (never created there), so instances with their own dirs share it', async () => {
    const dir = tempDir('mkt-sync-provisioned-');
    try {
      const file = join(dir.path, 'credential');
      const secret = randomBytes(32);
      writeFileSync(file, secret.toString('base64url') + '\n', { mode: 0o400 });
      const env = { MKT_SYNC_SECRET_FILE: file };
      expect(loadSyncSecret(join(dir.path, 'data'), env).equals(secret)).toBe(true);
      const srv = await startSyncServer({ dataDir: join(dir.path, 'data'), env });
      try {
        const a = await srv.createApp('Provisioned');
        const user = await srv.addUser('bo', 'bo@example.com', PASSWORD);
        // A token signed with the provisioned secret (as another instance would) is accepted.
        const token = signSyncToken(tokenKey(secret), { userId: user, appId: a.id, nowMs: srv.clock.now(), lifetimeSeconds: 3600 }).token;
        expect((await srv.call('GET', '/api/v1/sync/account', { token })).status).toBe(200);
        const signed = await srv.signIn(a.apiKey, 'bo@example.com', PASSWORD);
        // And the tokens it signs verify with the provisioned secret.
        expect(verifySyncToken(tokenKey(secret), signed, srv.clock.now())).toMatchObject({ sub: user, app: a.id });
        expect(existsSync(join(dir.path, 'data', 'sync-secret'))).toBe(false);
      } finally {
        await srv.close();
      }
    } finally {
      dir.remove();
    }
  });

  it('refuses a missing file, one open to others, or one without a 32-byte secret; takes raw bytes or base64 text', () => {
    const dir = tempDir('mkt-sync-provisioned-');
    try {
      const file = join(dir.path, 'credential');
      expect(() => loadSyncSecret(dir.path, { MKT_SYNC_SECRET_FILE: file })).toThrow(/MKT_SYNC_SECRET_FILE.*cannot be read: ENOENT/);
      writeFileSync(file, randomBytes(32).toString('base64url'), { mode: 0o644 });
      chmodSync(file, 0o644);
      expect(() => loadSyncSecret(dir.path, { MKT_SYNC_SECRET_FILE: file })).toThrow(/open to group or others \(mode 644\)/);
      chmodSync(file, 0o600);
      writeFileSync(file, 'short');
      expect(() => loadSyncSecret(dir.path, { MKT_SYNC_SECRET_FILE: file })).toThrow(/32-byte secret/);
      expect(existsSync(join(dir.path, 'sync-secret'))).toBe(false);
      // The raw form, as `head -c 32 /dev/urandom > FILE` makes it.
      const raw = randomBytes(32);
      writeFileSync(file, raw);
      expect(loadSyncSecret(dir.path, { MKT_SYNC_SECRET_FILE: file }).equals(raw)).toBe(true);
    } finally {
      dir.remove();
    }
  });
});
