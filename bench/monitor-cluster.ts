// Monitor cluster benchmark: three `mkt serve monitor` instances on one PostgreSQL database,
// 3,000 targets at a 30 s interval against a local target server that notes every hit. Once the
// leases have settled (1,000 each) and one more interval has passed, it measures for
// BENCH_INTERVALS intervals (default 3): checks/s observed against the schedule, duplicate and
// missed checks (goal: none), lease churn (window and start-up), database statements per check
// and leases, CPU and peak RSS per instance. BENCH_TARGETS and BENCH_INTERVAL_S make a quick run
// (e.g. 300 targets at 5 s). Needs `npm run build`. PostgreSQL: MKT_TEST_DATABASE_URL, else an
// embedded server of its own (with pg_stat_statements, for a breakdown of the statements).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { serveBinary, type Served } from '../test/helpers/serve-binary.js';
import { procStats, ratio } from './_util.js';

const INSTANCES = 3;
const TOKEN = 'bench-token';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const goal = (met: boolean, text: string): string => `(goal ${text}: ${met ? 'met' : 'NOT met'})`;
/** The process's CPU and peak memory, or NaN once it has gone. */
function procStatsOrNaN(pid: number): { cpuMs: number; hwmKb: number } {
  try {
    return procStats(pid);
  } catch {
    return { cpuMs: NaN, hwmKb: NaN };
  }
}

/** The metrics of one instance this bench reads, summed over the label sets that match. */
interface Figures {
  acquired: number;
  released: number;
  lost: number;
  held: number;
  statements: number;
  checks: number;
}

async function figures(url: string): Promise<Figures> {
  const res = await fetch(`${url}/metrics`, { headers: AUTH });
  if (res.status !== 200) throw new Error(`GET /metrics: ${res.status}`);
  const text = await res.text();
  const sum = (name: string, label?: [string, string]): number => {
    let n = 0;
    for (const m of text.matchAll(/^([a-z_]+)(?:\s*\{([^}]*)\})?\s+([0-9.eE+-]+)\s*$/gm)) {
      if (m[1] !== name) continue;
      if (label && !new RegExp(`(?:^|,)\\s*${label[0]}\\s*=\\s*"${label[1]}"\\s*(?:,|$)`).test(m[2] ?? '')) continue;
      n += Number(m[3]);
    }
    return n;
  };
  return {
    acquired: sum('mkt_monitor_lease_changes_total', ['change', 'acquired']),
    released: sum('mkt_monitor_lease_changes_total', ['change', 'released']),
    lost: sum('mkt_monitor_lease_changes_total', ['change', 'lost']),
    held: sum('mkt_monitor_leases_held'),
    statements: sum('mkt_monitor_db_statements_total'),
    checks: sum('mkt_monitor_checks_total', ['kind', 'health']),
  };
}

const total = (fs: Figures[], k: keyof Figures): number => fs.reduce((s, f) => s + f[k], 0);

async function peerLeases(url: string): Promise<{ id: string; leases: number }[]> {
  const res = await fetch(`${url}/api/peer/info`, { headers: AUTH });
  if (res.status !== 200) return [];
  const body = (await res.json()) as { cluster?: { instances?: { id: string; leases: number }[] } };
  return body.cluster?.instances ?? [];
}

/** The PostgreSQL server: MKT_TEST_DATABASE_URL, or an embedded one with pg_stat_statements loaded. */
async function postgresServer(): Promise<{ url: string; close(): Promise<void> }> {
  const given = process.env.MKT_TEST_DATABASE_URL?.trim();
  if (given) return { url: given, close: async () => undefined };
  const { startOwnPostgres } = await import('../test/helpers/pg-global.js');
  const own = await startOwnPostgres();
  try {
    const c = new pg.Client({ connectionString: own.url });
    await c.connect();
    await c.query("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'");
    await c.end();
    await own.stop();
    await own.start();
  } catch (err) {
    console.log(`(pg_stat_statements not loaded: ${(err as Error).message})`);
  }
  return { url: own.url, close: () => own.close() };
}

