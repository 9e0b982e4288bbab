// Shared benchmark helpers: command timing, load runs, and the servers a row is measured
// against (bare node:http, the framework floor) beside ours.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/** The tickets daemon's shared token in every bench that serves one. */
export const BENCH_TICKETS_TOKEN = 'bench-token-0123456789abcdef';
/** The ticket the server rows create: POST /tickets's body, and the ticket GET /tickets/{id} reads. */
export const BENCH_NEW_TICKET = JSON.stringify({ title: 'printer error after update', description: 'the office printer shows an error when printing duplex', priority: 'high', channel: 'email', tags: ['hardware'] });
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** CPU time (user + system) in µs from a /proc `stat` file: a process's, or one thread's (`task/TID/stat`). */
function statCpuMicros(path: string): number {
  // Fields 14 and 15 (after the command's closing parenthesis), in clock ticks.
  const f = readFileSync(path, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1e6) / CLK_TCK;
}

/** CPU (user + system, ms) and memory (VmRSS, VmHWM, KiB) of a process so far, from Linux's /proc. */
export function procStats(pid: number): { cpuMs: number; rssKb: number; hwmKb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { cpuMs: statCpuMicros(`/proc/${pid}/stat`) / 1000, rssKb: kb('VmRSS'), hwmKb: kb('VmHWM') };
}

/** The median of `xs` (the upper one of an even count). */
export function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
}

/** CPU time (user + system) in µs a process has used so far; this process's own for `undefined`. */
export function cpuMicros(pid: number | undefined): number {
  if (pid === undefined) {
    const u = process.cpuUsage();
    return u.user + u.system;
  }
  return statCpuMicros(`/proc/${pid}/stat`);
}

/** CPU time in µs of a process's main thread alone (its own task), not its pools' and compilers'. */
export function mainThreadCpuMicros(pid: number): number {
  return statCpuMicros(`/proc/${pid}/task/${pid}/stat`);
}

