// MonitorStore: the health monitor's history — check snapshots, route/DNS/TLS/WHOIS results,
// test runs and incidents — with windowed statistics computed in SQL or in one streamed pass.
import { migrate, openDatabase, type Db } from './sqlite.js';
import type { Statement } from 'better-sqlite3';
import type { LimiterWindows } from './limiter-windows.js';
import { SqlLimiterWindows } from './limiter-windows-sql.js';
import { LatencyHistogram } from './latency-histogram.js';
import { accFromRow, bound, ceilTo, CountsQuery, CUM_COLUMNS, DAY, floorTo, GRAIN_MS, HOUR, incident, latencySql, outcomeOf, planWindow, plus, RollupAcc, statsFromSorted, UPSERT_ROLLUP, ZERO, type IncidentRow, type Outcomes, type RollupRow, snapshotFromRow, testRunFromRow, type SnapshotRow, type TestRunRow } from './monitor-rollups.js';
export { planWindow } from './monitor-rollups.js';

export type { Snapshot, LatencyStats, TrendBucket, Incident } from '../schemas/monitor.js';
import type { Snapshot, LatencyStats, TrendBucket, Incident } from '../schemas/monitor.js';

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

/** The uptime rule, in one place: degraded counts as up, maintenance in neither figure. */
export function upAndTotal(c: CheckCounts): { total: number; up: number } {
  return { total: c.operational + c.degraded + c.down, up: c.operational + c.degraded };
}

export interface MonitorStore {
  recordSnapshot(target: string, s: Snapshot): Promise<void>;
  recent(target: string, limit: number): Promise<Snapshot[]>;
  /** Checks since `sinceMs`: total, and how many were up (operational or degraded). */
  uptime(target: string, sinceMs: number): Promise<{ total: number; up: number }>;
  /** Latency of timed checks outside maintenance in [sinceMs, untilMs) (default: to now), windows as for `counts`. */
  latency(target: string, sinceMs: number, untilMs?: number): Promise<LatencyStats | null>;
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
  /**
   * Opens the target's incident, or answers the one already open: at most one is open per target
   * (a unique index), so instances sharing the store open it once.
   */
  openIncident(target: string, startedAt: string, cause: string, checks: number): Promise<Incident>;
  addIncidentCheck(id: number): Promise<void>;
  /** Resolves the incident if still open; true when this call resolved it. */
  resolveIncident(id: number, endedAt: string): Promise<boolean>;
  /**
   * Claims the sending of an incident transition's alert ('incident.opened' / 'incident.resolved'):
   * true for the first caller only, whichever instance it is. The transition is the key.
   */
  claimAlert(incidentId: number, event: string): Promise<boolean>;
  /** Whether the transition's alert was claimed (by any instance on this store). */
  alertClaimed(incidentId: number, event: string): Promise<boolean>;
  currentIncident(target: string): Promise<Incident | undefined>;
  incidents(target: string, limit: number): Promise<Incident[]>;
  /** Incidents overlapping [fromMs, toMs), oldest first, at most `limit`. */
  incidentsBetween(target: string, fromMs: number, toMs: number, limit: number): Promise<Incident[]>;
  /**
   * Checks in [sinceMs, untilMs) by outcome: whole hours and days from the rollups, the partial
   * hour at the start from raw rows while they are kept (beyond the raw retention the window
   * starts at the next whole hour).
   */
  counts(target: string, sinceMs: number, untilMs: number): Promise<CheckCounts>;
  /** `counts` for several windows at once (a status's five uptime windows share most of their rows). */
  countsMany(target: string, windows: readonly (readonly [number, number])[]): Promise<CheckCounts[]>;
  /** Hourly or daily rollups starting in [fromMs, toMs), oldest first; periods without checks are absent. */
  rollups(target: string, grain: RollupGrain, fromMs: number, toMs: number): Promise<Rollup[]>;
  /** Drops raw rows and test runs before `rawBeforeMs`, rollups and resolved incidents before `rollupsBeforeMs`; returns rows removed. */
  prune(cut: { rawBeforeMs: number; rollupsBeforeMs: number }): Promise<number>;
  close(): Promise<void>;
}

