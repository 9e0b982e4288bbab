// Fuzzes the marketplace (git notes, license keys, sync) from its own /openapi.json (issue 11):
// no 5xx, a JSON error body on every 4xx, the server alive afterwards, and the records written
// before the run (by accounts and keys the fuzzer never holds) unchanged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { startService, type RunningService } from '../../daemon/start.js';
import { AccountsAdmin } from '../../daemon/services/marketplace/accounts/admin.js';
import { LicenseAdmin } from '../../daemon/services/marketplace/license/admin.js';
import { SyncAdmin } from '../../daemon/services/marketplace/sync/admin.js';
import { captureLog } from '../helpers/log-capture.js';
import { gitIn, localRepo } from '../helpers/notes-server.js';
import { tempDir } from '../helpers/tmp.js';
import { operationsOf, type OpenApiDoc } from './openapi-requests.js';
import { fuzz, printReport, settingsFromEnv, type FuzzReport } from './run.js';
import { itKeepsTheContract } from './contract.js';
import type { Credential } from './mutate.js';
import { marketplaceEnvFor } from '../helpers/pg.js';

const settings = settingsFromEnv(2_000);

let dir: { path: string; remove(): void };
let work: { path: string; remove(): void };
let svc: RunningService;
let log: () => string;
let admins: { close(): Promise<void> }[] = [];
let report: FuzzReport;
const secrets: string[] = [];

type Call = { status: number; body: unknown };
async function call(method: string, path: string, o: { token?: string; body?: unknown } = {}): Promise<Call> {
  const headers: Record<string, string> = {};
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(svc.url + path, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) });
  const text = await res.text();
  // license.txt is plain text; everything else answers JSON
  return { status: res.status, body: res.headers.get('content-type')?.includes('json') ? (JSON.parse(text) as unknown) : text };
}

/** Reads of the seed records, taken before and after the run. */
const reads: { what: string; read: () => Promise<Call> }[] = [];
const before: Call[] = [];

