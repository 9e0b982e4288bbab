// MonitorStore: the health monitor's history — check snapshots, route/DNS/TLS/WHOIS results,
// test runs and incidents — with windowed statistics computed in SQL or in one streamed pass.
import { migrate, openDatabase, type Db } from './sqlite.js';
import type { LimiterWindows } from './limiter-windows.js';
import { SqlLimiterWindows } from './limiter-windows-sql.js';

export type { Snapshot, LatencyStats, TrendBucket } from '../schemas/monitor.js';
import type { Snapshot, LatencyStats, TrendBucket } from '../schemas/monitor.js';

export interface RouteResult {
  path: string;
  status_code: number;
  ok: boolean;
  checked_at: string;
  response_time_ms: number;
  error?: string;
}

export interface DnsResult {
  name: string;
  record_type: string;
  expected: string[];
  actual: string[];
  matches: boolean;
  checked_at: string;
  error?: string;
}

export interface TestRun {
  started_at: string;
  exit_code: number | null;
  duration_ms: number;
  passed: boolean;
  error?: string;
}

export interface Incident {
  id: number;
  status: 'open' | 'resolved';
  started_at: string;
  ended_at: string | null;
  cause: string;
  checks: number;
  duration_s: number | null;
}

/** Checks of a period by outcome; `maintenance` checks count neither up nor down. */
export interface CheckCounts {
  operational: number;
  degraded: number;
  down: number;
  maintenance: number;
}

/** One hourly or daily rollup: the counts of its checks and the latency of its timed ones. */
export interface Rollup extends CheckCounts {
  /** Start of the hour or UTC day, epoch ms. */
  start: number;
  /** Latency over the checks with a response time > 0 outside maintenance; null when none. */
  latency: LatencyStats | null;
}

export type RollupGrain = 'hour' | 'day';

export interface MonitorStore {
  recordSnapshot(target: string, s: Snapshot): Promise<void>;
  recent(target: string, limit: number): Promise<Snapshot[]>;
  /** Checks since `sinceMs`: total, and how many were up (operational or degraded). */
  uptime(target: string, sinceMs: number): Promise<{ total: number; up: number }>;
  latency(target: string, sinceMs: number): Promise<LatencyStats | null>;
  trend(target: string, sinceMs: number, bucketMs: number, buckets: number): Promise<TrendBucket[]>;
  saveRoutes(target: string, results: RouteResult[]): Promise<void>;
  routes(target: string): Promise<RouteResult[]>;
  saveDns(target: string, results: DnsResult[]): Promise<void>;
  dns(target: string): Promise<DnsResult[]>;
  /** Latest TLS or WHOIS result (kind = 'tls' | 'whois'), stored as an opaque object. */
  saveResult(target: string, kind: string, result: Record<string, unknown>): Promise<void>;
  result(target: string, kind: string): Promise<Record<string, unknown> | undefined>;
  recordTestRun(target: string, run: TestRun): Promise<void>;
  testRuns(target: string, limit: number): Promise<TestRun[]>;
  lastPassingRun(target: string): Promise<TestRun | undefined>;
  openIncident(target: string, startedAt: string, cause: string, checks: number): Promise<Incident>;
  addIncidentCheck(id: number): Promise<void>;
  resolveIncident(id: number, endedAt: string): Promise<void>;
  currentIncident(target: string): Promise<Incident | undefined>;
  incidents(target: string, limit: number): Promise<Incident[]>;
  /**
   * Checks in [sinceMs, untilMs) by outcome: whole hours and days from the rollups, the partial
   * hour at the start from raw rows while they are kept (beyond the raw retention the window
   * starts at the next whole hour).
   */
  counts(target: string, sinceMs: number, untilMs: number): Promise<CheckCounts>;
  /** Hourly or daily rollups starting in [fromMs, toMs), oldest first; periods without checks are absent. */
  rollups(target: string, grain: RollupGrain, fromMs: number, toMs: number): Promise<Rollup[]>;
  /** Drops raw rows and test runs before `rawBeforeMs`, rollups and resolved incidents before `rollupsBeforeMs`; returns rows removed. */
  prune(cut: { rawBeforeMs: number; rollupsBeforeMs: number }): Promise<number>;
  close(): Promise<void>;
}

