// Sync throughput: push and pull of 100,000 changelog entries (entries/s); a 1 GiB multipart
// blob upload through the local object store (MB/s, as a ratio to writing the same bytes with
// node:fs in the same run; target >= 0.5); sync_pull requests/s of the built daemon as a ratio to
// bare node:http (goal >= 0.5).
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { startService, type RunningService } from '../daemon/start.js';
import { createLogger } from '../daemon/logger.js';
import { SyncAdmin } from '../daemon/services/marketplace/sync/admin.js';
import { SqliteDatabase } from '../src/store/sql-sqlite.js';
import { SqlAccountsStore } from '../src/store/accounts-sql.js';
import { hashPassword } from '../src/crypto/password.js';
import { printRow, ratio, references, serveBuilt, warmLoad, type Load } from './_util.js';

const quiet = createLogger({ level: 'silent' });
const ENTRIES = 100_000;
const BATCH = 1000;
const MIB = 1024 * 1024;
const BLOB = 1024 * MIB;
const IN_FLIGHT = 4;

interface Api {
  url: string;
  token: string;
  call<T>(path: string, body?: unknown, method?: string): Promise<T>;
}

/** A new app and user on `svc`'s data dir, signed in. */
export async function signedIn(svc: Pick<RunningService, 'url'>, dir: string): Promise<Api> {
  const admin = await SyncAdmin.open({ dataDir: dir });
  const made = await admin.createApp('Bench App', { free_bytes: 4 * BLOB });
  await admin.close();
  const db = new SqliteDatabase(join(dir, 'marketplace.db'));
  await (await SqlAccountsStore.open(db)).addUser({ name: 'bench', email: 'bench@example.com', passwordHash: await hashPassword('bench password 123') });
  await db.close();
  const json = async <T>(path: string, body?: unknown, method = 'POST', token?: string): Promise<T> => {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (token) headers.authorization = `Bearer ${token}`;
    const res = await request(`${svc.url}${path}`, { method: method as 'POST', headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  };
  const { token } = await json<{ token: string }>('/api/v1/sync/auth', { api_key: made!.apiKey, email: 'bench@example.com', password: 'bench password 123' });
  return { url: svc.url, token, call: (path, body, method) => json(path, body, method, token) };
}

/** Registers a device and a key, then pushes `count` entries of 96 random bytes each, BATCH per request. */
export async function pushEntries(api: Api, count: number): Promise<void> {
  const device = await api.call<{ id: string }>('/api/v1/sync/devices', { name: 'bench laptop' });
  await api.call('/api/v1/sync/keys', { encrypted_key: 'sealed-envelope', expected_key_version: 0 }, 'PUT');
  const { key_id } = await api.call<{ key_id: number }>('/api/v1/sync/keys', undefined, 'GET');
  const data = randomBytes(96).toString('base64');
  for (let b = 0; b < count / BATCH; b++) {
    const entries = Array.from({ length: Math.min(BATCH, count - b * BATCH) }, (_, i) => ({ table: 'notes', op: 'update', row_id: `row-${b * BATCH + i}`, timestamp: new Date(1_767_225_600_000 + b * BATCH + i).toISOString(), data }));
    await api.call('/api/v1/sync/push', { device_id: device.id, batch_id: `b${b}`, key_id, entries });
  }
}

async function changelog(api: Api): Promise<void> {
  let t = performance.now();
  await pushEntries(api, ENTRIES);
  const pushS = (performance.now() - t) / 1000;
  console.log(`push ${ENTRIES} entries (${BATCH} per request): ${(ENTRIES / pushS).toFixed(0)} entries/s`);
  t = performance.now();
  let cursor = 0;
  let pulled = 0;
  for (;;) {
    const page = await api.call<{ entries: unknown[]; cursor: number; has_more: boolean }>('/api/v1/sync/pull', { cursor, limit: BATCH });
    pulled += page.entries.length;
    cursor = page.cursor;
    if (!page.has_more) break;
  }
  const pullS = (performance.now() - t) / 1000;
  if (pulled !== ENTRIES) throw new Error(`pulled ${pulled} of ${ENTRIES}`);
  console.log(`pull ${ENTRIES} entries (${BATCH} per request): ${(ENTRIES / pullS).toFixed(0)} entries/s`);
}

/**
 * Requests/s of a small pull page of the real daemon (the built binary on the same data dir,
 * logging at info to a pipe) against a bare server answering the same bytes (goal >= 0.5), beside
 * the framework floor with a bearer token (bench/_floor-server.mjs).
 */
async function pullRate(dir: string, token: string): Promise<void> {
  const svc = await serveBuilt('marketplace', dir);
  try {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const pullBody = JSON.stringify({ cursor: ENTRIES - 10, limit: 10 });
    const sample = await request(`${svc.url}/api/v1/sync/pull`, { method: 'POST', headers, body: pullBody });
    const pull: Load = { method: 'POST', headers, body: pullBody };
    const refs = await references('pull body', await sample.body.text(), pull, token);
    printRow('sync_pull (10 entries)', await warmLoad(`${svc.url}/api/v1/sync/pull`, pull), refs, 0.5);
  } finally {
    await svc.stop();
  }
}

async function fsWrite(file: string, blob: Buffer): Promise<number> {
  const t = performance.now();
  const out = createWriteStream(file);
  for (let off = 0; off < blob.length; off += 8 * MIB) {
    if (!out.write(blob.subarray(off, off + 8 * MIB))) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  return (performance.now() - t) / 1000;
}

async function upload(api: Api, blob: Buffer, checksums: string[]): Promise<number> {
  const hash = createHash('sha256').update(randomBytes(16)).digest('hex');
  const t = performance.now();
  const start = await api.call<{ upload_id: string; part_size: number; part_count: number }>('/api/v1/sync/blobs/multipart/start', { hash, size_bytes: blob.length });
  const todo = Array.from({ length: start.part_count }, (_, i) => i + 1);
  const etags: { part_number: number; etag: string }[] = [];
  const worker = async (): Promise<void> => {
    for (let n = todo.shift(); n !== undefined; n = todo.shift()) {
      const body = blob.subarray((n - 1) * start.part_size, n * start.part_size);
      const { parts } = await api.call<{ parts: { url: string }[] }>('/api/v1/sync/blobs/multipart/parts', { hash, upload_id: start.upload_id, size_bytes: blob.length, first_part: n, count: 1, checksums: [checksums[n - 1]] });
      const res = await request(parts[0]!.url, { method: 'PUT', headers: { 'content-length': String(body.length), 'x-amz-checksum-sha256': checksums[n - 1]! }, body });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`part ${n}: HTTP ${res.statusCode}`);
      etags.push({ part_number: n, etag: String(res.headers.etag) });
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  await api.call('/api/v1/sync/blobs/multipart/complete', { hash, upload_id: start.upload_id, parts: etags.sort((a, b) => a.part_number - b.part_number) });
  await api.call('/api/v1/sync/blobs/confirm', { hash });
  return (performance.now() - t) / 1000;
}

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mkt-bench-sync-'));
  const svc = await startService('marketplace', { host: '127.0.0.1', port: 0, dataDir: dir, options: {}, env: {}, logger: quiet, out: { write: () => true } as unknown as NodeJS.WritableStream });
  let token: string | undefined;
  try {
    const api = await signedIn(svc, dir);
    token = api.token;
    await changelog(api);

    const blob = randomBytes(BLOB);
    // Checksums are the client's work, done before the clock starts; the server verifies them while writing.
    const checksums: string[] = [];
    for (let off = 0; off < BLOB; off += 8 * MIB) checksums.push(createHash('sha256').update(blob.subarray(off, off + 8 * MIB)).digest('base64'));
    // Disk speed varies run to run here: the baseline is the faster of a write before and one after the upload.
    const fsBefore = await fsWrite(join(dir, 'fs-baseline.bin'), blob);
    rmSync(join(dir, 'fs-baseline.bin'));
    const upS = await upload(api, blob, checksums);
    const fsAfter = await fsWrite(join(dir, 'fs-baseline.bin'), blob);
    rmSync(join(dir, 'fs-baseline.bin'));
    const fsS = Math.min(fsBefore, fsAfter);
    const mb = BLOB / 1e6;
    console.log(`node:fs write 1 GiB            ${(mb / fsS).toFixed(0).padStart(7)} MB/s (baseline)`);
    console.log(`local multipart upload 1 GiB   ${(mb / upS).toFixed(0).padStart(7)} MB/s  ratio ${ratio(mb / upS, mb / fsS)} (target >= 0.50; 8 MiB parts, ${IN_FLIGHT} in flight, SHA-256 checked, completed and confirmed)`);
  } finally {
    await svc.close();
  }
  try {
    // The data dir (and the token, signed with its secret) now serves the built daemon.
    await pullRate(dir, token!);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
