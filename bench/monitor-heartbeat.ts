// Heartbeat benchmark (issue 31), run as a part of `npm run bench -- monitor` (BENCH_ONLY=pings or
// deadlines for one part): (1) pings/s at /ping/{key}, GET and POST with a small log, as a ratio to
// bare node:http answering the same bytes (goal >= 0.5); (2) 10,000 heartbeat targets on one SQLite
// instance, deadlines spread over 20-30 s: the delay from each deadline to its "no ping since" down
// snapshot (goal p99 <= 1 s), and the daemon's CPU and RSS. Needs `npm run build` (the real binary).
// MKT_BENCH_PING_SECONDS (default 5), MKT_BENCH_PING_ROUNDS (5), MKT_BENCH_PING_WARM (4) and
// MKT_BENCH_HB_TARGETS (10,000) shorten it;
// BENCH_PROFILE=1 runs the deadlines daemon under --cpu-prof and prints its hottest frames.
import { readdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { autocannon, bareServer, procStats, hottest, ratio, serveBuilt, type LoadResult } from './_util.js';

const TOKEN = 'bench-token';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const goal = (met: boolean, text: string): string => `(goal ${text}: ${met ? 'met' : 'NOT met'})`;
/** Ping keys from the configuration, so the bench knows them without asking the API. */
const keyOf = (i: number): string => `bench-ping-key-${String(i).padStart(6, '0')}`;
const nameOf = (i: number): string => `hb-${String(i).padStart(5, '0')}`;

/** A heartbeat target per entry; `interval` long, so only pings and deadlines make turns. */
function config(targets: { period: string; grace: string }[]): string {
  const lines = [`name: bench`, `token: ${TOKEN}`, `incident_threshold: 1`, `targets:`];
  targets.forEach((t, i) => lines.push(`  ${nameOf(i)}:`, `    interval: 10m`, `    heartbeat: { period: ${t.period}, grace: ${t.grace}, ping_key: ${keyOf(i)} }`));
  return lines.join('\n') + '\n';
}

function row(name: string, r: LoadResult, base?: LoadResult): string {
  const rel = base ? `  ratio ${ratio(r.rps, base.rps)} ${goal(r.rps / base.rps >= 0.5, '>= 0.50')}` : ' (baseline)';
  return `${name.padEnd(34)} ${r.rps.toFixed(0).padStart(7)} req/s  p99 ${String(r.p99).padStart(4)} ms${rel}${r.errors || r.non2xx ? `  errors ${r.errors} non2xx ${r.non2xx}` : ''}`;
}

/** Part 1: one heartbeat target pinged by 20 keep-alive connections (autocannon), against bare node:http. */
async function pings(dir: string): Promise<void> {
  const seconds = Number(process.env.MKT_BENCH_PING_SECONDS ?? 5);
  writeFileSync(join(dir, 'monitor.yaml'), config([{ period: '1h', grace: '1h' }]));
  const mon = await serveBuilt('monitor', dir);
  const url = `${mon.url}/ping/${keyOf(0)}`;
  const answer = await (await fetch(url)).text();
  if (!answer.includes('"ok":true')) throw new Error(`GET /ping/KEY answered ${answer}`);
  const bare = await bareServer(answer);
  // A small run log, as `mkt monitor run` sends with its exit status (curl --data-binary sends form encoding; any type is a log).
  const log = 'rsync: 1,204 files, 38 MiB sent\nbackup finished in 41 s\n'.repeat(3);
  const post = { method: 'POST' as const, body: log, headers: { 'content-type': 'text/plain' }, seconds };
  try {
    const db = new Database(join(dir, 'monitor.db'), { readonly: true });
    const count = db.prepare('SELECT count(*) FROM snapshots WHERE target = ?').pluck();
    // The daemon's ping path is still being compiled after a load's one second of warm-up (a profile after
    // 2 s of load: 1,050 pings/s, after 6 s: 2,961): it first takes pings of both kinds, not counted.
    const warm = Number(process.env.MKT_BENCH_PING_WARM ?? 4);
    await autocannon(url, { seconds: warm });
    await autocannon(`${url}/0`, { ...post, seconds: warm });
    // Rounds of bare GET and our GET, bare POST and our POST, each pair back to back: the machine's
    // load from other jobs moves both alike within a round, and the median round's ratio is reported.
    const rounds = Math.max(1, Number(process.env.MKT_BENCH_PING_ROUNDS ?? 5));
    type Measured = LoadResult & { cpuUs: number };
    const results: { bareGet: Measured; get: Measured; barePost: Measured; post: Measured }[] = [];
    let cpu = { get: 0, post: 0 };
    let rows = { get: 0, post: 0 };
    /**
     * A load after its 1 s warm-up, with the CPU its server spent a request during it: the bare
     * server's is this process's own (autocannon runs in a child), the daemon's from /proc.
     */
    const measured = async (target: string, load: Parameters<typeof autocannon>[1], daemon: boolean): Promise<Measured> => {
      await autocannon(target, { ...load, seconds: 1 });
      const before = daemon ? procStats(mon.pid).cpuMs * 1000 : process.cpuUsage();
      const r = await autocannon(target, load);
      const spentUs = daemon ? procStats(mon.pid).cpuMs * 1000 - (before as number) : ((u) => u.user + u.system)(process.cpuUsage(before as NodeJS.CpuUsage));
      return { ...r, cpuUs: spentUs / Math.max(1, r.rps * seconds) };
    };
    // Each pair in turn bare first, then the daemon first: a machine speeding up or slowing down
    // through a round favours neither side across rounds.
    const pair = async <B, O>(i: number, bareRun: () => Promise<B>, ourRun: () => Promise<O>): Promise<[B, O]> => {
      if (i % 2 === 0) {
        const b = await bareRun();
        return [b, await ourRun()];
      }
      const o = await ourRun();
      return [await bareRun(), o];
    };
    /** A daemon load, with the daemon's CPU (ms) and the snapshots it recorded meanwhile. */
    const ourLoad = async (target: string, load: Parameters<typeof autocannon>[1]): Promise<{ r: Measured; cpuMs: number; rows: number }> => {
      const s0 = procStats(mon.pid).cpuMs;
      const n0 = count.get(nameOf(0)) as number;
      const r = await measured(target, load, true);
      return { r, cpuMs: procStats(mon.pid).cpuMs - s0, rows: (count.get(nameOf(0)) as number) - n0 };
    };
    for (let i = 0; i < rounds; i++) {
      const [bareGet, g] = await pair(i, () => measured(`${bare.url}/ping/x`, { seconds }, false), () => ourLoad(url, { seconds }));
      const [barePost, p] = await pair(i, () => measured(`${bare.url}/ping/x`, post, false), () => ourLoad(`${url}/0`, post));
      const get = g.r;
      const ours = p.r;
      cpu = { get: cpu.get + g.cpuMs, post: cpu.post + p.cpuMs };
      rows = { get: rows.get + g.rows, post: rows.post + p.rows };
      results.push({ bareGet, get, barePost, post: ours });
    }
    db.close();
    const median = (f: (r: (typeof results)[number]) => number): (typeof results)[number] => [...results].sort((x, y) => f(x) - f(y))[Math.floor(results.length / 2)]!;
    const mGet = median((r) => r.get.rps / r.bareGet.rps);
    const mPost = median((r) => r.post.rps / r.barePost.rps);
    console.log(`pings at /ping/{key}, 20 keep-alive connections, ${rounds} rounds of ${seconds} s a load after 1 s of warm-up (the daemon first took ${warm} s of each kind; the built daemon, info logs to a pipe):`);
    // Beside each throughput ratio, the CPU a request of bare over the daemon's: what the ratio
    // would be were both servers held only by their own CPU (a machine whose speed drifts moves it less).
    const cpuRatio = (ours: Measured, base: Measured): string => `${ratio(base.cpuUs, ours.cpuUs)} (CPU ${base.cpuUs.toFixed(0)} / ${ours.cpuUs.toFixed(0)} µs)`;
    results.forEach((r, i) => console.log(`  round ${i + 1}: GET ${r.get.rps.toFixed(0)} / bare ${r.bareGet.rps.toFixed(0)} = ${ratio(r.get.rps, r.bareGet.rps)}, by CPU ${cpuRatio(r.get, r.bareGet)}; POST ${r.post.rps.toFixed(0)} / bare ${r.barePost.rps.toFixed(0)} = ${ratio(r.post.rps, r.barePost.rps)}, by CPU ${cpuRatio(r.post, r.barePost)}`));
    console.log('the median round of each kind:');
    console.log(row('bare node:http, GET', mGet.bareGet));
    console.log(row('GET /ping/{key}', mGet.get, mGet.bareGet));
    console.log(row(`bare node:http, POST ${log.length} B`, mPost.barePost));
    console.log(row(`POST /ping/{key}/0, ${log.length} B log`, mPost.post, mPost.barePost));
    // Every ping is a snapshot: the rows written tell the pings the server took, warm-ups included.
    console.log(`  snapshots recorded: ${rows.get} during the GET loads, ${rows.post} during the POST loads; daemon CPU ${(cpu.get / rows.get).toFixed(3)} / ${(cpu.post / rows.post).toFixed(3)} ms a ping`);
  } finally {
    bare.server.close();
    await mon.stop();
  }
}

const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;

/**
 * Part 2: N heartbeat targets (MKT_BENCH_HB_TARGETS, default 10,000), periods from 39 to 49 s and
 * a grace of 1 s, each pinged once after the start: deadlines fall 40-50 s after their ping, after
 * the last first ping on this machine (10,000 take ~30 s while the daemon warms its status cache).
 */
async function deadlines(dir: string): Promise<void> {
  const n = Number(process.env.MKT_BENCH_HB_TARGETS ?? 10_000);
  const graceMs = 1000;
  const periodMs = (i: number): number => 39_000 + Math.floor((i * 10_000) / n);
  writeFileSync(join(dir, 'monitor.yaml'), config(Array.from({ length: n }, (_, i) => ({ period: `${periodMs(i)}ms`, grace: `${graceMs}ms` }))));
  const profDir = process.env.BENCH_PROFILE ? mkdtempSync(join(tmpdir(), 'mkt-bench-heartbeat-prof-')) : undefined;
  const spawned = performance.now();
  const mon = await serveBuilt('monitor', dir, {}, profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []);
  const listening = performance.now();
  const db = new Database(join(dir, 'monitor.db'), { readonly: true });
  let window: [number, number] = [0, 0];
  try {
    const afterStart = procStats(mon.pid);
    console.log(`${n} heartbeat targets (period 39-49 s, grace 1 s, interval 10m, incident_threshold 1): listening ${((listening - spawned) / 1000).toFixed(1)} s after spawn, RSS ${(afterStart.rssKb / 1024).toFixed(0)} MiB`);
    // Every target pinged once, 20 at a time over keep-alive connections (undici under fetch).
    const p0 = performance.now();
    const cpuP0 = procStats(mon.pid).cpuMs;
    let next = 0;
    let failed = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (next < n) {
          const i = next++;
          const res = await fetch(`${mon.url}/ping/${keyOf(i)}`, { method: 'POST', body: 'ok\n' });
          await res.arrayBuffer();
          if (res.status !== 200) failed++;
        }
      }),
    );
    const pingS = (performance.now() - p0) / 1000;
    if (failed) throw new Error(`${failed} of ${n} first pings failed`);
    const pingsEnd = Date.now();
    console.log(`  first pings: ${n} in ${pingS.toFixed(1)} s (${(n / pingS).toFixed(0)}/s), daemon CPU ${((procStats(mon.pid).cpuMs - cpuP0) / n).toFixed(2)} ms a ping (it warms its status cache meanwhile)`);

    // Each target's deadline, as the engine computes it: one millisecond past its last ping + period + grace.
    const states = db.prepare('SELECT target, last_end FROM heartbeats').raw().all() as [string, number | null][];
    const due = new Map<string, number>();
    for (const [t, lastEnd] of states) {
      const i = Number(t.slice(3));
      if (lastEnd === null) throw new Error(`${t} has no recorded ping`);
      due.set(t, lastEnd + periodMs(i) + graceMs + 1);
    }
    const lastDue = Math.max(...due.values());
    const firstDue = Math.min(...due.values());
    // A target pinged after its first sighting's deadline was late before its ping (and resolved by
    // it): only the verdict after the ping is measured.
    const LATE = "FROM snapshots s JOIN heartbeats h ON h.target = s.target WHERE s.status = 'down' AND s.error LIKE 'no ping since%' AND s.ts > h.last_end";
    const decided = db.prepare(`SELECT count(DISTINCT s.target) ${LATE}`).pluck();
    const lateBefore = db.prepare("SELECT count(DISTINCT s.target) FROM snapshots s JOIN heartbeats h ON h.target = s.target WHERE s.status = 'down' AND s.ts < h.last_end").pluck().get() as number;
    // CPU from just before the first deadline; then bounded by what is checked: until every target
    // is down, or 30 s past the last deadline.
    await sleep(Math.max(0, firstDue - 200 - Date.now()));
    const c0 = procStats(mon.pid);
    const w0 = performance.now();
    let rssMax = c0.rssKb;
    while ((decided.get() as number) < n && Date.now() < lastDue + 30_000) {
      await sleep(500);
      rssMax = Math.max(rssMax, procStats(mon.pid).rssKb);
    }
    const c1 = procStats(mon.pid);
    const w1 = performance.now();
    window = [w0 - spawned, w1 - spawned];

    const first = db.prepare(`SELECT s.target, min(s.ts) ${LATE} GROUP BY s.target`).raw().all() as [string, number][];
    const delays = first.map(([t, ts]) => ts - due.get(t)!).sort((a, b) => a - b);
    const early = delays.filter((d) => d < 0).length;
    const incidents = db.prepare('SELECT count(*) FROM incidents').pluck().get() as number;
    const spanS = (lastDue - firstDue) / 1000;
    const gapS = (firstDue - pingsEnd) / 1000;
    console.log(`  deadlines over ${spanS.toFixed(1)} s (${(n / spanS).toFixed(0)}/s), the first ${gapS >= 0 ? `${gapS.toFixed(1)} s after the last first ping` : `${(-gapS).toFixed(1)} s BEFORE the last first ping (the phases overlap)`}`);
    console.log(`  decided late after the ping: ${first.length} of ${n}${early ? `, ${early} BEFORE their deadline` : ''}; ${incidents} incidents opened (${lateBefore} targets were late from their first sighting before their ping)`);
    if (delays.length) {
      const p99 = quantile(delays, 0.99);
      console.log(`  deadline to "no ping since" snapshot: p50 ${quantile(delays, 0.5)} ms, p99 ${p99} ms, max ${delays.at(-1)} ms, min ${delays[0]} ms ${goal(p99 <= 1000 && first.length === n, 'p99 <= 1 s, every target')}`);
    }
    const busy = (c1.cpuMs - c0.cpuMs) / (w1 - w0);
    console.log(`  daemon from the first deadline to the last decision seen (${((w1 - w0) / 1000).toFixed(1)} s): CPU ${(busy * 100).toFixed(1)} % of one core (${((c1.cpuMs - c0.cpuMs) / Math.max(1, first.length)).toFixed(2)} ms a late decision, incident included); RSS ${(afterStart.rssKb / 1024).toFixed(0)} MiB after start, max ${(rssMax / 1024).toFixed(0)} MiB, peak (VmHWM) ${(c1.hwmKb / 1024).toFixed(0)} MiB`);
  } finally {
    db.close();
    await mon.stop();
  }
  if (profDir) {
    const prof = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
    if (!prof) throw new Error('the daemon wrote no profile');
    console.log(`profile ${join(profDir, prof)}\nstart-up and first pings, hottest by self time: ${hottest(join(profDir, prof), 0, window[0], 25)}`);
    console.log(`the deadlines, hottest by self time: ${hottest(join(profDir, prof), window[0], window[1], 25)}`);
  }
}

export async function run(): Promise<void> {
  const only = process.env.BENCH_ONLY; // pings | deadlines (monitor.ts passes these on)
  const dirs = [1, 2].map(() => mkdtempSync(join(tmpdir(), 'mkt-bench-heartbeat-')));
  try {
    if (!only || only === 'pings') await pings(dirs[0]!);
    if (!only || only === 'deadlines') await deadlines(dirs[1]!);
  } finally {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}
