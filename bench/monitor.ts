// Monitor benchmark: (1) history: 1,000 targets with 7 days of raw checks (one every 2 min) and
// 400 days of hourly and daily rollups: seed time, the first GET /api/status (goal < 300 ms), its
// p99 at one connection (goal < 50 ms), the daemon's peak RSS (goal < 250 MiB) and the database's
// bytes per target and day (dbstat); (2) scheduling: 5,000 targets at a 30 s interval against a
// local target server: checks/s achieved vs scheduled, CPU and peak RSS of the monitor; (3)
// /api/health requests/s as a ratio to bare node:http (target >= 0.6); (4) heartbeats
// (monitor-heartbeat.ts); (5) the dashboard's HTML, its time a target at 100, 1,000 and 3,000
// targets. BENCH_SECONDS shortens part 2; BENCH_ONLY=health|history|scheduling|pings|deadlines|
// dashboard runs one part; BENCH_PROFILE=1 runs the history
// daemon under --cpu-prof and prints its hottest frames while it serves /api/status.
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteMonitorStore } from '../src/store/monitor-sqlite.js';
import { LatencyHistogram } from '../src/store/latency-histogram.js';
import { parseMonitorConfig } from '../src/config/monitor.js';
import { StatusCache } from '../daemon/services/monitor/status-cache.js';
import { renderDashboard, type DayCell } from '../daemon/services/monitor/dashboard.js';
import type { TargetStatus } from '../daemon/services/monitor/status.js';
import { run as heartbeat } from './monitor-heartbeat.js';
import { autocannon, bareServer, hottest, mulberry32, procStats, ratio, serveBuilt, type ServerProcess } from './_util.js';

const TOKEN = 'bench-token';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const HOUR = 3_600_000;
const DAY = 86_400_000;
const EVERY_MS = 120_000; // the raw history's check interval: 30 checks an hour
const RAW_DAYS = 7;
const ROLLUP_DAYS = 400;
const floorTo = (ms: number, unit: number): number => Math.floor(ms / unit) * unit;
const ceilTo = (ms: number, unit: number): number => Math.ceil(ms / unit) * unit;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const goal = (met: boolean, text: string): string => `(goal ${text}: ${met ? 'met' : 'NOT met'})`;
/** Realistic names: the target is the first column of every row and of every index entry. */
const targetNames = (n: number): string[] => Array.from({ length: n }, (_, i) => `target-${String(i).padStart(4, '0')}`);

function config(names: string[], targetUrl: string, interval: string): string {
  const lines = [`name: bench`, `token: ${TOKEN}`, `rate_limit: { requests: 1000000 }`, `targets:`];
  for (const n of names) lines.push(`  ${n}:`, `    url: ${targetUrl}`, `    interval: ${interval}`, `    timeout: 5s`);
  return lines.join('\n') + '\n';
}