export const MONITOR_MIGRATIONS = [
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
  // Rollups (issue 14): per target and hour / UTC day, the checks by outcome and a latency
  // histogram, folded in as each check is recorded; raw rows are kept only for the raw retention.
  // Hourly rows also carry running totals (CUM_COLUMNS), so any run of hours is two lookups.
  (db: Db): void => {
    db.exec(`ALTER TABLE snapshots ADD COLUMN maintenance INTEGER NOT NULL DEFAULT 0;
      DROP INDEX snapshots_target_ts;
      CREATE INDEX snapshots_target_ts ON snapshots(target, ts, status, response_time_ms, maintenance);
      CREATE TABLE monitor_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
      ${['hour', 'day'].map((g) => `CREATE TABLE rollup_${g} (
        target TEXT NOT NULL,
        start INTEGER NOT NULL,
        operational INTEGER NOT NULL,
        degraded INTEGER NOT NULL,
        down INTEGER NOT NULL,
        maintenance INTEGER NOT NULL,
        rt_count INTEGER NOT NULL,
        rt_sum INTEGER NOT NULL,
        rt_min INTEGER,
        rt_max INTEGER,
        hist BLOB,${g === 'hour' ? CUM_COLUMNS.map((c) => `\n        ${c} INTEGER NOT NULL,`).join('') : ''}
        PRIMARY KEY (target, start)
      ) WITHOUT ROWID;`).join('\n')}`);
    backfillRollups(db);
  },
  // Clusters (issue 15): at most one open incident per target, so two instances sharing a store
  // open it once; and the alert of each incident transition claimed once. A store from before
  // might hold two open incidents of one target (it never should): the older ones end when the
  // newest began.
  `UPDATE incidents SET ended_at = (SELECT n.started_at FROM incidents n WHERE n.target = incidents.target AND n.ended_at IS NULL ORDER BY n.ts_start DESC, n.id DESC LIMIT 1),
       ts_end = (SELECT n.ts_start FROM incidents n WHERE n.target = incidents.target AND n.ended_at IS NULL ORDER BY n.ts_start DESC, n.id DESC LIMIT 1)
     WHERE ended_at IS NULL AND id <> (SELECT n.id FROM incidents n WHERE n.target = incidents.target AND n.ended_at IS NULL ORDER BY n.ts_start DESC, n.id DESC LIMIT 1);
   CREATE UNIQUE INDEX incidents_one_open ON incidents(target) WHERE ended_at IS NULL;
   CREATE TABLE incident_alerts (incident_id INTEGER NOT NULL, event TEXT NOT NULL, PRIMARY KEY (incident_id, event)) WITHOUT ROWID;`,
];

/** Folds every raw row of a database made before rollups existed (run once, by the migration). */
function backfillRollups(db: Db): void {
  const put = { hour: db.prepare(UPSERT_ROLLUP('hour')), day: db.prepare(UPSERT_ROLLUP('day')) };
  let target: string | undefined;
  const open: Record<RollupGrain, { start: number; acc: RollupAcc } | undefined> = { hour: undefined, day: undefined };
  // Written after the read: a connection cannot write while it iterates. One row an hour a
  // target: 168,000 rows for a week of 1,000 targets.
  const done: [RollupGrain, unknown[]][] = [];
  let cum = ZERO; // the target's running totals over its hours so far
  const flush = (g: RollupGrain): void => {
    const o = open[g];
    if (o && target !== undefined) {
      const row = o.acc.row(target, o.start);
      if (g === 'hour') {
        cum = plus(cum, o.acc.outcomes());
        row.push(...cum);
      }
      done.push([g, row]);
    }
    open[g] = undefined;
  };
  const rows = db.prepare('SELECT target, ts, status, response_time_ms FROM snapshots ORDER BY target, ts').raw().iterate() as Iterable<[string, number, string, number]>;
  for (const [t, ts, status, rt] of rows) {
    if (t !== target) {
      flush('hour');
      flush('day');
      target = t;
      cum = ZERO;
    }
    for (const g of ['hour', 'day'] as const) {
      const start = floorTo(ts, GRAIN_MS[g]);
      if (open[g]?.start !== start) {
        flush(g);
        open[g] = { start, acc: new RollupAcc() };
      }
      open[g]!.acc.add(status, rt, false);
    }
  }
  flush('hour');
  flush('day');
  for (const [g, row] of done) put[g].run(...row);
}

function rollupRows(db: Db, g: RollupGrain) {
  return db.prepare(`SELECT start, operational, degraded, down, maintenance, rt_count, rt_sum, rt_min, rt_max, hist FROM rollup_${g} WHERE target = ? AND start >= ? AND start < ? ORDER BY start`);
}

export class SqliteMonitorStore implements MonitorStore {
  private readonly db: Db;
  private readonly q;
  private readonly record: (target: string, ts: number, s: Snapshot, m: boolean) => void;
  /** The rate limit's window, in this database so that it survives a restart. */
  readonly windows: LimiterWindows;
  /** Raw rows are complete from here on (the last raw prune's cut-off, 0 before any); read once, then moved only by `prune`. */
  private rawFloor: number;
  /** Compound statements by the sources of their pieces ('raw,hour,day,...'): a handful of shapes. */
  private readonly compounds = new Map<string, Statement>();

