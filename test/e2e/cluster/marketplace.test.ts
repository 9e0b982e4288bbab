// Three `mkt serve marketplace` processes (the real binary) on one PostgreSQL database, one shared
// data dir (repositories, secrets) and s3rver for blobs, each request sent to the next instance in
// turn (stricter than a sticky balancer): activation limits, a key rotation, a multipart upload,
// note writes, the sign-in limit and the reaper hold across instances, and a SIGKILLed instance
// loses no acknowledged write while the others keep answering.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { freshDatabaseUrl } from '../../helpers/pg.js';
import { startS3rver, type StandInS3 } from '../../helpers/s3rver.js';
import { tempDir } from '../../helpers/tmp.js';
import { GIT_ENV, gitIn, localRepo } from '../../helpers/notes-server.js';
import { LicenseAdmin } from '../../../daemon/services/marketplace/license/admin.js';
import { AccountsAdmin } from '../../../daemon/services/marketplace/accounts/admin.js';
import { SyncAdmin } from '../../../daemon/services/marketplace/sync/admin.js';
import { repoDir } from '../../../src/git/hosting.js';
import { serve, type Served } from '../crash/harness.js';

const MIB = 1024 * 1024;
const N = 3;

interface Answer<T = Record<string, unknown>> {
  status: number;
  body: T;
}

let dbUrl: string;
let s3: StandInS3;
const dir = tempDir('mkt-cluster-');
const work = tempDir('mkt-cluster-work-');
let instances: Served[] = [];
const logs: string[][] = [];
let turn = 0;