/** Health checks counted by /metrics; label order and spacing may vary (prom-client or hand-written). */
async function healthChecks(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`, { headers: AUTH })).text();
  let n = 0;
  for (const m of text.matchAll(/^mkt_monitor_checks_total\s*\{([^}]*)\}\s*([0-9.eE+-]+)\s*$/gm)) {
    if (/(?:^|,)\s*kind\s*=\s*"health"\s*(?:,|$)/.test(m[1]!)) n += Number(m[2]);
  }
  return n;
}


interface Check {
  status: 'operational' | 'degraded' | 'down';
  rt: number;
  details: string | null;
  error: string | null;
}

/** Targets differ in speed: a median response time per class, log-normal around it, 1 % slow spikes. */
const CLASS_MS = [8, 15, 25, 40, 70, 120, 200, 350];
const OK = '{"status":"ok"}';

/** One check of a target of the given speed; `outage` while the target is down for a while. */
function check(r: () => number, baseMs: number, outage: boolean): Check {
  const u = r();
  if (outage || u < 0.0004) return { status: 'down', rt: 0, details: null, error: 'timed out after 5000 ms' };
  if (u < 0.0008) return { status: 'down', rt: 0, details: null, error: 'ECONNREFUSED' };
  const gauss = (r() + r() + r() - 1.5) * 2;
  const spike = r() < 0.01 ? 3 + r() * 7 : 1;
  const rt = Math.max(1, Math.round(baseMs * Math.exp(0.3 * gauss) * spike));
  return u < 0.0018 ? { status: 'degraded', rt, details: '{"status":"degraded"}', error: null } : { status: 'operational', rt, details: OK, error: null };
}

/** A rollup row being built, folded by the store's rule (up/degraded/down counts; latency of checks with a time). */
class Acc {
  operational = 0;
  degraded = 0;
  down = 0;
  hist = new LatencyHistogram();
  blob: Buffer | null = null;
  add(c: Check): void {
    this[c.status]++;
    if (c.rt > 0) this.hist.add(c.rt);
  }
  merge(o: Acc): void {
    this.operational += o.operational;
    this.degraded += o.degraded;
    this.down += o.down;
    this.hist.merge(o.hist);
  }
  get checks(): number {
    return this.operational + this.degraded + this.down;
  }
  /** Encoded once: a template's blob is bound for every row that reuses it. */
  seal(): this {
    this.blob = this.hist.count ? this.hist.encode() : null;
    return this;
  }
  values(): unknown[] {
    const h = this.hist;
    return [this.operational, this.degraded, this.down, 0, h.count, h.sum, h.count ? h.min : null, h.count ? h.max : null, this.blob ?? (h.count ? h.encode() : null)];
  }
}

/**
 * Rollups before the raw history are drawn from templates, per speed class: 48 hours of 30 real
 * checks each (the last two with outages of 3 and 8 checks), and 32 days of 24 of those hours.
 * Each (target, day) picks a day; the hours and the day reuse the templates' encoded blobs.
 */
function templates(): { days: { hours: Acc[]; day: Acc }[] }[] {
  return CLASS_MS.map((base, c) => {
    const r = mulberry32(1000 + c);
    const hours = Array.from({ length: 48 }, (_, k) => {
      const a = new Acc();
      const down = k === 46 ? 3 : k === 47 ? 8 : 0;
      for (let s = 0; s < 30; s++) a.add(check(r, base, s >= 10 && s < 10 + down));
      return a.seal();
    });
    const days = Array.from({ length: 32 }, () => {
      const hs = Array.from({ length: 24 }, () => hours[r() < 0.002 ? 46 + Math.floor(r() * 2) : Math.floor(r() * 46)]!);
      const day = new Acc();
      for (const h of hs) day.merge(h);
      return { hours: hs, day: day.seal() };
    });
    return { days };
  });
}

const hash = (a: number, b: number): number => (Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x7f4a7c15, 0xc2b2ae35)) >>> 0;

interface Seeded {
  now: number;
  rawStart: number;
  rollupStart: number;
  raw: number;
  hours: number;
  days: number;
  /** Where the seed time went. */
  phases: string;
}

/**
 * Seeds the history straight into the file, in time order as the monitor writes it (so pages fill
 * as they would), in big transactions. Rollups of the raw period are folded from the raw rows
 * inserted, so windows read from either agree. `write` leaves out raw rows or rollups (sizes by file).
 */
export function seed(file: string, names: string[], now: number, write = { raw: true, rollups: true }): Seeded {
  const db = new Database(file);
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -262144');
  const snap = db.prepare('INSERT INTO snapshots (target, ts, checked_at, status, response_time_ms, details, error) VALUES (?, ?, ?, ?, ?, ?, ?)');
  const put = { hour: db.prepare('INSERT INTO rollup_hour VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)'), day: db.prepare('INSERT INTO rollup_day VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)') };
  const tpl = templates();
  const n = names.length;
  const klass = names.map((_, i) => i % CLASS_MS.length);
  const offset = names.map((_, i) => Math.floor((i * EVERY_MS) / n)); // targets spread over the interval
  const gens = names.map((_, i) => mulberry32(i + 1));
  const outageLeft = new Array<number>(n).fill(0);
  const rawStart = ceilTo(now - RAW_DAYS * DAY, HOUR);
  const rawDay = floorTo(rawStart, DAY);
  const rollupStart = floorTo(now, DAY) - (ROLLUP_DAYS - 1) * DAY;
  const out = { now, rawStart, rollupStart, raw: 0, hours: 0, days: 0, phases: '' };
  let pending = 0;
  const row = (kind: 'raw' | 'hours' | 'days'): void => {
    out[kind]++;
    if (++pending < 200_000) return;
    db.exec('COMMIT; BEGIN');
    pending = 0;
  };
  // Each target's running totals over its hours (the store's cum_* columns): operational, degraded, down, maintenance.
  const cum = names.map(() => [0, 0, 0, 0]);
  const rollup = (g: 'hour' | 'day', i: number, start: number, a: Acc): void => {
    if (!write.rollups) return;
    if (g === 'hour') {
      const c = cum[i]!;
      c[0]! += a.operational;
      c[1]! += a.degraded;
      c[2]! += a.down;
      put.hour.run(names[i], start, ...a.values(), ...c);
    } else put.day.run(names[i], start, ...a.values());
    row(g === 'hour' ? 'hours' : 'days');
  };
  const dayOf = (i: number, day: number) => tpl[klass[i]!]!.days[hash(i, day / DAY) % 32]!;
  let dayAcc: Acc[] = [];
  const phase = performance.now();
  let synthMs = 0;
  db.exec('BEGIN');
  for (let h = rollupStart; h <= now; h += HOUR) {
    const day = floorTo(h, DAY);
    if (h === day) {
      dayAcc = names.map(() => new Acc());
      if (day < rawDay) for (let i = 0; i < n; i++) rollup('day', i, day, dayOf(i, day).day);
    }
    if (h < rawStart) {
      for (let i = 0; i < n; i++) {
        const a = dayOf(i, day).hours[(h - day) / HOUR]!;
        rollup('hour', i, h, a);
        if (day >= rawDay) dayAcc[i]!.merge(a);
      }
    } else {
      if (!synthMs) synthMs = performance.now() - phase;
      const hourAcc = names.map(() => new Acc());
      for (let s = 0; s < HOUR / EVERY_MS; s++) {
        for (let i = 0; i < n; i++) {
          const ts = h + offset[i]! + s * EVERY_MS;
          if (ts > now) continue;
          const r = gens[i]!;
          // About one outage (2-20 min) per target every 20 days.
          if (outageLeft[i]! === 0 && r() < 1 / (20 * 720)) outageLeft[i] = 1 + Math.floor(r() * 10);
          const c = check(r, CLASS_MS[klass[i]!]!, outageLeft[i]! > 0);
          if (outageLeft[i]! > 0) outageLeft[i]!--;
          if (write.raw) {
            snap.run(names[i], ts, new Date(ts).toISOString(), c.status, c.rt, c.details, c.error);
            row('raw');
          }
          hourAcc[i]!.add(c);
          dayAcc[i]!.add(c);
        }
      }
      for (let i = 0; i < n; i++) if (hourAcc[i]!.checks) rollup('hour', i, h, hourAcc[i]!);
    }
    if (day >= rawDay && (h + HOUR === day + DAY || h + HOUR > now)) {
      for (let i = 0; i < n; i++) if (dayAcc[i]!.checks) rollup('day', i, day, dayAcc[i]!);
    }
  }
  db.exec('COMMIT');
  // As the daily prune leaves it: raw rows are complete from the raw period's start on.
  if (write.raw) db.prepare("INSERT INTO monitor_meta (key, value) VALUES ('raw_floor', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(rawStart);
  db.pragma('journal_mode = WAL');
  db.close();
  out.phases = `${(synthMs / 1000).toFixed(1)} s for the rollups before the raw period, ${((performance.now() - phase - synthMs) / 1000).toFixed(1)} s for the raw period`;
  return out;
}

/** Raw rows and hourly rollups of the raw period, and daily against hourly rollups, must agree exactly. */
function checkAgreement(file: string, names: string[], s: Seeded): void {
  const db = new Database(file, { readonly: true });
  const raw = db.prepare(`SELECT sum(status = 'operational') AS op, sum(status = 'degraded') AS deg, sum(status = 'down') AS down, sum(response_time_ms) AS rt FROM snapshots WHERE target = ?`);
  const sums = (g: string, where: string) =>
    db.prepare(`SELECT sum(operational) AS op, sum(degraded) AS deg, sum(down) AS down, sum(rt_sum) AS rt FROM rollup_${g} WHERE target = ? ${where}`);
  const hourRaw = sums('hour', 'AND start >= ?');
  const hourAll = sums('hour', '');
  const dayAll = sums('day', '');
  for (const t of [names[0]!, names[Math.floor(names.length / 2)]!, names.at(-1)!]) {
    const a = [JSON.stringify(raw.get(t)), JSON.stringify(hourRaw.get(t, s.rawStart))];
    const b = [JSON.stringify(hourAll.get(t)), JSON.stringify(dayAll.get(t))];
    if (a[0] !== a[1] || b[0] !== b[1]) throw new Error(`seeded rollups disagree for ${t}: raw ${a[0]} hourly ${a[1]}; hourly ${b[0]} daily ${b[1]}`);
  }
  db.close();
  console.log(`checked: raw rows = hourly rollups of the raw period, hourly = daily over ${ROLLUP_DAYS} days (3 sampled targets)`);
}

/** Bytes per table and index from dbstat; undefined when SQLite was built without it. */
function dbstatBytes(file: string): Map<string, number> | undefined {
  const db = new Database(file, { readonly: true });
  try {
    const rows = db.prepare('SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name').all() as { name: string; bytes: number }[];
    return new Map(rows.map((r) => [r.name, r.bytes]));
  } catch {
    return undefined;
  } finally {
    db.close();
  }
}

/** Raw and rollup bytes per target-day, and the steady state at the defaults (14 d raw + 400 d rollups). */
function storageFigures(file: string, names: string[], s: Seeded, seededBytes = dbstatBytes(file)): void {
  let rawBytes: number;
  let rollupBytes: number;
  let how: string;
  if (seededBytes) {
    const b = (k: string): number => seededBytes.get(k) ?? 0;
    rawBytes = b('snapshots') + b('snapshots_target_ts');
    rollupBytes = b('rollup_hour') + b('rollup_day');
    how = `dbstat: snapshots ${(b('snapshots') / 2 ** 20).toFixed(0)} MiB + index ${(b('snapshots_target_ts') / 2 ** 20).toFixed(0)} MiB, rollup_hour ${(b('rollup_hour') / 2 ** 20).toFixed(0)} MiB, rollup_day ${(b('rollup_day') / 2 ** 20).toFixed(0)} MiB`;
  } else {
    // No dbstat: the same history seeded twice more, raw only and rollups only, measured by file size.
    const size = (write: { raw: boolean; rollups: boolean }): number => {
      const f = `${file}.${write.raw ? 'raw' : 'rollups'}`;
      void new SqliteMonitorStore(f).close();
      const empty = statSync(f).size;
      seed(f, names, s.now, write);
      const bytes = statSync(f).size - empty;
      rmSync(f, { force: true });
      return bytes;
    };
    rawBytes = size({ raw: true, rollups: false });
    rollupBytes = size({ raw: false, rollups: true });
    how = 'no dbstat: file sizes of separate seeds';
  }
  const rawPerDay = rawBytes / (names.length * ((s.now - s.rawStart) / DAY));
  const rollupPerDay = rollupBytes / (names.length * ((s.now - s.rollupStart) / DAY));
  const perTarget = 14 * rawPerDay + 400 * rollupPerDay;
  console.log(`database bytes (${how}):`);
  console.log(`  raw checks (one per 2 min): ${(rawPerDay / 1024).toFixed(1)} KiB per target-day; rollups (hour + day): ${(rollupPerDay / 1024).toFixed(2)} KiB per target-day`);
  console.log(`  steady state at the defaults (14 d raw + 400 d rollups): ${(perTarget / 2 ** 20).toFixed(1)} MiB per target (raw ${((14 * rawPerDay) / 2 ** 20).toFixed(1)}, rollups ${((400 * rollupPerDay) / 2 ** 20).toFixed(1)}); 1,000 targets ${((perTarget * 1000) / 2 ** 30).toFixed(2)} GiB`);
}

/** Waits until the daemon's first round of checks (within 2 s of its start) is recorded. */
async function firstChecks(file: string, rows: number): Promise<void> {
  const db = new Database(file, { readonly: true });
  const max = db.prepare('SELECT max(id) FROM snapshots').pluck();
  const until = Date.now() + 30_000;
  while (((max.get() as number | null) ?? 0) < rows && Date.now() < until) await sleep(100);
  db.close();
  await sleep(200);
}

async function history(dir: string, targetUrl: string): Promise<void> {
  const names = targetNames(Number(process.env.BENCH_HISTORY_TARGETS ?? 1000));
  const file = join(dir, 'monitor.db');
  await new SqliteMonitorStore(file).close();
  const t0 = performance.now();
  const s = seed(file, names, Date.now());
  const seedS = (performance.now() - t0) / 1000;
  console.log(`seeded ${names.length} targets in ${seedS.toFixed(1)} s: ${(s.raw / 1e6).toFixed(2)}M raw checks (${RAW_DAYS} days), ${(s.hours / 1e6).toFixed(2)}M hourly and ${(s.days / 1e3).toFixed(0)}k daily rollups (${ROLLUP_DAYS} days); file ${(statSync(file).size / 2 ** 30).toFixed(2)} GiB\n  (${s.phases})`);
  checkAgreement(file, names, s);
  storageFigures(file, names, s);

  writeFileSync(join(dir, 'monitor.yaml'), config(names, targetUrl, '1h'));
  const profDir = process.env.BENCH_PROFILE ? mkdtempSync(join(tmpdir(), 'mkt-bench-monitor-prof-')) : undefined;
  const spawned = performance.now();
  const mon: ServerProcess = await serveBuilt('monitor', dir, {}, profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []);
  let window: [number, number, number] = [0, 0, 0];
  try {
    // The interval is 1 h, but every target is checked once within 2 s of the start: let that pass.
    await firstChecks(file, s.raw + names.length);
    const c0 = performance.now();
    const res = await fetch(`${mon.url}/api/status`, { headers: AUTH });
    const bytes = (await res.arrayBuffer()).byteLength;
    const coldMs = performance.now() - c0;
    const c1 = performance.now();
    if (res.status !== 200) throw new Error(`GET /api/status: ${res.status}`);
    console.log(`GET /api/status, first (cold) request: ${coldMs.toFixed(0)} ms, ${(bytes / 2 ** 20).toFixed(2)} MiB ${goal(coldMs < 300, '< 300 ms')}`);
    const r = await autocannon(`${mon.url}/api/status`, { headers: AUTH, seconds: 10, connections: 1 });
    window = [c0 - spawned, c1 - spawned, performance.now() - spawned];
    console.log(`GET /api/status at one connection for 10 s: ${r.rps.toFixed(1)} req/s, p99 ${r.p99} ms ${goal(r.p99 < 50, '< 50 ms')}${r.errors || r.non2xx ? `; errors ${r.errors} non2xx ${r.non2xx}` : ''}`);
    // The 10 s above are served from the status cache; every 15 s (30 s for the windows) it is rebuilt.
    await sleep(Math.max(0, c0 + 31_000 - performance.now()));
    const a0 = performance.now();
    await (await fetch(`${mon.url}/api/status`, { headers: AUTH })).arrayBuffer();
    console.log(`  (GET /api/status once the cached statuses and windows have aged out, 31 s after the first: ${(performance.now() - a0).toFixed(0)} ms)`);
    const hwm = procStats(mon.pid).hwmKb / 1024;
    console.log(`monitor peak RSS (VmHWM): ${hwm.toFixed(0)} MiB ${goal(hwm < 250, '< 250 MiB')}`);
    const one = ((await (await fetch(`${mon.url}/api/status/${names[0]}`, { headers: AUTH })).json()) as Record<string, unknown>);
    console.log(`  (${names[0]}: uptime 24h ${one.uptime_24h} %, 7d ${one.uptime_7d} %, 365d ${one.uptime_365d} %; latency_24h ${JSON.stringify(one.latency_24h)})`);
  } finally {
    await mon.stop();
  }
  // The daemon warms its status cache at start; without it, a first request builds every status.
  const cold = new SqliteMonitorStore(file);
  try {
    const cfg = parseMonitorConfig(config(names, targetUrl, '1h'));
    const b0 = performance.now();
    await new StatusCache(cold, Date.now).all(cfg);
    console.log(`  (every status built from the store, no cache, in one process: ${(performance.now() - b0).toFixed(0)} ms; the daemon does this in the background at start and keeps it warm)`);
  } finally {
    await cold.close();
  }
  if (profDir) {
    const prof = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
    if (!prof) throw new Error('the daemon wrote no profile');
    console.log(`profile ${join(profDir, prof)}\nfirst GET /api/status, hottest by self time: ${hottest(join(profDir, prof), window[0], window[1])}`);
    console.log(`GET /api/status at one connection, hottest by self time: ${hottest(join(profDir, prof), window[1], window[2])}`);
  }
}

async function scheduling(dir: string, targetUrl: string): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 60);
  const targets = 5000;
  const intervalS = 30;
  writeFileSync(join(dir, 'monitor.yaml'), config(targetNames(targets), targetUrl, `${intervalS}s`));
  const mon = await serveBuilt('monitor', dir);
  const db = new Database(join(dir, 'monitor.db'), { readonly: true });
  const rows = db.prepare('SELECT count(*) FROM snapshots').pluck();
  const spans = db.prepare('SELECT count(*), min(ts), max(ts) FROM snapshots WHERE ts >= ? AND ts < ? GROUP BY target').raw();
  try {
    await sleep(intervalS * 1000); // one interval: every target has been checked and rescheduled with jitter
    // prom-client reads the counter as a scrape starts; the scrape then builds 5,000 statuses, so
    // checks are counted from scrape start to scrape start, and CPU between the scrapes.
    const r0 = rows.get() as number;
    const wall0 = Date.now();
    const t0 = performance.now();
    const c0 = await healthChecks(mon.url);
    const s0 = procStats(mon.pid);
    const u0 = performance.now();
    await sleep(seconds * 1000);
    const s1 = procStats(mon.pid);
    const u1 = performance.now();
    const r1 = rows.get() as number;
    const wall1 = Date.now();
    const c1 = await healthChecks(mon.url);
    const elapsed = (u1 - t0) / 1000;
    const fromMetrics = c1 - c0 > 0;
    const achieved = (fromMetrics ? c1 - c0 : r1 - r0) / elapsed;
    const scheduled = targets / intervalS;
    console.log(`${targets} targets every ${intervalS} s, measured ${seconds} s after one interval: ${achieved.toFixed(1)} checks/s of ${scheduled.toFixed(1)} scheduled, ratio ${ratio(achieved, scheduled)} (counted from ${fromMetrics ? '/metrics' : 'the snapshots table'}; snapshots table ${((r1 - r0) / elapsed).toFixed(1)}/s)`);
    // Checks bunch after the start (all 5,000 within its first 2 s), so a count over a window swings
    // with where the bunches fall; each target's own intervals inside the window do not.
    let gaps = 0;
    let span = 0;
    for (const [n, first, last] of spans.all(wall0, wall1) as [number, number, number][]) {
      if (n < 2) continue;
      gaps += n - 1;
      span += last - first;
    }
    const meanS = span / gaps / 1000;
    console.log(`  mean interval between one target's checks inside the window: ${meanS.toFixed(2)} s of ${intervalS} s scheduled (ratio ${ratio(intervalS, meanS)})`);
    console.log(`monitor CPU ${(((s1.cpuMs - s0.cpuMs) / (u1 - u0)) * 100).toFixed(1)}% of one core, peak RSS (VmHWM) ${(s1.hwmKb / 1024).toFixed(0)} MiB`);
  } finally {
    db.close();
    await mon.stop();
  }
}