  constructor(file: string) {
    this.db = openDatabase(file);
    migrate(this.db, 'monitor', MONITOR_MIGRATIONS);
    this.windows = SqlLimiterWindows.onSqliteConnection(file, this.db);
    const db = this.db;
    this.q = {
      insertSnap: db.prepare('INSERT INTO snapshots (target, ts, checked_at, status, response_time_ms, details, error, maintenance) VALUES (?, ?, ?, ?, ?, ?, ?, ?)'),
      recent: db.prepare('SELECT checked_at, status, response_time_ms, details, error, maintenance FROM snapshots WHERE target = ? ORDER BY ts DESC, id DESC LIMIT ?'),
      trend: db.prepare('SELECT CAST((ts - ?) / ? AS INTEGER) AS b, response_time_ms AS v FROM snapshots WHERE target = ? AND ts >= ? AND response_time_ms > 0 AND maintenance = 0 ORDER BY b, v').raw(),
      rollupRows: { hour: rollupRows(db, 'hour'), day: rollupRows(db, 'day') },
      rollupOne: { hour: db.prepare('SELECT * FROM rollup_hour WHERE target = ? AND start = ?'), day: db.prepare('SELECT * FROM rollup_day WHERE target = ? AND start = ?') },
      cumBefore: db.prepare(`SELECT ${CUM_COLUMNS.join(', ')} FROM rollup_hour WHERE target = ? AND start < ? ORDER BY start DESC LIMIT 1`).raw(),
      bumpCum: db.prepare(`UPDATE rollup_hour SET ${CUM_COLUMNS.map((c) => `${c} = ${c} + ?`).join(', ')} WHERE target = ? AND start > ?`),
      putRollup: { hour: db.prepare(UPSERT_ROLLUP('hour')), day: db.prepare(UPSERT_ROLLUP('day')) },
      rollupTargets: db.prepare('SELECT target FROM rollup_day GROUP BY target UNION SELECT target FROM test_runs GROUP BY target').pluck(),
      pruneTargetSnaps: db.prepare('DELETE FROM snapshots WHERE target = ? AND ts < ?'),
      pruneRollups: { hour: db.prepare('DELETE FROM rollup_hour WHERE start < ?'), day: db.prepare('DELETE FROM rollup_day WHERE start < ?') },
      getMeta: db.prepare('SELECT value FROM monitor_meta WHERE key = ?').pluck(),
      setMeta: db.prepare('INSERT INTO monitor_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value'),
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
      openIncident: db.prepare('INSERT OR IGNORE INTO incidents (target, ts_start, started_at, cause, checks) VALUES (?, ?, ?, ?, ?)'),
      claimAlert: db.prepare('INSERT OR IGNORE INTO incident_alerts (incident_id, event) VALUES (?, ?)'),
      alertClaimed: db.prepare('SELECT 1 FROM incident_alerts WHERE incident_id = ? AND event = ?').pluck(),
      bumpIncident: db.prepare('UPDATE incidents SET checks = checks + 1 WHERE id = ?'),
      resolveIncident: db.prepare('UPDATE incidents SET ended_at = ?, ts_end = ? WHERE id = ? AND ended_at IS NULL'),
      current: db.prepare('SELECT * FROM incidents WHERE target = ? AND ended_at IS NULL ORDER BY ts_start DESC LIMIT 1'),
      incidents: db.prepare('SELECT * FROM incidents WHERE target = ? ORDER BY ts_start DESC, id DESC LIMIT ?'),
      incidentById: db.prepare('SELECT * FROM incidents WHERE id = ?'),
      incidentsBetween: db.prepare('SELECT * FROM incidents WHERE target = ? AND ts_start < ? AND (ts_end IS NULL OR ts_end > ?) ORDER BY ts_start, id LIMIT ?'),
      pruneRuns: db.prepare('DELETE FROM test_runs WHERE target = ? AND ts < ?'),
      pruneIncidents: db.prepare('DELETE FROM incidents WHERE ended_at IS NOT NULL AND ts_end < ?'),
      pruneAlerts: db.prepare('DELETE FROM incident_alerts WHERE incident_id NOT IN (SELECT id FROM incidents)'),
    };
    this.rawFloor = (this.q.getMeta.get('raw_floor') as number | undefined) ?? 0;
    // IMMEDIATE: the rollups are read, then written; a second writer waits instead of losing a count.
    const tx = db.transaction((target: string, ts: number, s: Snapshot, m: boolean) => this.recordRow(target, ts, s, m));
    this.record = (...a) => tx.immediate(...a);
  }