async function createDatabase(serverUrl: string): Promise<{ url: string; name: string }> {
  const name = `mkt_bench_${randomBytes(4).toString('hex')}`;
  const c = new pg.Client({ connectionString: serverUrl });
  await c.connect();
  try {
    await c.query(`CREATE DATABASE ${name}`);
  } finally {
    await c.end();
  }
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  return { url: u.toString(), name };
}

/** Statement counts by text from pg_stat_statements for one database, or undefined without it. */
class StatementStats {
  private constructor(private readonly c: pg.Client) {}
  static async open(url: string): Promise<StatementStats | undefined> {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      await c.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
      await c.query('SELECT count(*) FROM pg_stat_statements');
      return new StatementStats(c);
    } catch {
      await c.end();
      return undefined;
    }
  }
  async reset(): Promise<void> {
    await this.c.query('SELECT pg_stat_statements_reset()');
  }
  async read(): Promise<{ query: string; calls: number }[]> {
    const r = await this.c.query<{ query: string; calls: string }>(
      "SELECT query, calls FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat_statements%' ORDER BY calls DESC",
    );
    return r.rows.map((x) => ({ query: x.query.replace(/\s+/g, ' ').trim(), calls: Number(x.calls) }));
  }
  close(): Promise<void> {
    return this.c.end();
  }
}

/**
 * Which work a statement belongs to, by its text: a check's own (the engine's read of the open
 * incident, then its recording transaction: BEGIN, the target's lock, the fold read, the snapshot
 * and rollup writes, COMMIT; and the batched notice to the other instances), the leases, or reads
 * (the status cache's windows and recent checks, incident lists). A status built on request also
 * reads the open incident; in the window nothing is requested, so that read is counted as a check's.
 */
function part(query: string): string {
  if (/monitor_leases|monitor_instances/.test(query)) return 'leases';
  if (/^(BEGIN|COMMIT|ROLLBACK)|pg_advisory_xact_lock|pg_notify|^NOTIFY|^(INSERT|UPDATE|DELETE)\b|^SELECT 0 AS g\b|FROM incidents WHERE target = \$1 AND ended_at IS NULL/i.test(query)) return 'checks';
  return 'reads';
}