async function healthThroughput(dir: string): Promise<void> {
  writeFileSync(join(dir, 'monitor.yaml'), `token: ${TOKEN}\n`);
  const mon = await serveBuilt('monitor', dir, { MKT_LOG_LEVEL: 'warn' });
  const body = await (await fetch(`${mon.url}/api/health`)).text();
  const bare = await bareServer(body);
  try {
    const b = await autocannon(`${bare.url}/api/health`);
    const m = await autocannon(`${mon.url}/api/health`);
    console.log(`bare node:http ${b.rps.toFixed(0)} req/s; GET /api/health ${m.rps.toFixed(0)} req/s, p99 ${m.p99} ms; ratio ${ratio(m.rps, b.rps)} (target >= 0.60)`);
  } finally {
    bare.server.close();
    await mon.stop();
  }
}

/** The dashboard of `n` operational targets, each with 90 days and a 24-hour trend; ms, median of 5. */
function dashboardMs(n: number): number {
  const at = '2026-01-01T12:00:00.000Z';
  const statuses: Record<string, TargetStatus> = {};
  const days: Record<string, DayCell[]> = {};
  const trends: Record<string, (number | null)[]> = {};
  for (let i = 0; i < n; i++) {
    const name = `target-${i}`;
    statuses[name] = { label: name, latest: { status: 'operational', checked_at: at, response_time_ms: 5 }, recent: [], uptime_24h: 100, uptime_7d: 99.9, uptime_90d: 99.9 } as TargetStatus;
    days[name] = Array.from({ length: 90 }, (_, d) => ({ date: new Date(Date.parse('2026-01-01') - (89 - d) * DAY).toISOString().slice(0, 10), uptime: 99.9, checks: 1440, down: 1, maintenance: 0 }));
    trends[name] = Array.from({ length: 24 }, (_, h) => 20 + h);
  }
  const times: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t0 = performance.now();
    renderDashboard({ instance: 'bench', version: '1', generatedAt: at, statuses, trends, days });
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[2]!;
}