  /** A statement built for a shape of pieces (a handful of shapes occur), prepared once. */
  private compound(key: string, sql: () => string): Statement {
    let stmt = this.compounds.get(key);
    if (!stmt) {
      stmt = this.db.prepare(sql()).raw();
      this.compounds.set(key, stmt);
    }
    return stmt;
  }

  private fold(target: string, ts: number, status: string, responseMs: number, maintenance: boolean): void {
    const one = outcomeOf(status, maintenance);
    for (const g of ['hour', 'day'] as const) {
      const start = floorTo(ts, GRAIN_MS[g]);
      const row = this.q.rollupOne[g].get(target, start) as (RollupRow & Record<string, number>) | undefined;
      const acc = row ? accFromRow(row) : new RollupAcc();
      acc.add(status, responseMs, maintenance);
      const values = acc.row(target, start);
      if (g === 'hour') {
        // This hour's running totals, and the check added to every later hour's: none, unless
        // the check is late (its clock behind an earlier one's).
        const cum = row ? (CUM_COLUMNS.map((c) => row[c]!) as Outcomes) : ((this.q.cumBefore.get(target, start) as Outcomes | undefined) ?? ZERO);
        values.push(...plus(cum, one));
        this.q.bumpCum.run(...one, target, start);
      }
      this.q.putRollup[g].run(...values);
    }
  }

  async recordSnapshot(target: string, s: Snapshot): Promise<void> {
    const ts = Date.parse(s.checked_at);
    if (!Number.isFinite(ts)) throw new Error(`snapshot of ${target} has no valid checked_at: ${s.checked_at}`);
    const m = s.maintenance === true;
    // The raw row and its rollups in one transaction: a crash never leaves them disagreeing.
    this.record(target, ts, s, m);
  }

  private recordRow(target: string, ts: number, s: Snapshot, m: boolean): void {
    this.q.insertSnap.run(target, ts, s.checked_at, s.status, s.response_time_ms, s.details ? JSON.stringify(s.details) : null, s.error ?? null, m ? 1 : 0);
    this.fold(target, ts, s.status, s.response_time_ms, m);
  }

  async recent(target: string, limit: number): Promise<Snapshot[]> {
    return (this.q.recent.all(target, limit) as SnapshotRow[]).map(snapshotFromRow);
  }

  async counts(target: string, sinceMs: number, untilMs: number): Promise<CheckCounts> {
    return (await this.countsMany(target, [[sinceMs, untilMs]]))[0]!;
  }

  /** All windows in one statement (CountsQuery). */
  async countsMany(target: string, windows: readonly (readonly [number, number])[]): Promise<CheckCounts[]> {
    const q = new CountsQuery(target, windows, this.rawFloor);
    const stmt = this.compound(q.key, () => q.sql('sqlite'));
    return q.result((stmt.all(...q.params) as [number, ...Outcomes][]).map(([arm, ...c]) => [arm, c]));
  }

  /** Up and total checks since `sinceMs` (maintenance counts in neither). */
  async uptime(target: string, sinceMs: number): Promise<{ total: number; up: number }> {
    return upAndTotal(await this.counts(target, sinceMs, Infinity));
  }

  private histogram(target: string, sinceMs: number, untilMs: number): LatencyHistogram {
    const h = new LatencyHistogram();
    const plan = planWindow(sinceMs, untilMs, this.rawFloor);
    const pieces = (['raw', 'hour', 'day'] as const).flatMap((source) => plan[source].map(([from, to]) => ({ source, from, to })));
    if (!pieces.length) return h;
    const sources = pieces.map((q) => q.source);
    const stmt = this.compound(`latency:${sources.join(',')}`, () => latencySql(sources));
    type Row = [0, number, null, null, null, null] | [1, number, number, number | null, number | null, Buffer | null];
    for (const r of stmt.iterate(...pieces.flatMap((q) => [target, q.from, bound(q.to)])) as Iterable<Row>) {
      if (r[0] === 0) h.add(r[1]);
      else h.addEncoded(r[5], r[1], r[2], r[3], r[4]);
    }
    return h;
  }

  /** Latency since `sinceMs` from the rollups' histograms: counts, min, max, mean exact; percentiles within 1 %. */
  async latency(target: string, sinceMs: number, untilMs = Infinity): Promise<LatencyStats | null> {
    return this.histogram(target, sinceMs, untilMs).stats();
  }

