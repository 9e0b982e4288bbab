// `mkt sync` blob client: encrypt + upload (hash, seal, multipart, confirm) and download +
// decrypt (open, re-hash, write) of a 1 GiB file against the local object-store adapter, as
// ratios to the raw upload of the same run: the same number of bytes, as ready plain parts with
// checksums, through the same multipart calls and PUT transport, 3 parts at once (goal >= 0.70).
// Raw and encrypted uploads alternate, the best of each counts (the machine is shared). Then the
// peak RSS of the real `mkt sync blob put` process for a 200 MiB file (goal <= 100 MiB; needs
// `npm run build`). The marketplace runs in its own process, so client and server do not share
// an event loop. Before each timed upload 2 GiB are written and freed (warmPages: on this VM the
// first touch of memory costs more than either upload path). MKT_BENCH_SYNC_MIB changes the size
// (default 1024), MKT_BENCH_SYNC_ROUNDS the rounds (default 2).
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { run as runCli } from '../commands/root/run.js';
import { createFactory } from '../src/cli/factory.js';
import type { IOStreams } from '../src/cli/io.js';
import { putStreamToSignedUrl } from '../src/client/signed-put.js';
import { getFromSignedUrl } from '../src/client/sync.js';
import { BUFFER_BYTES, getBlob, PARTS_IN_FLIGHT, putBlob } from '../src/sync/blobs.js';
import { SyncSession } from '../src/sync/session.js';
import { cpuMicros, ratio } from './_util.js';

const MIB = 1024 * 1024;
const UPLOAD_GOAL = 0.7;
const RSS_GOAL_MIB = 100;
const RSS_FILE_MIB = 200;
/** The raw baseline's PUTs at once: fixed, so the baseline does not move with the client's setting. */
const RAW_IN_FLIGHT = 3;
const ROOT = join(import.meta.dirname, '..');

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
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'commands/root/main.ts'), 'serve', 'marketplace', '--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir], {
    cwd: ROOT,
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
      const length = Math.min(start.part_size, size - (n - 1) * start.part_size);
      const sum = checksum(length);
      const [u] = (await s.client.multipartParts({ hash: label, upload_id: start.upload_id, size_bytes: size, first_part: n, count: 1, checksums: [sum] })).parts;
      etags.push({ part_number: n, etag: await putStreamToSignedUrl(u!.url, { length, checksum: sum, body: [part.subarray(0, length)] }) });
    }
  };
  await Promise.all(Array.from({ length: RAW_IN_FLIGHT }, worker));
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

/**
 * Writes `bytes` through the page cache and frees them again, untimed, before each timed upload.
 * On this VM a page of memory the kernel has not used lately costs several times more to touch
 * than one it freed a moment ago (dd of 1 GiB into a new file: 0.98-2.0 s of system time; into
 * the pages a deleted file had just freed: 0.13 s). The put needs a GiB of new page cache more
 * than the raw upload (the file written for it, then the server's copy), so the server's CPU for
 * the same bytes was 4.85-5.88 s in the put against 3.03-3.29 s in the raw upload. With 2 GiB of
 * freshly freed pages before each, both start alike (bench/README.md, twenty-third session).
 */
function warmPages(file: string, bytes: number): void {
  const fd = openSync(file, 'w');
  const block = Buffer.alloc(MIB);
  try {
    for (let i = 0; i < bytes / MIB; i++) writeSync(fd, block);
  } finally {
    closeSync(fd);
    rmSync(file, { force: true });
  }
}

/** `size` bytes that no earlier round uploaded (blobs are deduplicated by their hash). */
function writeFile(file: string, size: number): void {
  const fd = openSync(file, 'w');
  const block = randomBytes(MIB);
  for (let i = 0; i < size / MIB; i++) {
    block.writeUInt32BE(i, 0);
    writeSync(fd, block);
  }
  // On disk before it is read: a user's file is not 1 GiB of dirty pages written a moment ago,
  // whose writeback would share the disk with the server's writes during the put that follows
  // (and not during the raw upload, which sends from memory).
  fsyncSync(fd);
  closeSync(fd);
}

/**
 * Runs the real `mkt ARGS` (bin/mkt, the built dist/) and returns its peak resident set in MiB:
 * from GNU time (the kernel's own figure, read at exit) when the machine has it, else the last
 * VmHWM read from /proc while it ran.
 */
async function peakRss(args: string[], env: NodeJS.ProcessEnv): Promise<{ mib: number; secs: number; stdout: string }> {
  const bin = join(ROOT, 'bin', 'mkt');
  const gnuTime = existsSync('/usr/bin/time');
  const report = join(tmpdir(), `mkt-bench-rss-${process.pid}.txt`);
  const [cmd, argv] = gnuTime ? ['/usr/bin/time', ['-f', '%M', '-o', report, process.execPath, bin, ...args]] : [process.execPath, [bin, ...args]];
  const t = process.hrtime.bigint();
  const child = spawn(cmd, argv, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  let hwmKib = 0;
  const poll = setInterval(() => {
    try {
      const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) hwmKib = Math.max(hwmKib, Number(m[1]));
    } catch {
      // Gone, or no /proc.
    }
  }, 10);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearInterval(poll);
  const secs = Number(process.hrtime.bigint() - t) / 1e9;
  if (code !== 0) throw new Error(`mkt ${args.join(' ')} exited ${code}`);
  if (gnuTime) {
    hwmKib = Number(readFileSync(report, 'utf8').trim().split('\n').pop());
    rmSync(report, { force: true });
  }
  return { mib: hwmKib / 1024, secs, stdout };
}