const MIGRATIONS = [
  `CREATE TABLE snapshots (
     id INTEGER PRIMARY KEY,
     target TEXT NOT NULL,
     ts INTEGER NOT NULL,
     checked_at TEXT NOT NULL,
     status TEXT NOT NULL,
     response_time_ms INTEGER NOT NULL,
     details TEXT,
     error TEXT
   );
   CREATE INDEX snapshots_target_ts ON snapshots(target, ts, status, response_time_ms);
   CREATE TABLE route_checks (target TEXT NOT NULL, path TEXT NOT NULL, result TEXT NOT NULL, PRIMARY KEY (target, path));
   CREATE TABLE dns_checks (target TEXT NOT NULL, key TEXT NOT NULL, result TEXT NOT NULL, PRIMARY KEY (target, key));
   CREATE TABLE results (target TEXT NOT NULL, kind TEXT NOT NULL, result TEXT NOT NULL, PRIMARY KEY (target, kind));
   CREATE TABLE test_runs (
     id INTEGER PRIMARY KEY,
     target TEXT NOT NULL,
     ts INTEGER NOT NULL,
     started_at TEXT NOT NULL,
     exit_code INTEGER,
     duration_ms INTEGER NOT NULL,
     passed INTEGER NOT NULL,
     error TEXT
   );
   CREATE INDEX test_runs_target_ts ON test_runs(target, ts);
   CREATE TABLE incidents (
     id INTEGER PRIMARY KEY,
     target TEXT NOT NULL,
     ts_start INTEGER NOT NULL,
     started_at TEXT NOT NULL,
     ended_at TEXT,
     ts_end INTEGER,
     cause TEXT NOT NULL,
     checks INTEGER NOT NULL
   );
   CREATE INDEX incidents_target ON incidents(target, ts_start);`,
];

interface IncidentRow {
  id: number;
  started_at: string;
  ended_at: string | null;
  ts_start: number;
  ts_end: number | null;
  cause: string;
  checks: number;
}

function incident(r: IncidentRow): Incident {
  return {
    id: r.id,
    status: r.ended_at === null ? 'open' : 'resolved',
    started_at: r.started_at,
    ended_at: r.ended_at,
    cause: r.cause,
    checks: r.checks,
    duration_s: r.ts_end === null ? null : Math.round((r.ts_end - r.ts_start) / 1000),
  };
}

/** Nearest-rank percentile positions (0-based) for a sorted list of n values. */
function rank(n: number, p: number): number {
  return Math.max(0, Math.ceil((p / 100) * n) - 1);
}

/** Stats from values streamed in ascending order; `n` is known up front from a count. */
function statsFromSorted(values: Iterable<number>, n: number): LatencyStats | null {
  if (n === 0) return null;
  const want = { p50: rank(n, 50), p95: rank(n, 95), p99: rank(n, 99) };
  const s: LatencyStats = { count: 0, min: 0, mean: 0, p50: 0, p95: 0, p99: 0, max: 0 };
  let sum = 0;
  for (const v of values) {
    if (s.count === 0) s.min = v;
    if (s.count === want.p50) s.p50 = v;
    if (s.count === want.p95) s.p95 = v;
    if (s.count === want.p99) s.p99 = v;
    s.max = v;
    sum += v;
    s.count++;
  }
  if (s.count === 0) return null;
  s.mean = Math.round((sum / s.count) * 10) / 10;
  return s;
}

export class SqliteMonitorStore implements MonitorStore {
  private readonly db: Db;
  private readonly q;
  /** The rate limit's window, in this database so that it survives a restart. */
  readonly windows: LimiterWindows;