async function call<T = Record<string, unknown>>(base: string, method: string, path: string, opts: { token?: string; body?: unknown } = {}): Promise<Answer<T>> {
  const headers: Record<string, string> = {};
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const res = await fetch(`${base}${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}

/** The next live instance in turn. */
function next(): string {
  for (let i = 0; i < N; i++) {
    const s = instances[turn++ % N]!;
    if (s.child.exitCode === null && s.child.signalCode === null) return s.url;
  }
  throw new Error('no instance alive');
}
const rr = <T = Record<string, unknown>>(method: string, path: string, opts: { token?: string; body?: unknown } = {}) => call<T>(next(), method, path, opts);

function env(): Record<string, string> {
  return {
    MKT_DATABASE_URL: dbUrl,
    MKT_LOG_LEVEL: 'debug',
    MKT_SYNC_OBJECT_STORE: 's3',
    MKT_SYNC_S3_BUCKET: s3.bucket,
    MKT_SYNC_S3_ENDPOINT: s3.endpoint,
    MKT_SYNC_S3_FORCE_PATH_STYLE: '1',
    MKT_SYNC_S3_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: s3.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey,
    // Every second, so a few seconds show whether each period runs once.
    MKT_SYNC_REAPER_SCHEDULE: '* * * * * *',
  };
}

async function start(i: number): Promise<Served> {
  const s = await serve('marketplace', dir.path, env());
  logs[i] = [];
  s.child.stdout!.on('data', (c: Buffer) => logs[i]!.push(c.toString()));
  return s;
}

beforeAll(async () => {
  dbUrl = await freshDatabaseUrl();
  s3 = await startS3rver('mkt-blobs', { listParts: true });
  // Started together: the schema migrations and the secret files are created once between them.
  instances = await Promise.all(Array.from({ length: N }, (_, i) => start(i)));
}, 120_000);

afterAll(async () => {
  for (const s of instances) s.child.kill('SIGKILL');
  await s3?.close();
  dir.remove();
  work.remove();
});

describe('three marketplace processes on one PostgreSQL database', () => {
  it('30 concurrent activations of a max-3 key across the instances give exactly 3', async () => {
    const admin = await LicenseAdmin.open({ dataDir: dir.path, databaseUrl: dbUrl });
    await admin.createItem({ id: 'tool', name: 'Tool', licenseTemplate: null, maxActivations: 3, verification: true });
    const key = (await admin.issueKeys({ itemId: 'tool', count: 1, expiresAt: null, licensee: null }))[0]!.key;
    await admin.close();
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => rr('POST', '/api/v1/keys/validate', { body: { key, machine_id: `m-${i}`, activate: true } })));
    expect(answers.filter((a) => a.body.activated === true)).toHaveLength(3);
    expect(answers.every((a) => a.status === 200)).toBe(true);
    for (const s of instances) {
      const st = await call<{ license: { activation_count: number } }>(s.url, 'POST', '/api/v1/keys/status', { body: { key } });
      expect(st.body.license.activation_count).toBe(3);
    }
  });

  describe('sync', () => {
    let apiKey: string;
    let token: string;
    let laptop: string;
    beforeAll(async () => {
      const accounts = await AccountsAdmin.open({ dataDir: dir.path, databaseUrl: dbUrl });
      await accounts.addUser({ name: 'ana', email: 'ana@example.com', password: 'pw-ana-cluster' });
      await accounts.close();
      const sync = await SyncAdmin.open({ dataDir: dir.path, databaseUrl: dbUrl });
      apiKey = (await sync.createApp('Notes', { free_bytes: 200 * MIB }))!.apiKey;
      await sync.close();
      const signedIn = await rr<{ token: string }>('POST', '/api/v1/sync/auth', { body: { api_key: apiKey, email: 'ana@example.com', password: 'pw-ana-cluster' } });
      expect(signedIn.status).toBe(200);
      token = signedIn.body.token;
      laptop = (await rr<{ id: string }>('POST', '/api/v1/sync/devices', { token, body: { name: 'laptop' } })).body.id;
      expect((await rr('PUT', '/api/v1/sync/keys', { token, body: { encrypted_key: 'OLD', expected_key_version: 0 } })).status).toBe(204);
    });

    it('pushes through every instance get distinct, gap-free seqs', async () => {
      const pushes = await Promise.all(
        Array.from({ length: 15 }, (_, i) =>
          rr<{ cursor: number; accepted: number }>('POST', '/api/v1/sync/push', {
            token,
            body: { device_id: laptop, batch_id: `b${i}`, key_id: 1, entries: [{ table: 'notes', op: 'insert', row_id: `r${i}`, timestamp: '2026-03-01T12:00:00Z', data: `d${i}` }] },
          }),
        ),
      );
      expect(pushes.every((p) => p.status === 200)).toBe(true);
      expect(pushes.map((p) => p.body.cursor).sort((a, b) => a - b)).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
    });

    it('a key rotation begun on one instance, batched on another and completed on the third', async () => {
      const [a, b, c] = instances.map((s) => s.url) as [string, string, string];
      const begun = await call<{ rotation_id: string; target_seq: number; new_key_id: number }>(a, 'POST', '/api/v1/sync/keys/rotate', { token, body: { device_id: laptop, new_encrypted_key: 'NEW', expected_key_version: 1 } });
      expect(begun.status).toBe(200);
      const { rotation_id, target_seq } = begun.body;
      let after = 0;
      for (;;) {
        const page = await call<{ entries: { seq: number }[]; has_more: boolean }>(b, 'POST', '/api/v1/sync/keys/rotate/entries', { token, body: { rotation_id, after_seq: after, limit: 4 } });
        expect(page.status).toBe(200);
        if (page.body.entries.length === 0) break;
        const done = await call(b, 'POST', '/api/v1/sync/keys/rotate/batch', { token, body: { rotation_id, entries: page.body.entries.map((e) => ({ seq: e.seq, data: `resealed-${e.seq}` })) } });
        expect(done.status).toBe(200);
        after = page.body.entries[page.body.entries.length - 1]!.seq;
        if (!page.body.has_more) break;
      }
      expect(after).toBe(target_seq);
      expect((await call(c, 'POST', '/api/v1/sync/keys/rotate/complete', { token, body: { rotation_id } })).status).toBe(204);
      const keys = await call<{ encrypted_key: string; key_id: number; pending_key: unknown }>(a, 'GET', '/api/v1/sync/keys', { token });
      expect(keys.body).toMatchObject({ encrypted_key: 'NEW', key_id: begun.body.new_key_id, pending_key: null });
    });

    it('a multipart upload whose calls and parts go through different instances (s3)', async () => {
      const blob = randomBytes(6 * MIB + 123);
      const hash = createHash('sha256').update(blob).digest('hex');
      const started = await rr<{ upload_id: string; part_size: number; part_count: number }>('POST', '/api/v1/sync/blobs/multipart/start', { token, body: { hash, size_bytes: blob.length } });
      expect(started.status).toBe(200);
      const { upload_id, part_size, part_count } = started.body;
      const etags: { part_number: number; etag: string }[] = [];
      for (let n = 1; n <= part_count; n++) {
        const chunk = blob.subarray((n - 1) * part_size, n * part_size);
        const sum = createHash('sha256').update(chunk).digest('base64');
        const w = await rr<{ parts: { url: string }[] }>('POST', '/api/v1/sync/blobs/multipart/parts', { token, body: { hash, upload_id, size_bytes: blob.length, first_part: n, count: 1, checksums: [sum] } });
        expect(w.status, JSON.stringify(w.body)).toBe(200);
        expect(w.body.parts[0]!.url.startsWith(s3.endpoint)).toBe(true);
        const put = await fetch(w.body.parts[0]!.url, { method: 'PUT', headers: { 'content-length': String(chunk.length), 'x-amz-checksum-sha256': sum }, body: chunk });
        expect(put.status).toBe(200);
        etags.push({ part_number: n, etag: put.headers.get('etag')! });
      }
      expect((await rr('POST', '/api/v1/sync/blobs/multipart/complete', { token, body: { hash, upload_id, parts: etags } })).status).toBe(204);
      expect((await rr('POST', '/api/v1/sync/blobs/confirm', { token, body: { hash } })).status).toBe(204);
      for (const s of instances) {
        const d = await call<{ download_url: string; size_bytes: number }>(s.url, 'POST', '/api/v1/sync/blobs/download', { token, body: { hash } });
        expect(d.body.size_bytes).toBe(blob.length);
      }
      const d = await rr<{ download_url: string }>('POST', '/api/v1/sync/blobs/download', { token, body: { hash } });
      const got = Buffer.from(await (await fetch(d.body.download_url)).arrayBuffer());
      expect(createHash('sha256').update(got).digest('hex')).toBe(hash);
    });

    it('the upload reaper runs once per period with three instances up', async () => {
      await new Promise((r) => setTimeout(r, 4_500));
      const periods = logs.flatMap((l) =>
        l
          .join('')
          .split('\n')
          .filter((line) => line.includes('upload reaper run'))
          .map((line) => (JSON.parse(line) as { period: string }).period),
      );
      expect(periods.length).toBeGreaterThanOrEqual(3);
      expect(new Set(periods).size).toBe(periods.length);
    });

    it('the sign-in limit holds across the instances', async () => {
      const answers = await Promise.all(Array.from({ length: 30 }, () => rr('POST', '/api/v1/sync/auth', { body: { api_key: apiKey, email: 'ana@example.com', password: 'wrong password' } })));
      const refused = answers.filter((a) => a.status === 429).length;
      expect(answers.filter((a) => a.status !== 429).length).toBeLessThanOrEqual(10);
      expect(refused).toBeGreaterThanOrEqual(20);
      expect(answers.every((a) => a.status === 401 || a.status === 429)).toBe(true);
      // The right password is refused too while the window is full: the limit is per address.
      expect((await rr('POST', '/api/v1/sync/auth', { body: { api_key: apiKey, email: 'ana@example.com', password: 'pw-ana-cluster' } })).status).toBe(429);
    });
  });

  it('concurrent note writes to one repository through all three land; git fsck is clean; every instance finds each', async () => {
    const accounts = await AccountsAdmin.open({ dataDir: dir.path, databaseUrl: dbUrl });
    await accounts.addUser({ name: 'bo', email: 'bo@example.com' });
    const pushToken = (await accounts.createToken('bo', 'push')).token;
    await accounts.createRepo('bo/app', { private: false, objectFormat: 'sha1' });
    await accounts.close();
    const local = await localRepo(work.path, 'app', 24);
    const url = new URL(`${instances[2]!.url}/bo/app.git`);
    url.username = 'x';
    url.password = pushToken;
    await gitIn(local.dir, ['push', '-q', url.toString(), 'main']);

    const writes = await Promise.all(local.commits.map((c, i) => rr('PUT', `/api/git/bo/app/notes/${c}`, { token: pushToken, body: { content: `clustered note ${i} tokenw${i}\n` } })));
    for (const [i, w] of writes.entries()) expect(w.status, `write ${i}: ${JSON.stringify(w.body)}`).toBe(200);
    execFileSync('git', ['--git-dir', repoDir(dir.path, 'bo', 'app'), 'fsck', '--full', '--strict', '--no-progress'], { env: { ...process.env, ...GIT_ENV }, stdio: ['ignore', 'ignore', 'pipe'] });
    for (const s of instances) {
      for (const i of [0, 7, 23]) {
        let hits: unknown[] = [];
        for (let attempt = 0; attempt < 20 && hits.length === 0; attempt++) {
          if (attempt) await new Promise((r) => setTimeout(r, 50));
          hits = (await call<{ data?: unknown[] }>(s.url, 'GET', `/api/git/bo/app/notes/search?q=tokenw${i}`)).body.data ?? [];
        }
        expect(hits, `instance ${s.url} searching note ${i}`).toHaveLength(1);
      }
    }
  });

  it('SIGKILL of one instance during writes loses no acknowledged write; the others keep answering', async () => {
    const admin = await LicenseAdmin.open({ dataDir: dir.path, databaseUrl: dbUrl });
    await admin.createItem({ id: 'bulk', name: 'Bulk', licenseTemplate: null, maxActivations: 100_000, verification: true });
    const key = (await admin.issueKeys({ itemId: 'bulk', count: 1, expiresAt: null, licensee: null }))[0]!.key;
    await admin.close();
    const acknowledged: string[] = [];
    let stop = false;
    let failedOnSurvivors = 0;
    const victim = instances[0]!;
    const worker = async (w: number): Promise<void> => {
      for (let i = 0; !stop; i++) {
        const target = instances[(w + i) % N]!;
        const machine = `w${w}-${i}`;
        try {
          const r = await call(target.url, 'POST', '/api/v1/keys/validate', { body: { key, machine_id: machine, activate: true } });
          if (r.status === 200 && r.body.activated === true) acknowledged.push(machine);
          else if (target !== victim) failedOnSurvivors++;
        } catch {
          if (target !== victim) failedOnSurvivors++;
        }
      }
    };
    const running = Promise.all(Array.from({ length: 6 }, (_, w) => worker(w)));
    await new Promise((r) => setTimeout(r, 800));
    victim.child.kill('SIGKILL');
    await victim.exited;
    const atKill = acknowledged.length;
    await new Promise((r) => setTimeout(r, 800));
    stop = true;
    await running;
    expect(atKill).toBeGreaterThan(0);
    expect(acknowledged.length).toBeGreaterThan(atKill);
    expect(failedOnSurvivors).toBe(0);
    const survivor = instances[1]!.url;
    for (const machine of acknowledged) {
      const r = await call(survivor, 'POST', '/api/v1/keys/validate', { body: { key, machine_id: machine } });
      expect(r.body, machine).toMatchObject({ valid: true, code: 'VALID' });
    }
    const st = await call<{ license: { activation_count: number } }>(instances[2]!.url, 'POST', '/api/v1/keys/status', { body: { key } });
    expect(st.body.license.activation_count).toBeGreaterThanOrEqual(acknowledged.length);
  });
});