/** Median wall time in ms of running a command `runs` times (after one warm-up). */
export function timeCommand(cmd: string, args: string[], runs = 15, env: NodeJS.ProcessEnv = process.env): number {
  const times: number[] = [];
  for (let i = 0; i <= runs; i++) {
    const t = process.hrtime.bigint();
    const r = spawnSync(cmd, args, { env, stdio: 'ignore' });
    const ms = Number(process.hrtime.bigint() - t) / 1e6;
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}`);
    if (i > 0) times.push(ms);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

/** The environment for start-up timings: NODE_EXTRA_CA_CERTS adds 60-85 ms per start here. */
export function startupEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  return env;
}

/** A bare node:http server answering every request with the given JSON body. */
export async function bareServer(body: string, status = 200): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, server };
}

export function ratio(a: number, b: number): string {
  return (a / b).toFixed(2);
}

export interface LoadResult {
  rps: number;
  /** Requests answered in the whole load. */
  total: number;
  p99: number;
  errors: number;
  non2xx: number;
}

/**
 * Runs autocannon in a second process (so the load generator does not share the server's
 * event loop) and returns requests/s and p99 latency.
 */
export async function autocannon(url: string, opts: { method?: string; body?: string; headers?: Record<string, string>; seconds?: number; connections?: number } = {}): Promise<LoadResult> {
  const { spawn } = await import('node:child_process');
  const { createRequire } = await import('node:module');
  const bin = createRequire(import.meta.url).resolve('autocannon/autocannon.js');
  const args = [bin, '-j', '-c', String(opts.connections ?? 20), '-d', String(opts.seconds ?? 5), '-m', opts.method ?? 'GET'];
  for (const [k, v] of Object.entries(opts.headers ?? {})) args.push('-H', `${k}=${v}`);
  if (opts.body !== undefined) args.push('-b', opts.body);
  args.push(url);
  const out = await new Promise<string>((resolve, reject) => {
    const pin = process.env.MKT_BENCH_PIN_CLIENT;
    const child = pin ? spawn('taskset', ['-c', pin, process.execPath, ...args], { stdio: ['ignore', 'pipe', 'ignore'] }) : spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    let text = '';
    child.stdout.on('data', (c: Buffer) => (text += c.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`autocannon exited ${code}`))));
  });
  const r = JSON.parse(out) as { requests: { average: number; total: number }; latency: { p99: number }; errors: number; non2xx: number };
  return { rps: r.requests.average, total: r.requests.total, p99: r.latency.p99, errors: r.errors, non2xx: r.non2xx };
}

/** A server running in a child process. */
export interface ServerProcess {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** A server process started with `args`, once it has printed `listening on URL`; stdout is read and dropped, as journald would read it. */
export async function spawnListening(what: string, args: string[], env: NodeJS.ProcessEnv): Promise<ServerProcess> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let head = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      if (head.length > 64 * 1024) return;
      head += c.toString();
      const m = /^listening on (http:\/\/\S+)$/m.exec(head);
      if (m) resolve(m[1]!);
    });
    void exited.then(() => reject(new Error(`${what} exited before listening:\n${head}`)));
  });
  return {
    url,
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * `mkt serve <service>` as deployed: the built binary (`npm run build` first), logging at info to
 * a pipe this process reads and drops, as journald would read it.
 */
export function serveBuilt(service: string, dataDir: string, env: NodeJS.ProcessEnv = {}, nodeFlags: string[] = []): Promise<ServerProcess> {
  const args = [...nodeFlags, join(import.meta.dirname, '../bin/mkt'), 'serve', service, '--port', '0', '--data-dir', dataDir];
  return spawnListening(`mkt serve ${service}`, args, { MKT_LOG_LEVEL: 'info', ...env });
}

/**
 * The framework floor (bench/_floor-server.mjs): our server with every shared plugin, answering
 * `body` at GET /floor/{id} and POST /floor with no work of its own; bearer auth when `token` is given.
 * `nodeFlags` go to node before the script (a profiler's `--perf-basic-prof`), as for serveBuilt.
 */
export function serveFloor(body: string, token?: string, nodeFlags: string[] = []): Promise<ServerProcess> {
  const args = [...nodeFlags, join(import.meta.dirname, '_floor-server.mjs')];
  return spawnListening('the floor server', args, { FLOOR_BODY: body, ...(token ? { FLOOR_TOKEN: token } : {}) });
}

/** One load: `url` with these request options (a custom `run` replaces autocannon, e.g. a new body per request). */
export interface Load {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  seconds?: number;
  run?: (url: string) => Promise<LoadResult>;
}

/** A second of the same load first, not counted: a server just started is still compiling its hot paths. */
export async function warmLoad(url: string, load: Load): Promise<LoadResult> {
  const run = load.run ?? ((u: string) => autocannon(u, load));
  await autocannon(url, { ...load, seconds: 1 });
  return run(url);
}

/** The two references of a server row, measured in the same run just before it. */
export interface References {
  bare: LoadResult;
  floor: LoadResult;
}

/**
 * Measures the references of a row: a bare node:http server answering `answer` (the same bytes
 * ours answers) and the framework floor (serveFloor) answering it, each under `load` at `path`.
 */
export async function references(label: string, answer: string, load: Load, token?: string): Promise<References> {
  const bare = await bareServer(answer);
  const floor = await serveFloor(answer, token);
  try {
    const path = load.method === 'POST' ? '/floor' : '/floor/x';
    const refs = { bare: await warmLoad(`${bare.url}${path}`, load), floor: await warmLoad(`${floor.url}${path}`, load) };
    printRow(`bare node:http (${label})`, refs.bare);
    printRow(`floor (${label})`, refs.floor, refs);
    return refs;
  } finally {
    bare.server.close();
    await floor.stop();
  }
}

/**
 * Prints one row: requests/s and p99, and with references its ratio to bare node:http, the goal,
 * the floor's own ratio and the row's share of the floor (how much of what the stack allows it uses).
 */
export function printRow(name: string, r: LoadResult, refs?: References, goal?: number): void {
  let rel = ' (baseline)';
  if (refs) {
    const notes = goal === undefined ? [] : [`goal >= ${goal.toFixed(2)}`, `floor ${ratio(refs.floor.rps, refs.bare.rps)}`, `${ratio(r.rps, refs.floor.rps)} of floor`];
    rel = `  ratio ${ratio(r.rps, refs.bare.rps)}${notes.length ? ` (${notes.join('; ')})` : ''}`;
  }
  console.log(`${name.padEnd(30)} ${r.rps.toFixed(0).padStart(7)} req/s  p99 ${String(r.p99).padStart(4)} ms${rel}${r.errors || r.non2xx ? `  errors ${r.errors} non2xx ${r.non2xx}` : ''}`);
}

/** mulberry32: a small, fast seeded generator, so every run builds the same data. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A V8 CPU profile's call frame. */
export interface ProfileFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

/** A script URL as the profile summaries print it: from dist/, src/, daemon/ or the package on. */
export function shortUrl(url: string): string {
  return url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/(dist|src|daemon)\//, '$1/');
}

/** A frame as the profile summaries print it: function, short file and line. */
export function frameName(f: ProfileFrame): string {
  return `${f.functionName || '(anonymous)'} ${shortUrl(f.url)}:${f.lineNumber + 1}`;
}

/** The `n` largest entries as "  12.3 %  name" lines, in percent of `total`. */
export function topShares(m: Map<string, number>, total: number, n: number): string {
  return [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `${((100 * v) / total).toFixed(1).padStart(5)} %  ${k}`)
    .join('\n');
}

/** The hottest functions by self time among a profile's samples in [fromMs, toMs) after its start. */
export function hottest(file: string, fromMs: number, toMs: number, top = 20): string {
  const p = JSON.parse(readFileSync(file, 'utf8')) as { nodes: { id: number; callFrame: ProfileFrame }[]; samples: number[]; timeDeltas: number[] };
  const key = new Map(p.nodes.map((n) => [n.id, frameName(n.callFrame)]));
  const self = new Map<string, number>();
  let t = 0;
  let total = 0;
  p.samples.forEach((id, i) => {
    t += p.timeDeltas[i]! / 1000;
    if (t < fromMs || t >= toMs) return;
    total++;
    self.set(key.get(id)!, (self.get(key.get(id)!) ?? 0) + 1);
  });
  return `${total} samples\n` + topShares(self, total, top).replace(/^/gm, '  ');
}