  constructor(file: string) {
    this.db = openDatabase(file);
    migrate(this.db, 'monitor', MIGRATIONS);
    this.windows = SqlLimiterWindows.onSqliteConnection(file, this.db);
    const db = this.db;
    this.q = {
      insertSnap: db.prepare('INSERT INTO snapshots (target, ts, checked_at, status, response_time_ms, details, error) VALUES (?, ?, ?, ?, ?, ?, ?)'),
      recent: db.prepare('SELECT checked_at, status, response_time_ms, details, error FROM snapshots WHERE target = ? ORDER BY ts DESC, id DESC LIMIT ?'),
      uptime: db.prepare("SELECT count(*) AS total, coalesce(sum(status IN ('operational', 'degraded')), 0) AS up FROM snapshots WHERE target = ? AND ts >= ?"),
      latCount: db.prepare('SELECT count(*) AS n FROM snapshots WHERE target = ? AND ts >= ? AND response_time_ms > 0'),
      latValues: db.prepare('SELECT response_time_ms FROM snapshots WHERE target = ? AND ts >= ? AND response_time_ms > 0 ORDER BY response_time_ms').pluck(),
      trend: db.prepare('SELECT CAST((ts - ?) / ? AS INTEGER) AS b, response_time_ms AS v FROM snapshots WHERE target = ? AND ts >= ? AND response_time_ms > 0 ORDER BY b, v').raw(),
      upsertRoute: db.prepare('INSERT INTO route_checks (target, path, result) VALUES (?, ?, ?) ON CONFLICT(target, path) DO UPDATE SET result = excluded.result'),
      routes: db.prepare('SELECT result FROM route_checks WHERE target = ? ORDER BY path').pluck(),
      clearRoutes: db.prepare('DELETE FROM route_checks WHERE target = ?'),
      upsertDns: db.prepare('INSERT INTO dns_checks (target, key, result) VALUES (?, ?, ?) ON CONFLICT(target, key) DO UPDATE SET result = excluded.result'),
      dns: db.prepare('SELECT result FROM dns_checks WHERE target = ? ORDER BY key').pluck(),
      clearDns: db.prepare('DELETE FROM dns_checks WHERE target = ?'),
      upsertResult: db.prepare('INSERT INTO results (target, kind, result) VALUES (?, ?, ?) ON CONFLICT(target, kind) DO UPDATE SET result = excluded.result'),
      result: db.prepare('SELECT result FROM results WHERE target = ? AND kind = ?').pluck(),
      insertRun: db.prepare('INSERT INTO test_runs (target, ts, started_at, exit_code, duration_ms, passed, error) VALUES (?, ?, ?, ?, ?, ?, ?)'),
      runs: db.prepare('SELECT started_at, exit_code, duration_ms, passed, error FROM test_runs WHERE target = ? ORDER BY ts DESC, id DESC LIMIT ?'),
      lastPass: db.prepare('SELECT started_at, exit_code, duration_ms, passed, error FROM test_runs WHERE target = ? AND passed = 1 ORDER BY ts DESC, id DESC LIMIT 1'),
      openIncident: db.prepare('INSERT INTO incidents (target, ts_start, started_at, cause, checks) VALUES (?, ?, ?, ?, ?)'),
      bumpIncident: db.prepare('UPDATE incidents SET checks = checks + 1 WHERE id = ?'),
      resolveIncident: db.prepare('UPDATE incidents SET ended_at = ?, ts_end = ? WHERE id = ? AND ended_at IS NULL'),
      current: db.prepare('SELECT * FROM incidents WHERE target = ? AND ended_at IS NULL ORDER BY ts_start DESC LIMIT 1'),
      incidents: db.prepare('SELECT * FROM incidents WHERE target = ? ORDER BY ts_start DESC, id DESC LIMIT ?'),
      incidentById: db.prepare('SELECT * FROM incidents WHERE id = ?'),
      pruneSnaps: db.prepare('DELETE FROM snapshots WHERE ts < ?'),
      pruneRuns: db.prepare('DELETE FROM test_runs WHERE ts < ?'),
      pruneIncidents: db.prepare('DELETE FROM incidents WHERE ended_at IS NOT NULL AND ts_end < ?'),
    };
  }

  async recordSnapshot(target: string, s: Snapshot): Promise<void> {
    this.q.insertSnap.run(target, Date.parse(s.checked_at), s.checked_at, s.status, s.response_time_ms, s.details ? JSON.stringify(s.details) : null, s.error ?? null);
  }

  async recent(target: string, limit: number): Promise<Snapshot[]> {
    const rows = this.q.recent.all(target, limit) as { checked_at: string; status: string; response_time_ms: number; details: string | null; error: string | null }[];
    return rows.map((r) => {
      const s: Snapshot = { status: r.status, checked_at: r.checked_at, response_time_ms: r.response_time_ms };
      if (r.details !== null) s.details = JSON.parse(r.details) as Record<string, unknown>;
      if (r.error !== null) s.error = r.error;
      return s;
    });
  }

  async uptime(target: string, sinceMs: number): Promise<{ total: number; up: number }> {
    return this.q.uptime.get(target, sinceMs) as { total: number; up: number };
  }

  async latency(target: string, sinceMs: number): Promise<LatencyStats | null> {
    const n = (this.q.latCount.get(target, sinceMs) as { n: number }).n;
    if (n === 0) return null;
    return statsFromSorted(this.q.latValues.iterate(target, sinceMs) as Iterable<number>, n);
  }