export async function run(): Promise<void> {
  const size = Number(process.env.MKT_BENCH_SYNC_MIB ?? 1024) * MIB;
  const rounds = Math.max(1, Number(process.env.MKT_BENCH_SYNC_ROUNDS ?? 2));
  const dir = mkdtempSync(join(tmpdir(), 'mkt-bench-sync-client-'));
  const dataDir = join(dir, 'data');
  let server: ChildProcess | undefined;
  try {
    const admin = { MKT_DATA_DIR: dataDir };
    // The first `user add` creates the marketplace; `app create` refuses a data dir that holds none.
    await mkt(['admin', '--data-dir', dataDir, 'user', 'add', 'bench', '--email', 'bench@example.com'], admin, 'bench password\n');
    const appKey = (JSON.parse(await mkt(['admin', '--data-dir', dataDir, 'app', 'create', 'Bench', '--max-cap', '1TiB', '--free', '100GiB', '--json'], admin)) as { api_key: string }).api_key;
    const srv = await serve(dataDir);
    server = srv.child;
    const env = { XDG_CONFIG_HOME: join(dir, 'config'), MKT_CREDENTIAL_STORE: 'file', MKT_MARKETPLACE_URL: srv.url };
    await mkt(['sync', 'login', '--app-key', appKey, '--email', 'bench@example.com', '--device', 'bench'], env, 'bench password\n');
    await mkt(['sync', 'key', 'init'], env, 'bench password\n');
    const s = await SyncSession.open(createFactory(io(env)), {});

    const file = join(dir, 'plain.bin');
    let raw = Infinity;
    let put = Infinity;
    let hashing = 0;
    let label = '';
    let hash = '';
    const serverCpu = { raw: Infinity, put: Infinity };
    const serverSecs = (): number => cpuMicros(srv.child.pid) / 1e6;
    for (let r = 0; r < rounds; r++) {
      warmPages(join(dir, 'warm.bin'), 2 * size);
      let cpu = serverSecs();
      const up = await rawUpload(s, size);
      serverCpu.raw = Math.min(serverCpu.raw, serverSecs() - cpu);
      raw = Math.min(raw, up.secs);
      label = up.label;
      writeFile(file, size);
      warmPages(join(dir, 'warm.bin'), 2 * size);
      cpu = serverSecs();
      let hashedAt = 0;
      const t0 = process.hrtime.bigint();
      const secs = await timed(async () => {
        hash = (
          await putBlob(s, file, {
            onProgress: (p) => {
              if (p.phase === 'upload' && hashedAt === 0) hashedAt = Number(process.hrtime.bigint() - t0) / 1e9;
            },
          })
        ).hash;
      });
      serverCpu.put = Math.min(serverCpu.put, serverSecs() - cpu);
      if (secs < put) [put, hashing] = [secs, hashedAt];
    }
    const rawGet = await rawDownload(s, label);
    const get = await timed(() => getBlob(s, hash, join(dir, 'back.bin')));

    const mbs = (secs: number): number => size / MIB / secs;
    const goal = (r: number, g: number): string => `(goal >= ${g.toFixed(2)})${r >= g ? '' : '  MISSED'}`;
    const upRatio = mbs(put) / mbs(raw);
    console.log(`blob of ${size / MIB} MiB, best of ${rounds}, ${PARTS_IN_FLIGHT} parts in flight, ${BUFFER_BYTES / MIB} MiB of sealed bytes held, local object store`);
    console.log(`${'raw upload (server side)'.padEnd(30)} ${mbs(raw).toFixed(0).padStart(6)} MiB/s (baseline)`);
    console.log(`${'encrypt + upload (blob put)'.padEnd(30)} ${mbs(put).toFixed(0).padStart(6)} MiB/s  ratio ${ratio(mbs(put), mbs(raw))} ${goal(upRatio, UPLOAD_GOAL)}`);
    console.log(`${'  of which hashing the file'.padEnd(30)} ${hashing.toFixed(2).padStart(6)} s of ${put.toFixed(2)} s`);
    console.log(`${'  the server\'s CPU (least)'.padEnd(30)} ${serverCpu.put.toFixed(2).padStart(6)} s against the raw upload's ${serverCpu.raw.toFixed(2)} s`);
    console.log(`${'raw download (for the record)'.padEnd(30)} ${mbs(rawGet).toFixed(0).padStart(6)} MiB/s`);
    console.log(`${'download + decrypt (blob get)'.padEnd(30)} ${mbs(get).toFixed(0).padStart(6)} MiB/s  ratio ${ratio(mbs(get), mbs(raw))} (for the record)`);

    if (!existsSync(join(ROOT, 'dist', 'cli.cjs'))) {
      console.log('peak RSS of `mkt sync blob put`: skipped, run `npm run build` first');
      return;
    }
    const tiny = join(dir, 'tiny.bin');
    writeFileSync(tiny, randomBytes(16));
    const floor = await peakRss(['sync', 'blob', 'put', tiny], env);
    writeFile(file, RSS_FILE_MIB * MIB);
    const big = await peakRss(['sync', 'blob', 'put', file, '--json'], env);
    if ((JSON.parse(big.stdout) as { mode: string }).mode !== 'multipart') throw new Error('the RSS run did not upload multipart');
    const ok = big.mib <= RSS_GOAL_MIB;
    console.log(`${`blob put, ${RSS_FILE_MIB} MiB file (process)`.padEnd(30)} ${(RSS_FILE_MIB / big.secs).toFixed(0).padStart(6)} MiB/s with start-up, for the record`);
    console.log(`peak RSS ${big.mib.toFixed(0)} MiB (goal <= ${RSS_GOAL_MIB} MiB)${ok ? '' : '  MISSED'}; the same command on a 16-byte file: ${floor.mib.toFixed(0)} MiB`);
  } finally {
    server?.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}