beforeAll(async () => {
  dir = tempDir('mkt-fuzz-marketplace-');
  work = tempDir('mkt-fuzz-work-');
  const captured = captureLog('debug');
  log = captured.text;
  // The failure windows are raised so fuzzed license and sign-in requests reach the handlers
  // rather than the per-address 429 after the first 10-20 misses.
  svc = await startService('marketplace', { host: '127.0.0.1', port: 0, dataDir: dir.path, options: { licenseAbuseFailures: 1_000_000, syncSignInFailures: 1_000_000, databaseUrl: (await marketplaceEnvFor(dir.path)).MKT_DATABASE_URL }, env: {}, logger: captured.logger, out: { write: () => true } as unknown as NodeJS.WritableStream });

  // Accounts: ana owns the seed repository and carol the seed sync data; the fuzzer holds only
  // bo's tokens and session (notes) and dan's sync sign-in.
  const accounts = await AccountsAdmin.open({ dataDir: dir.path, databaseUrl: (await marketplaceEnvFor(dir.path)).MKT_DATABASE_URL });
  admins.push(accounts);
  await accounts.addUser({ name: 'ana', email: 'ana@example.com' });
  await accounts.addUser({ name: 'bo', email: 'bo@example.com' });
  await accounts.addUser({ name: 'carol', email: 'carol@example.com', password: 'carol-password-1' });
  await accounts.addUser({ name: 'dan', email: 'dan@example.com', password: 'dan-password-1' });
  const anaPush = (await accounts.createToken('ana', 'push')).token;
  const boPush = (await accounts.createToken('bo', 'push')).token;
  const boRead = (await accounts.createToken('bo', 'read')).token;
  const boSession = (await accounts.createSession('bo')).value;
  secrets.push(anaPush, boPush, boRead, boSession, 'carol-password-1', 'dan-password-1');

  // Notes: the same three commits in ana/seed (notes written now) and bo/play (the fuzzer's).
  await accounts.createRepo('ana/seed', { private: false, objectFormat: 'sha1' });
  await accounts.createRepo('ana/hidden', { private: true, objectFormat: 'sha1' });
  await accounts.createRepo('bo/play', { private: false, objectFormat: 'sha1' });
  const local = await localRepo(work.path, 'r', 3);
  for (const [repo, token] of [['ana/seed', anaPush], ['ana/hidden', anaPush], ['bo/play', boPush]] as const) {
    const u = new URL(`${svc.url}/${repo}.git`);
    u.username = 'x';
    u.password = token;
    await gitIn(local.dir, ['push', '-q', u.toString(), 'main']);
  }
  const commits = local.commits;
  for (const [i, ns, content] of [[0, 'commits', 'Reviewed: ok ✓ 😀\n'], [1, 'commits', 'Second note'], [0, 'reviews', 'line 1\nline 2\n']] as const) {
    expect((await call('PUT', `/api/git/ana/seed/notes/${commits[i]}?namespace=${ns}`, { token: anaPush, body: { content } })).status).toBe(200);
  }
  reads.push({ what: 'ana/seed namespaces', read: () => call('GET', '/api/git/ana/seed/notes') });
  for (const [i, ns] of [[0, 'commits'], [1, 'commits'], [0, 'reviews']] as const) {
    reads.push({ what: `ana/seed note ${i} ${ns}`, read: () => call('GET', `/api/git/ana/seed/notes/${commits[i]}?namespace=${ns}&attribution=true`) });
  }
  expect((await call('PUT', `/api/git/ana/hidden/notes/${commits[2]}`, { token: anaPush, body: { content: 'private' } })).status).toBe(200);
  reads.push({ what: 'ana/hidden note', read: () => call('GET', `/api/git/ana/hidden/notes/${commits[2]}`, { token: anaPush }) });

  // License: a seed key with an activation the fuzzer never learns, and keys it may use.
  const license = await LicenseAdmin.open({ dataDir: dir.path, databaseUrl: (await marketplaceEnvFor(dir.path)).MKT_DATABASE_URL });
  admins.push(license);
  await license.createItem({ id: 'seed-item', name: 'Seed item', licenseTemplate: 'Licensed to {licensee}.', maxActivations: 2, verification: true });
  await license.createItem({ id: 'fuzz-item', name: 'Fuzz item', licenseTemplate: null, maxActivations: 3, verification: true });
  const [seedKey] = await license.issueKeys({ itemId: 'seed-item', count: 1, expiresAt: null, licensee: 'Ana' });
  const fuzzKeys = (await license.issueKeys({ itemId: 'fuzz-item', count: 2, expiresAt: null, licensee: null })).map((k) => k.key);
  secrets.push(seedKey!.key, ...fuzzKeys);
  expect((await call('POST', '/api/v1/keys/validate', { body: { key: seedKey!.key, machine_id: 'seed-machine', machine_name: 'seed host', activate: true } })).status).toBe(200);
  reads.push({ what: 'seed key status', read: () => call('POST', '/api/v1/keys/status', { body: { key: seedKey!.key } }) });
  reads.push({ what: 'seed key validation', read: () => call('POST', '/api/v1/keys/validate', { body: { key: seedKey!.key, machine_id: 'seed-machine' } }) });
  reads.push({ what: 'seed item license text', read: () => call('GET', '/api/v1/items/seed-item/license.txt') });

  // Sync: carol's key envelope, device and changelog; dan is the fuzzer's account.
  const sync = await SyncAdmin.open({ dataDir: dir.path, databaseUrl: (await marketplaceEnvFor(dir.path)).MKT_DATABASE_URL }, () => Date.now());
  admins.push(sync);
  const app = await sync.createApp('Fuzz app');
  const apiKey = app!.apiKey;
  secrets.push(apiKey);
  const signIn = async (email: string, password: string): Promise<string> => {
    const r = await call('POST', '/api/v1/sync/auth', { body: { api_key: apiKey, email, password } });
    expect(r.status).toBe(200);
    return (r.body as { token: string }).token;
  };
  const carol = await signIn('carol@example.com', 'carol-password-1');
  const dan = await signIn('dan@example.com', 'dan-password-1');
  secrets.push(carol, dan);
  expect((await call('PUT', '/api/v1/sync/keys', { token: carol, body: { encrypted_key: 'CAROL-ENVELOPE-1', expected_key_version: 0 } })).status).toBe(204);
  const carolDevice = (await call('POST', '/api/v1/sync/devices', { token: carol, body: { name: 'laptop', platform: 'linux' } })).body as { id: string };
  const pushed = await call('POST', '/api/v1/sync/push', { token: carol, body: { device_id: carolDevice.id, batch_id: 'seed-1', key_id: 1, entries: [{ table: 'notes', op: 'insert', row_id: 'r1', timestamp: '2026-03-01T12:00:00.000Z', data: { c: 'AAAA', n: [1, 2, 3] } }, { table: 'notes', op: 'delete', row_id: 'r0', timestamp: '2026-03-01T12:00:01.000Z' }] } });
  expect(pushed.status).toBe(200);
  reads.push({ what: 'carol changelog', read: () => call('POST', '/api/v1/sync/pull', { token: carol, body: { cursor: 0 } }) });
  reads.push({ what: 'carol key envelope', read: () => call('GET', '/api/v1/sync/keys', { token: carol }) });
  reads.push({ what: 'carol devices', read: () => call('GET', '/api/v1/sync/devices', { token: carol }) });
  expect((await call('PUT', '/api/v1/sync/keys', { token: dan, body: { encrypted_key: 'DAN-ENVELOPE-1', expected_key_version: 0 } })).status).toBe(204);
  const danDevice = ((await call('POST', '/api/v1/sync/devices', { token: dan, body: { name: 'desk' } })).body as { id: string }).id;

  for (const r of reads) before.push(await r.read());

  const res = await fetch(`${svc.url}/openapi.json`);
  expect(res.status).toBe(200);
  const doc = (await res.json()) as OpenApiDoc;
  const hex = fc.stringMatching(/^[0-9a-f]{40}$/);
  report = await fuzz(
    'marketplace',
    svc.url,
    {
      doc,
      ops: operationsOf(doc),
      hints: {
        // mostly the fuzzer's own repository, so valid writes get through
        owner: fc.oneof({ weight: 6, arbitrary: fc.constant('bo') }, { weight: 1, arbitrary: fc.constantFrom('ana', 'nobody') }),
        repo: fc.oneof({ weight: 6, arbitrary: fc.constant('play') }, { weight: 1, arbitrary: fc.constantFrom('seed', 'hidden', 'nope') }),
        target: fc.oneof(fc.constantFrom(...commits), hex),
        // the body and the query may both name it, and must agree: mostly the default
        namespace: fc.oneof({ weight: 12, arbitrary: fc.constant('commits') }, { weight: 1, arbitrary: fc.constantFrom('reviews', 'fuzz', 'a/b') }),
        q: fc.constantFrom('Reviewed', 'note', '"line 1"', 'a or b', '-x y', 'ok'),
        content: fc.string({ minLength: 1, maxLength: 200 }),
        key: fc.constantFrom(...fuzzKeys),
        key_code: fc.constantFrom(...fuzzKeys),
        machine_id: fc.constantFrom('m1', 'm2', 'm3', 'm4'),
        machine_fingerprint: fc.constantFrom('fp1', 'fp2', 'fp3', 'fp4'),
        item_id: fc.constantFrom('fuzz-item', 'seed-item', 'nope'),
        api_key: fc.constant(apiKey),
        email: fc.constant('dan@example.com'),
        password: fc.constant('dan-password-1'),
        device_id: fc.constant(danDevice),
        key_id: fc.constant(1),
        expected_key_version: fc.constantFrom(0, 1, 2),
        interval: fc.constantFrom('month', 'year'),
        cap_bytes: fc.integer({ min: 2 ** 30, max: 2 ** 40 }),
      },
      // each area's own credentials, now and then another area's (which must be refused)
      credentials: (op): Credential[] => {
        const push = { label: 'valid', headers: { authorization: `Bearer ${boPush}` } };
        const sync = { label: 'valid', headers: { authorization: `Bearer ${dan}` } };
        if (!op?.path.startsWith('/api/git/')) return [sync, sync, sync, { ...push, label: 'notes-token' }];
        return [push, push, { label: 'read-token', headers: { authorization: `Bearer ${boRead}` } }, { label: 'session', headers: { cookie: `mkt_session=${boSession}` } }, { ...sync, label: 'sync-token' }];
      },
    },
    settings,
    secrets,
  );
  printReport(report, log().split('\n'));
  // The whole run happens here; the limit only catches a hang (10,000 runs beside a loaded CI
  // passed the default 120 s), as the other fuzz files' limits do.
}, 3_600_000);

afterAll(async () => {
  for (const a of admins) await a.close();
  admins = [];
  await svc?.close();
  dir?.remove();
  work?.remove();
});

describe('marketplace fuzz (seed printed above; replay with MKT_FUZZ_SEED and MKT_FUZZ_ONLY)', () => {
  itKeepsTheContract(settings, () => report);

  it('is still alive', async () => {
    expect((await fetch(`${svc.url}/openapi.json`)).status).toBe(200);
  });

  it('leaves the notes, license key and sync data written before the run unchanged', async () => {
    for (const [i, r] of reads.entries()) expect(await r.read(), r.what).toEqual(before[i]);
  });
});