  async trend(target: string, sinceMs: number, bucketMs: number, buckets: number): Promise<TrendBucket[]> {
    const out: TrendBucket[] = [];
    for (let i = 0; i < buckets; i++) out.push({ start: new Date(sinceMs + i * bucketMs).toISOString(), count: 0 });
    // One pass, ordered by bucket then value: only the current bucket's values are held.
    let current = -1;
    let values: number[] = [];
    const flush = (): void => {
      const b = out[current];
      const stats = statsFromSorted(values, values.length);
      if (b && stats) Object.assign(b, stats);
    };
    for (const [b, v] of this.q.trend.iterate(sinceMs, bucketMs, target, sinceMs) as Iterable<[number, number]>) {
      if (b !== current) {
        if (current >= 0) flush();
        current = b;
        values = [];
      }
      values.push(v);
    }
    if (current >= 0) flush();
    return out;
  }

  async saveRoutes(target: string, results: RouteResult[]): Promise<void> {
    this.db.transaction(() => {
      this.q.clearRoutes.run(target);
      for (const r of results) this.q.upsertRoute.run(target, r.path, JSON.stringify(r));
    })();
  }

  async routes(target: string): Promise<RouteResult[]> {
    return (this.q.routes.all(target) as string[]).map((r) => JSON.parse(r) as RouteResult);
  }

  async saveDns(target: string, results: DnsResult[]): Promise<void> {
    this.db.transaction(() => {
      this.q.clearDns.run(target);
      for (const r of results) this.q.upsertDns.run(target, `${r.name} ${r.record_type} ${r.expected.join(",")}`, JSON.stringify(r));
    })();
  }

  async dns(target: string): Promise<DnsResult[]> {
    return (this.q.dns.all(target) as string[]).map((r) => JSON.parse(r) as DnsResult);
  }

  async saveResult(target: string, kind: string, result: Record<string, unknown>): Promise<void> {
    this.q.upsertResult.run(target, kind, JSON.stringify(result));
  }

  async result(target: string, kind: string): Promise<Record<string, unknown> | undefined> {
    const r = this.q.result.get(target, kind) as string | undefined;
    return r === undefined ? undefined : (JSON.parse(r) as Record<string, unknown>);
  }

  async recordTestRun(target: string, run: TestRun): Promise<void> {
    this.q.insertRun.run(target, Date.parse(run.started_at), run.started_at, run.exit_code, run.duration_ms, run.passed ? 1 : 0, run.error ?? null);
  }

  private run(r: { started_at: string; exit_code: number | null; duration_ms: number; passed: number; error: string | null }): TestRun {
    const t: TestRun = { started_at: r.started_at, exit_code: r.exit_code, duration_ms: r.duration_ms, passed: r.passed === 1 };
    if (r.error !== null) t.error = r.error;
    return t;
  }

  async testRuns(target: string, limit: number): Promise<TestRun[]> {
    return (this.q.runs.all(target, limit) as Parameters<SqliteMonitorStore['run']>[0][]).map((r) => this.run(r));
  }

  async lastPassingRun(target: string): Promise<TestRun | undefined> {
    const r = this.q.lastPass.get(target) as Parameters<SqliteMonitorStore['run']>[0] | undefined;
    return r ? this.run(r) : undefined;
  }

  async openIncident(target: string, startedAt: string, cause: string, checks: number): Promise<Incident> {
    const info = this.q.openIncident.run(target, Date.parse(startedAt), startedAt, cause, checks);
    return incident(this.q.incidentById.get(info.lastInsertRowid) as IncidentRow);
  }

  async addIncidentCheck(id: number): Promise<void> {
    this.q.bumpIncident.run(id);
  }

  async resolveIncident(id: number, endedAt: string): Promise<void> {
    this.q.resolveIncident.run(endedAt, Date.parse(endedAt), id);
  }

  async currentIncident(target: string): Promise<Incident | undefined> {
    const r = this.q.current.get(target) as IncidentRow | undefined;
    return r ? incident(r) : undefined;
  }

  async incidents(target: string, limit: number): Promise<Incident[]> {
    return (this.q.incidents.all(target, limit) as IncidentRow[]).map(incident);
  }

  async prune(beforeMs: number): Promise<number> {
    return this.db.transaction(() => this.q.pruneSnaps.run(beforeMs).changes + this.q.pruneRuns.run(beforeMs).changes + this.q.pruneIncidents.run(beforeMs).changes)();
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