  async rollups(target: string, grain: RollupGrain, fromMs: number, toMs: number): Promise<Rollup[]> {
    return (this.q.rollupRows[grain].all(target, fromMs, bound(toMs)) as RollupRow[]).map((r) => {
      const a = accFromRow(r);
      return { start: r.start, operational: a.operational, degraded: a.degraded, down: a.down, maintenance: a.maintenance, latency: a.hist.stats() };
    });
  }

  async trend(target: string, sinceMs: number, bucketMs: number, buckets: number): Promise<TrendBucket[]> {
    if (sinceMs < this.rawFloor) return this.trendFromRollups(target, sinceMs, bucketMs, buckets);
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

  /** A trend reaching past the raw retention: each hourly rollup counts in the bucket where its hour starts. */
  private trendFromRollups(target: string, sinceMs: number, bucketMs: number, buckets: number): TrendBucket[] {
    const hists: LatencyHistogram[] = [];
    for (let i = 0; i < buckets; i++) hists.push(new LatencyHistogram());
    for (const r of this.q.rollupRows.hour.iterate(target, ceilTo(sinceMs, HOUR), bound(sinceMs + buckets * bucketMs)) as Iterable<RollupRow>) {
      hists[Math.floor((r.start - sinceMs) / bucketMs)]?.addEncoded(r.hist, r.rt_count, r.rt_sum, r.rt_min, r.rt_max);
    }
    return hists.map((h, i) => ({ start: new Date(sinceMs + i * bucketMs).toISOString(), ...(h.stats() ?? { count: 0 }) }));
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

  async testRuns(target: string, limit: number): Promise<TestRun[]> {
    return (this.q.runs.all(target, limit) as TestRunRow[]).map(testRunFromRow);
  }

  async lastPassingRun(target: string): Promise<TestRun | undefined> {
    const r = this.q.lastPass.get(target) as TestRunRow | undefined;
    return r ? testRunFromRow(r) : undefined;
  }

  async openIncident(target: string, startedAt: string, cause: string, checks: number): Promise<Incident> {
    this.q.openIncident.run(target, Date.parse(startedAt), startedAt, cause, checks);
    return incident(this.q.current.get(target) as IncidentRow);
  }

  async claimAlert(incidentId: number, event: string): Promise<boolean> {
    return this.q.claimAlert.run(incidentId, event).changes === 1;
  }

  async alertClaimed(incidentId: number, event: string): Promise<boolean> {
    return this.q.alertClaimed.get(incidentId, event) !== undefined;
  }

  async addIncidentCheck(id: number): Promise<void> {
    this.q.bumpIncident.run(id);
  }

  async resolveIncident(id: number, endedAt: string): Promise<boolean> {
    return this.q.resolveIncident.run(endedAt, Date.parse(endedAt), id).changes === 1;
  }

  async currentIncident(target: string): Promise<Incident | undefined> {
    const r = this.q.current.get(target) as IncidentRow | undefined;
    return r ? incident(r) : undefined;
  }

  async incidents(target: string, limit: number): Promise<Incident[]> {
    return (this.q.incidents.all(target, limit) as IncidentRow[]).map(incident);
  }

  async incidentsBetween(target: string, fromMs: number, toMs: number, limit: number): Promise<Incident[]> {
    return (this.q.incidentsBetween.all(target, toMs, fromMs, limit) as IncidentRow[]).map(incident);
  }

  /**
   * Two retentions. Raw rows go target by target, a transaction each with a turn of the event loop
   * between, so a day of 1,000 targets (1.4M rows) never stalls the API; rollups and old
   * incidents are small. The raw floor is moved first: from then on windows reaching before it
   * read rollups, never a half-pruned raw table.
   */
  async prune(cut: { rawBeforeMs: number; rollupsBeforeMs: number }): Promise<number> {
    const rawBefore = floorTo(cut.rawBeforeMs, HOUR);
    if (rawBefore > this.rawFloor) {
      this.q.setMeta.run('raw_floor', rawBefore);
      this.rawFloor = rawBefore;
    }
    let removed = 0;
    const targets = this.q.rollupTargets.all() as string[];
    for (const t of targets) {
      removed += this.db.transaction(() => this.q.pruneTargetSnaps.run(t, rawBefore).changes + this.q.pruneRuns.run(t, rawBefore).changes)();
      await new Promise((r) => setImmediate(r));
    }
    removed += this.db.transaction(
      () =>
        this.q.pruneRollups.hour.run(floorTo(cut.rollupsBeforeMs, HOUR)).changes +
        this.q.pruneRollups.day.run(floorTo(cut.rollupsBeforeMs, DAY)).changes +
        this.q.pruneIncidents.run(cut.rollupsBeforeMs).changes +
        this.q.pruneAlerts.run().changes,
    )();
    return removed;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
