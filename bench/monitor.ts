// Monitor benchmark: (1) 1,000 targets at a 10 s interval against a local target server:
// checks/s achieved vs scheduled, CPU and peak RSS of the monitor process; (2) GET /api/status
// latency with 1,000 targets and 7 days of history (target p99 < 100 ms); (3) /api/health
// requests/s as a ratio to bare node:http (target >= 0.6). BENCH_SECONDS shortens part 1;
// BENCH_ONLY=health|status|scheduling runs one part.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteMonitorStore } from '../src/store/monitor.js';
import { autocannon, bareServer, ratio } from './_util.js';

const TARGETS = 1000;
const TOKEN = 'bench-token';
const mkt = join(import.meta.dirname, '..', 'bin', 'mkt');

function config(targetUrl: string, interval: string): string {
  const lines = [`name: bench`, `token: ${TOKEN}`, `rate_limit: { requests: 1000000 }`, `targets:`];
  for (let i = 0; i < TARGETS; i++) lines.push(`  t${i}:`, `    url: ${targetUrl}`, `    interval: ${interval}`, `    timeout: 5s`);
  return lines.join('\n') + '\n';
}

async function startMonitor(dir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [mkt, 'serve', 'monitor', '--port', '0', '--data-dir', dir, '--config', join(dir, 'monitor.yaml')], { env: { ...process.env, MKT_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`monitor exited ${code}`)));
  });
  return { child, url };
}

function procStats(pid: number): { cpuMs: number; hwmKb: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const ticks = Number(stat[11]) + Number(stat[12]); // utime + stime, in clock ticks (100/s)
  const hwm = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return { cpuMs: ticks * 10, hwmKb: Number(hwm?.[1] ?? 0) };
}

async function healthChecks(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
  return Number(/mkt_monitor_checks_total\{kind="health"\} (\d+)/.exec(text)?.[1] ?? 0);
}

async function scheduling(dir: string, targetUrl: string): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 60);
  writeFileSync(join(dir, 'monitor.yaml'), config(targetUrl, '10s'));
  const { child, url } = await startMonitor(dir);
  try {
    await new Promise((r) => setTimeout(r, 10_000)); // every target has had its first check
    const c0 = await healthChecks(url);
    const s0 = procStats(child.pid!);
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const c1 = await healthChecks(url);
    const s1 = procStats(child.pid!);
    const elapsed = (performance.now() - t0) / 1000;
    const achieved = (c1 - c0) / elapsed;
    const scheduled = TARGETS / 10;
    console.log(`${TARGETS} targets every 10 s for ${seconds} s: ${achieved.toFixed(1)} checks/s of ${scheduled} scheduled (ratio ${ratio(achieved, scheduled)})`);
    console.log(`monitor CPU ${(((s1.cpuMs - s0.cpuMs) / (elapsed * 1000)) * 100).toFixed(1)}% of one core, peak RSS ${(s1.hwmKb / 1024).toFixed(0)} MiB`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

async function statusLatency(dir: string, targetUrl: string): Promise<void> {
  const spacing = Number(process.env.BENCH_HISTORY_SPACING_S ?? 120);
  const store = new SqliteMonitorStore(join(dir, 'monitor.db'));
  await store.close();
  const db = new Database(join(dir, 'monitor.db'));
  db.pragma('journal_mode = WAL');
  const insert = db.prepare('INSERT INTO snapshots (target, ts, checked_at, status, response_time_ms) VALUES (?, ?, ?, ?, ?)');
  const now = Date.now();
  const perTarget = Math.floor((7 * 86_400) / spacing);
  const seedStart = performance.now();
  for (let i = 0; i < TARGETS; i++) {
    db.transaction(() => {
      for (let k = perTarget; k > 0; k--) {
        const ts = now - k * spacing * 1000;
        const down = k % 97 === 0;
        insert.run(`t${i}`, ts, new Date(ts).toISOString(), down ? 'down' : 'operational', down ? 0 : 20 + ((k * 7 + i) % 180));
      }
    })();
  }
  db.close();
  console.log(`seeded ${TARGETS} targets x 7 days (${perTarget} checks each, ${((TARGETS * perTarget) / 1e6).toFixed(1)}M rows) in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`);
  writeFileSync(join(dir, 'monitor.yaml'), config(targetUrl, '1h'));
  const { child, url } = await startMonitor(dir);
  try {
    const cold = performance.now();
    await fetch(`${url}/api/status`, { headers: { authorization: `Bearer ${TOKEN}` } }).then((r) => r.arrayBuffer());
    console.log(`GET /api/status, first (cold) request: ${(performance.now() - cold).toFixed(0)} ms`);
    const r = await autocannon(`${url}/api/status`, { headers: { authorization: `Bearer ${TOKEN}` }, seconds: 10, connections: 4 });
    console.log(`GET /api/status with ${TARGETS} targets: ${r.rps.toFixed(0)} req/s, p99 ${r.p99} ms (target p99 < 100 ms; ratio to target ${ratio(r.p99, 100)})`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((res) => child.once('exit', res));
  }
}

async function healthThroughput(dir: string): Promise<void> {
  writeFileSync(join(dir, 'monitor.yaml'), `token: ${TOKEN}\n`);
  const { child, url } = await startMonitor(dir);
  const body = await (await fetch(`${url}/api/health`)).text();
  const bare = await bareServer(body);
  try {
    const b = await autocannon(`${bare.url}/api/health`);
    const m = await autocannon(`${url}/api/health`);
    console.log(`bare node:http ${b.rps.toFixed(0)} req/s; GET /api/health ${m.rps.toFixed(0)} req/s, p99 ${m.p99} ms; ratio ${ratio(m.rps, b.rps)} (target >= 0.60)`);
  } finally {
    bare.server.close();
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

export async function run(): Promise<void> {
  const target = await bareServer(JSON.stringify({ status: 'ok' }));
  const dirs = [1, 2, 3].map(() => mkdtempSync(join(tmpdir(), 'mkt-bench-monitor-')));
  try {
    const only = process.env.BENCH_ONLY; // health | status | scheduling
    if (!only || only === 'health') await healthThroughput(dirs[0]!);
    if (!only || only === 'status') await statusLatency(dirs[1]!, `${target.url}/health`);
    if (!only || only === 'scheduling') await scheduling(dirs[2]!, `${target.url}/health`);
  } finally {
    target.server.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}