/**
 * Part 5: the dashboard's render time a target at 100, 1,000 and 3,000 targets (moved here from a
 * timed test). From 100 to 1,000 a target cost about 3 times more when this was written (measured,
 * not traced); from 1,000 to 3,000 it did not grow, and that ratio is the one to watch.
 */
function dashboard(): void {
  const per = [100, 1000, 3000].map((n) => (dashboardMs(n) / n) * 1000);
  console.log(`dashboard HTML, µs a target: 100 targets ${per[0]!.toFixed(0)}, 1,000 ${per[1]!.toFixed(0)}, 3,000 ${per[2]!.toFixed(0)}; 3,000 against 1,000: ratio ${ratio(per[2]!, per[1]!)} (1.00: no growth with the count)`);
}

export async function run(): Promise<void> {
  if (process.env.BENCH_ONLY === 'dashboard') return dashboard();
  const target = await bareServer(JSON.stringify({ status: 'ok' }));
  const dirs = [1, 2, 3].map(() => mkdtempSync(join(tmpdir(), 'mkt-bench-monitor-')));
  try {
    const only = process.env.BENCH_ONLY; // health | history | scheduling
    if (!only || only === 'health') await healthThroughput(dirs[0]!);
    if (!only || only === 'history') await history(dirs[1]!, `${target.url}/health`);
    if (!only || only === 'scheduling') await scheduling(dirs[2]!, `${target.url}/health`);
    // Heartbeats (issue 31): pings/s and 10,000 deadlines, bench/monitor-heartbeat.ts.
    if (!only || only === 'pings' || only === 'deadlines') await heartbeat();
    if (!only) dashboard();
  } finally {
    target.server.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}