export async function run(): Promise<void> {
  const targets = Number(process.env.BENCH_TARGETS ?? 3000);
  const intervalS = Number(process.env.BENCH_INTERVAL_S ?? 30);
  const intervals = Number(process.env.BENCH_INTERVALS ?? 3);
  const intervalMs = intervalS * 1000;
  const width = Math.max(4, String(targets - 1).length);
  const names = Array.from({ length: targets }, (_, i) => `t${String(i).padStart(width, '0')}`);
  const begin = performance.now();
  const at = (t: number): string => `${((t - begin) / 1000).toFixed(1)} s`;

  // The target server: 200 {"status":"ok"} on every path, each hit's time noted per path.
  const hits = new Map<string, number[]>(names.map((n) => [n, []]));
  let strays = 0;
  const body = JSON.stringify({ status: 'ok' });
  const target = createServer((req, res) => {
    const list = hits.get((req.url ?? '').slice(1));
    if (list) list.push(performance.now());
    else strays++;
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  const port = (target.address() as AddressInfo).port;
  const yaml = [`name: bench`, `token: ${TOKEN}`, `rate_limit: { requests: 1000000 }`, `targets:`];
  for (const n of names) yaml.push(`  ${n}: { url: "http://127.0.0.1:${port}/${n}", interval: ${intervalS}s, timeout: 5s }`);

  const server = await postgresServer();
  const dirs: string[] = [];
  const served: Served[] = [];
  let stats: StatementStats | undefined;
  try {
    const db = await createDatabase(server.url);
    stats = await StatementStats.open(db.url);
    for (let i = 0; i < INSTANCES; i++) {
      const d = mkdtempSync(join(tmpdir(), 'mkt-bench-monitor-cluster-'));
      writeFileSync(join(d, 'monitor.yaml'), yaml.join('\n') + '\n');
      dirs.push(d);
    }
    const started = performance.now();
    served.push(...(await Promise.all(dirs.map((d) => serveBinary('monitor', d, { MKT_DATABASE_URL: db.url })))));
    const urls = served.map((s) => s.url);
    const pids = served.map((s) => s.child.pid!);
    console.log(`${INSTANCES} instances, ${targets} targets every ${intervalS} s; listening ${((performance.now() - started) / 1000).toFixed(1)} s after spawning`);

    // Settled: every instance live, each holding its fair share, all targets leased.
    const share = Math.ceil(targets / INSTANCES);
    const settleBy = performance.now() + 3 * intervalMs + 120_000;
    let leases: { id: string; leases: number }[] = [];
    for (;;) {
      leases = await peerLeases(urls[0]!);
      const sum = leases.reduce((s, l) => s + l.leases, 0);
      if (leases.length === INSTANCES && sum === targets && leases.every((l) => l.leases <= share)) break;
      if (performance.now() > settleBy) throw new Error(`leases did not settle: ${JSON.stringify(leases)}`);
      await sleep(250);
    }
    const settled = performance.now();
    const startup = await Promise.all(urls.map(figures));
    console.log(
      `leases settled ${((settled - started) / 1000).toFixed(1)} s after spawning: ${leases.map((l) => l.leases).join(' / ')}; start-up churn: acquired ${total(startup, 'acquired')}, released ${total(startup, 'released')}, lost ${total(startup, 'lost')} (${targets} acquisitions is the minimum)`,
    );

    await sleep(intervalMs); // one interval: every target checked by its owner, rescheduled with jitter
    const s0 = performance.now();
    const f0 = await Promise.all(urls.map(figures));
    const t0 = performance.now();
    const p0 = pids.map(procStatsOrNaN);
    await stats?.reset();
    await sleep(intervals * intervalMs);
    const t1 = performance.now();
    const p1 = pids.map(procStatsOrNaN);
    const byStatement = await stats?.read(); // before the closing scrapes, which build every status
    const f1 = await Promise.all(urls.map(figures));
    const s1 = performance.now();
    const endLeases = await peerLeases(urls[0]!);
    const seconds = (t1 - t0) / 1000;

    // Checks/s against the schedule, from the target server and from the instances' counters.
    let inWindow = 0;
    for (const list of hits.values()) for (const h of list) if (h >= t0 && h < t1) inWindow++;
    const scheduled = targets / intervalS;
    const counted = total(f1, 'checks') - total(f0, 'checks');
    console.log(
      `window ${seconds.toFixed(1)} s (${intervals} intervals, from ${at(t0)}): ${(inWindow / seconds).toFixed(1)} checks/s observed at the target server of ${scheduled.toFixed(1)} scheduled, ratio ${ratio(inWindow / seconds, scheduled)} (goal 1.00 within jitter); the instances counted ${counted} checks between their scrapes (${((t0 - s0) / 1000).toFixed(1)} s before the window to ${((s1 - t1) / 1000).toFixed(1)} s after it), ${(counted / ((s1 - s0) / 1000)).toFixed(1)}/s over that span${strays ? `; ${strays} requests to unknown paths` : ''}`,
    );

    // Duplicates and misses, per target, from the hit times.
    const dupes: { name: string; a: number; b: number }[] = [];
    const gaps: { name: string; a: number; b: number; open: boolean }[] = [];
    const none: string[] = [];
    let spans = 0;
    let spanMs = 0;
    for (const [name, list] of hits) {
      list.sort((x, y) => x - y);
      const inside = list.filter((h) => h >= t0 && h < t1);
      if (!inside.length) none.push(name);
      for (let i = 1; i < list.length; i++) {
        const [a, b] = [list[i - 1]!, list[i]!];
        if (b < t0 || b >= t1) continue;
        if (b - a < intervalMs / 2) dupes.push({ name, a, b });
        if (b - a > 1.5 * intervalMs) gaps.push({ name, a, b, open: false });
        if (a >= t0) {
          spans++;
          spanMs += b - a;
        }
      }
      const last = inside.at(-1) ?? list.filter((h) => h < t0).at(-1);
      if (last !== undefined && t1 - last > 1.5 * intervalMs) gaps.push({ name, a: last, b: t1, open: true });
    }
    const show = (xs: { name: string; a: number; b: number; open?: boolean }[]): string =>
      xs
        .slice(0, 8)
        .map((x) => `${x.name} ${at(x.a)} -> ${x.open ? `(none by the window's end, ${at(x.b)})` : at(x.b)} (${((x.b - x.a) / 1000).toFixed(2)} s)`)
        .join('; ');
    console.log(`duplicates (two hits of one target < ${intervalS / 2} s apart): ${dupes.length} ${goal(dupes.length === 0, '0')}${dupes.length ? `: ${show(dupes)}` : ''}`);
    console.log(
      `missed (a gap > ${1.5 * intervalS} s between hits, or no hit in the window): ${gaps.length + none.length} ${goal(gaps.length + none.length === 0, '0')}${gaps.length ? `: ${show(gaps)}` : ''}${none.length ? `; no hit: ${none.slice(0, 8).join(', ')}${none.length > 8 ? ` and ${none.length - 8} more` : ''}` : ''}`,
    );
    if (spans) console.log(`  mean interval between one target's hits inside the window: ${(spanMs / spans / 1000).toFixed(2)} s of ${intervalS} s scheduled (ratio ${ratio(intervalS, spanMs / spans / 1000)})`);
    if (gaps.length) {
      const when = new Map<number, number>();
      for (const g of gaps) when.set(Math.floor((g.b - begin) / 5000) * 5, (when.get(Math.floor((g.b - begin) / 5000) * 5) ?? 0) + 1);
      console.log(`  gaps by when they ended (5 s bins from the start): ${[...when].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s} s: ${n}`).join(', ')}`);
    }

    // Leases, statements, CPU and memory.
    const d = (k: keyof Figures): number => total(f1, k) - total(f0, k);
    console.log(`lease churn in the window: acquired ${d('acquired')}, released ${d('released')}, lost ${d('lost')} (goal 0 each once settled)`);
    console.log(`leases held per instance at the end: ${f1.map((f) => f.held).join(' / ')} (/api/peer/info: ${endLeases.map((l) => l.leases).join(' / ')}; fair share ${share})`);
    const statements = d('statements');
    console.log(`database statements in the window: ${statements}, ${(statements / Math.max(1, counted)).toFixed(2)} per check (BEGIN/COMMIT included; per instance ${f1.map((f, i) => f.statements - f0[i]!.statements).join(' / ')})`);
    if (byStatement) {
      const all = byStatement.reduce((s, x) => s + x.calls, 0);
      const parts = new Map<string, number>();
      for (const x of byStatement) parts.set(part(x.query), (parts.get(part(x.query)) ?? 0) + x.calls);
      // Per check recorded in the same span: the snapshot inserts.
      const recorded = byStatement.find((x) => /^INSERT INTO snapshots\b/i.test(x.query))?.calls ?? counted;
      const per = (n: number, digits = 2): string => (n / Math.max(1, recorded)).toFixed(digits);
      console.log(`  pg_stat_statements, the window alone: ${all} statements, ${recorded} checks recorded, ${per(all)} per check: ${[...parts].map(([k, n]) => `${k} ${per(n)}`).join(', ')}; the most frequent, per check:`);
      for (const x of byStatement.slice(0, 14)) console.log(`  ${per(x.calls, 3).padStart(7)}  ${x.query.slice(0, 140)}`);
    }
    for (let i = 0; i < INSTANCES; i++) {
      const cpu = (p1[i]!.cpuMs - p0[i]!.cpuMs) / (t1 - t0);
      console.log(`instance ${i + 1}: CPU ${(cpu * 100).toFixed(1)} % of one core in the window; peak RSS (VmHWM) ${(p1[i]!.hwmKb / 1024).toFixed(0)} MiB`);
    }
  } finally {
    await stats?.close().catch(() => undefined);
    await Promise.all(
      served.map(async (s) => {
        s.child.kill('SIGTERM');
        const killer = setTimeout(() => s.child.kill('SIGKILL'), 15_000);
        await s.exited;
        clearTimeout(killer);
      }),
    );
    target.closeAllConnections();
    target.close();
    await server.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}
