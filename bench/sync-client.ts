// `mkt sync` blob throughput: encrypt + upload (hash, seal, multipart, confirm) and download +
// decrypt (open, re-hash, write) of a 1 GiB file against the local object-store adapter, as
// ratios to the server-side raw upload figure of the same run: the same number of bytes, as
// plain in-memory parts with checksums, through the same multipart calls and parts in flight
// (target >= 0.6). The marketplace runs in its own process, so client and server do not share
// an event loop. MKT_BENCH_SYNC_MIB changes the size (default 1024).
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { run as runCli } from '../src/cli/run.js';
import { createFactory } from '../src/cli/factory.js';
import type { IOStreams } from '../src/cli/io.js';
import { getFromSignedUrl, putToSignedUrl } from '../src/client/sync.js';
import { getBlob, PARTS_IN_FLIGHT, putBlob } from '../src/sync/blobs.js';
import { SyncSession } from '../src/sync/session.js';
import { ratio } from './_util.js';

const MIB = 1024 * 1024;

function io(env: NodeJS.ProcessEnv, stdin = ''): IOStreams & { out(): string } {
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  const stderr = new PassThrough();
  stderr.resume();
  return { stdin: Readable.from([stdin]), stdout, stderr, env, cwd: process.cwd(), out: () => out };
}

async function mkt(args: string[], env: NodeJS.ProcessEnv, stdin?: string): Promise<string> {
  const s = io(env, stdin);
  const code = await runCli(args, s);
  if (code !== 0) throw new Error(`mkt ${args.slice(0, 3).join(' ')} exited ${code}`);
  return s.out();
}

/** `mkt serve marketplace` in a child process; resolves with its URL. */
function serve(dataDir: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '../src/cli/main.ts'), 'serve', 'marketplace', '--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir], {
    cwd: join(import.meta.dirname, '..'),
    env: { ...process.env, MKT_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (c: Buffer) => {
      text += c.toString();
      const m = /listening on (http:\/\/[^\s"]+)/.exec(text);
      if (m) resolve({ url: m[1]!, child });
    });
    child.on('exit', (code) => reject(new Error(`the marketplace exited (${code}) before listening`)));
  });
}

/** The server's ingest ceiling: `size` bytes of ready plain parts through the multipart calls. */
async function rawUpload(s: SyncSession, size: number): Promise<{ secs: number; label: string }> {
  const label = createHash('sha256').update(randomBytes(32)).digest('hex');
  const t = process.hrtime.bigint();
  const start = await s.client.multipartStart({ hash: label, size_bytes: size });
  const part = randomBytes(start.part_size);
  const sums = new Map<number, string>();
  const checksum = (len: number): string => {
    if (!sums.has(len)) sums.set(len, createHash('sha256').update(part.subarray(0, len)).digest('base64'));
    return sums.get(len)!;
  };
  const todo = Array.from({ length: start.part_count }, (_, i) => i + 1);
  const etags: { part_number: number; etag: string }[] = [];
  const worker = async (): Promise<void> => {
    for (let n = todo.shift(); n !== undefined; n = todo.shift()) {
      const len = Math.min(start.part_size, size - (n - 1) * start.part_size);
      const sum = checksum(len);
      const [u] = (await s.client.multipartParts({ hash: label, upload_id: start.upload_id, size_bytes: size, first_part: n, count: 1, checksums: [sum] })).parts;
      etags.push({ part_number: n, etag: await putToSignedUrl(u!.url, part.subarray(0, len), { checksum: sum }) });
    }
  };
  await Promise.all(Array.from({ length: PARTS_IN_FLIGHT }, worker));
  await s.client.multipartComplete({ hash: label, upload_id: start.upload_id, parts: etags.sort((a, b) => a.part_number - b.part_number) });
  await s.client.blobConfirm(label);
  return { secs: Number(process.hrtime.bigint() - t) / 1e9, label };
}

/** The other direction, for the record: the raw bytes of a blob read back, not opened. */
async function rawDownload(s: SyncSession, label: string): Promise<number> {
  const t = process.hrtime.bigint();
  const { body } = await getFromSignedUrl((await s.client.blobDownloadUrl(label)).download_url);
  for await (const _ of body) void _;
  return Number(process.hrtime.bigint() - t) / 1e9;
}

async function timed<T>(fn: () => Promise<T>): Promise<number> {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e9;
}

export async function run(): Promise<void> {
  const size = Number(process.env.MKT_BENCH_SYNC_MIB ?? 1024) * MIB;
  const dir = mkdtempSync(join(tmpdir(), 'mkt-bench-sync-client-'));
  const dataDir = join(dir, 'data');
  let server: ChildProcess | undefined;
  try {
    const admin = { MKT_DATA_DIR: dataDir };
    const appKey = (JSON.parse(await mkt(['admin', '--data-dir', dataDir, 'app', 'create', 'Bench', '--max-cap', '1TiB', '--free', '100GiB', '--json'], admin)) as { api_key: string }).api_key;
    await mkt(['admin', '--data-dir', dataDir, 'user', 'add', 'bench', '--email', 'bench@example.com'], admin, 'bench password\n');
    const srv = await serve(dataDir);
    server = srv.child;
    const env = { XDG_CONFIG_HOME: join(dir, 'config'), MKT_CREDENTIAL_STORE: 'file', MKT_MARKETPLACE_URL: srv.url };
    await mkt(['sync', 'login', '--app-key', appKey, '--email', 'bench@example.com', '--device', 'bench'], env, 'bench password\n');
    await mkt(['sync', 'key', 'init'], env, 'bench password\n');
    const s = await SyncSession.open(createFactory(io(env)), {});

    const file = join(dir, 'plain.bin');
    const fd = openSync(file, 'w');
    const block = randomBytes(MIB);
    for (let i = 0; i < size / MIB; i++) {
      block.writeUInt32BE(i, 0);
      writeSync(fd, block);
    }
    closeSync(fd);

    const { secs: raw, label } = await rawUpload(s, size);
    const rawGet = await rawDownload(s, label);
    let hash = '';
    let hashedAt = 0;
    const t0 = process.hrtime.bigint();
    const put = await timed(async () => {
      hash = (
        await putBlob(s, file, {
          onProgress: (p) => {
            if (p.phase === 'upload' && hashedAt === 0) hashedAt = Number(process.hrtime.bigint() - t0) / 1e9;
          },
        })
      ).hash;
    });
    const get = await timed(() => getBlob(s, hash, join(dir, 'back.bin')));
    const mbs = (secs: number): number => size / MIB / secs;
    const rawMbs = mbs(raw);
    console.log(`blob of ${size / MIB} MiB, ${PARTS_IN_FLIGHT} parts in flight, local object store`);
    console.log(`${'raw upload (server side)'.padEnd(30)} ${rawMbs.toFixed(0).padStart(6)} MiB/s (baseline)`);
    console.log(`${'encrypt + upload (blob put)'.padEnd(30)} ${mbs(put).toFixed(0).padStart(6)} MiB/s  ratio ${ratio(mbs(put), rawMbs)} (target >= 0.60)`);
    console.log(`${'  of which hashing the file'.padEnd(30)} ${hashedAt.toFixed(2).padStart(6)} s of ${put.toFixed(2)} s`);
    console.log(`${'raw download (for the record)'.padEnd(30)} ${mbs(rawGet).toFixed(0).padStart(6)} MiB/s`);
    console.log(`${'download + decrypt (blob get)'.padEnd(30)} ${mbs(get).toFixed(0).padStart(6)} MiB/s  ratio ${ratio(mbs(get), rawMbs)} (target >= 0.60)`);
  } finally {
    server?.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}
