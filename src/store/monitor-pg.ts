// The monitor's store on PostgreSQL (MKT_DATABASE_URL), shared by every instance of a cluster:
// the same tables, rollups and running totals as the SQLite store (monitor.ts), over the SQL
// surface with the marketplace's driver and migration scheme. A check is two round trips: the
// read of its hour and day rollups under the target's lock, then the writes with COMMIT.
import type { SqlDatabase, SqlExecutor } from './sql.js';
import type { LimiterWindows } from './limiter-windows.js';
import { SqlLimiterWindows } from './limiter-windows-sql.js';
import { LatencyHistogram } from './latency-histogram.js';
import { upAndTotal, type CheckCounts, type DnsResult, type MonitorStore, type Rollup, type RollupGrain, type RouteResult, type TestRun } from './monitor.js';
import type { Incident, LatencyStats, Snapshot, TrendBucket } from '../schemas/monitor.js';
import {
  accFromRow,
  bound,
  ceilTo,
  CountsQuery,
  CUM_COLUMNS,
  DAY,
  floorTo,
  HOUR,
  incident,
  latencySql,
  outcomeOf,
  planWindow,
  plus,
  RollupAcc,
  snapshotFromRow,
  statsFromSorted,
  testRunFromRow,
  ZERO,
  type IncidentRow,
  type Outcomes,
  type RollupRow,
  type SnapshotRow,
  type TestRunRow,
} from './monitor-rollups.js';

const ROLLUP_TABLE = (g: RollupGrain): string => `CREATE TABLE rollup_${g} (
    target TEXT NOT NULL,
    start BIGINT NOT NULL,
    operational INTEGER NOT NULL,
    degraded INTEGER NOT NULL,
    down INTEGER NOT NULL,
    maintenance INTEGER NOT NULL,
    rt_count INTEGER NOT NULL,
    rt_sum BIGINT NOT NULL,
    rt_min INTEGER,
    rt_max INTEGER,
    hist BYTEA,${g === 'hour' ? CUM_COLUMNS.map((c) => `\n    ${c} BIGINT NOT NULL,`).join('') : ''}
    PRIMARY KEY (target, start)
  );`;

/** PostgreSQL's list starts at the final schema of the SQLite list (they version apart). */
export const MONITOR_PG_MIGRATIONS = [
  `CREATE TABLE snapshots (
     id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     target TEXT NOT NULL,
     ts BIGINT NOT NULL,
     checked_at TEXT NOT NULL,
     status TEXT NOT NULL,
     response_time_ms INTEGER NOT NULL,
     details TEXT,
     error TEXT,
     maintenance INTEGER NOT NULL DEFAULT 0
   );
   CREATE INDEX snapshots_target_ts ON snapshots (target, ts) INCLUDE (status, response_time_ms, maintenance);
   CREATE TABLE route_checks (target TEXT NOT NULL, path TEXT NOT NULL, result TEXT NOT NULL, PRIMARY KEY (target, path));
   CREATE TABLE dns_checks (target TEXT NOT NULL, key TEXT NOT NULL, result TEXT NOT NULL, PRIMARY KEY (target, key));
   CREATE TABLE results (target TEXT NOT NULL, kind TEXT NOT NULL, result TEXT NOT NULL, PRIMARY KEY (target, kind));
   CREATE TABLE test_runs (
     id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     target TEXT NOT NULL,
     ts BIGINT NOT NULL,
     started_at TEXT NOT NULL,
     exit_code INTEGER,
     duration_ms INTEGER NOT NULL,
     passed INTEGER NOT NULL,
     error TEXT
   );
   CREATE INDEX test_runs_target_ts ON test_runs (target, ts);
   CREATE TABLE incidents (
     id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     target TEXT NOT NULL,
     ts_start BIGINT NOT NULL,
     started_at TEXT NOT NULL,
     ended_at TEXT,
     ts_end BIGINT,
     cause TEXT NOT NULL,
     checks INTEGER NOT NULL
   );
   CREATE INDEX incidents_target ON incidents (target, ts_start);
   CREATE UNIQUE INDEX incidents_one_open ON incidents (target) WHERE ended_at IS NULL;
   CREATE TABLE incident_alerts (incident_id BIGINT NOT NULL, event TEXT NOT NULL, PRIMARY KEY (incident_id, event));
   CREATE TABLE monitor_meta (key TEXT PRIMARY KEY, value BIGINT NOT NULL);
   ${ROLLUP_TABLE('hour')}
   ${ROLLUP_TABLE('day')}
   CREATE TABLE monitor_leases (target TEXT PRIMARY KEY, owner TEXT NOT NULL DEFAULT '', expires_at BIGINT NOT NULL DEFAULT 0);
   CREATE INDEX monitor_leases_owner ON monitor_leases (owner);
   CREATE TABLE monitor_instances (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     config_hash TEXT NOT NULL,
     targets INTEGER NOT NULL,
     version TEXT NOT NULL,
     started_at TEXT NOT NULL,
     seen_at BIGINT NOT NULL
   );`,
];

const ROLLUP_COLS = 'operational, degraded, down, maintenance, rt_count, rt_sum, rt_min, rt_max, hist';

/** The hour row, the day row and the hour before (for a new hour's running totals), in one read. */
const FOLD_READ = `SELECT 0 AS g, ${ROLLUP_COLS}, ${CUM_COLUMNS.join(', ')} FROM rollup_hour WHERE target = ? AND start = ?
  UNION ALL SELECT 1, ${ROLLUP_COLS}, NULL, NULL, NULL, NULL FROM rollup_day WHERE target = ? AND start = ?
  UNION ALL SELECT * FROM (SELECT 2, 0, 0, 0, 0, 0, 0, NULL::integer, NULL::integer, NULL::bytea, ${CUM_COLUMNS.join(', ')} FROM rollup_hour WHERE target = ? AND start < ? ORDER BY start DESC LIMIT 1) AS prev`;

const upsertRollup = (g: RollupGrain): string => {
  const cols = ['target', 'start', ...ROLLUP_COLS.split(', '), ...(g === 'hour' ? CUM_COLUMNS : [])];
  return `INSERT INTO rollup_${g} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})
    ON CONFLICT (target, start) DO UPDATE SET ${cols.slice(2).map((c) => `${c} = excluded.${c}`).join(', ')}`;
};
const UPSERT = { hour: upsertRollup('hour'), day: upsertRollup('day') };
const BUMP_CUM = `UPDATE rollup_hour SET ${CUM_COLUMNS.map((c) => `${c} = ${c} + ?`).join(', ')} WHERE target = ? AND start > ?`;
const INSERT_SNAPSHOT = 'INSERT INTO snapshots (target, ts, checked_at, status, response_time_ms, details, error, maintenance) VALUES (?, ?, ?, ?, ?, ?, ?, ?)';
const ROLLUP_ROWS = (g: RollupGrain): string =>
  `SELECT start, ${ROLLUP_COLS} FROM rollup_${g} WHERE target = ? AND start >= ? AND start < ? ORDER BY start`;
const TEST_RUN_COLS = 'started_at, exit_code, duration_ms, passed, error';

type FoldRow = RollupRow & { g: number } & Record<string, number | null>;

/** Every recorded health check, for the status caches of the other instances (NOTIFY payload: a JSON array). */
export const CHECKS_CHANNEL = 'mkt_monitor_checks';
/** The raw floor moved (a prune on some instance). */
const FLOOR_CHANNEL = 'mkt_monitor_floor';
/** PostgreSQL refuses a NOTIFY payload of 8,000 bytes or more. */
const NOTIFY_MAX = 7_000;

/** A recorded check as other instances hear of it: enough to count it (details stay in the store). */
export interface CheckNotice {
  /** The instance that recorded it. */
  from: string;
  target: string;
  snapshot: Snapshot;
}

export class PgMonitorStore implements MonitorStore {
  readonly windows: LimiterWindows;
  private rawFloor = 0;
  private unlisten: (() => void)[] = [];
  /** Checks recorded here and not yet announced; sent together every NOTICE_EVERY_MS. */
  private notices: CheckNotice[] = [];
  private noticeTimer: NodeJS.Timeout | undefined;
  private sending: Promise<void> | undefined;

  private constructor(
    readonly sql: SqlDatabase,
    windows: LimiterWindows,
    private readonly instanceId: string,
  ) {
    this.windows = windows;
  }

  /** `instanceId` names this instance in the check notices it sends. */
  static async open(sql: SqlDatabase, instanceId = 'store'): Promise<PgMonitorStore> {
    await sql.migrate('monitor', { sqlite: [], postgres: MONITOR_PG_MIGRATIONS });
    const store = new PgMonitorStore(sql, await SqlLimiterWindows.open(sql), instanceId);
    await store.readFloor();
    store.unlisten.push(await sql.listen(FLOOR_CHANNEL, () => void store.readFloor().catch(() => undefined)));
    return store;
  }

  private async readFloor(): Promise<void> {
    this.rawFloor = Number((await this.sql.value<number>('SELECT value FROM monitor_meta WHERE key = ?', ['raw_floor'])) ?? 0);
  }

  /** Calls `fn` with every batch of checks recorded by the other instances. */
  async onChecks(fn: (notices: CheckNotice[]) => void): Promise<void> {
    this.unlisten.push(
      await this.sql.listen(CHECKS_CHANNEL, (payload) => {
        if (!payload) return; // the listener reconnected: nothing to count
        try {
          const notices = (JSON.parse(payload) as CheckNotice[]).filter((n) => n.from !== this.instanceId);
          if (notices.length) fn(notices);
        } catch {
          // a foreign payload on our channel: ignored
        }
      }),
    );
  }

  private announce(target: string, s: Snapshot): void {
    const snapshot: Snapshot = { status: s.status, checked_at: s.checked_at, response_time_ms: s.response_time_ms };
    if (s.maintenance) snapshot.maintenance = true;
    this.notices.push({ from: this.instanceId, target, snapshot });
    this.noticeTimer ??= setTimeout(() => {
      this.noticeTimer = undefined;
      this.sending = this.flushNotices().catch(() => undefined);
    }, 100);
    this.noticeTimer.unref();
  }

  private async flushNotices(): Promise<void> {
    const all = this.notices;
    this.notices = [];
    let batch: CheckNotice[] = [];
    let size = 2;
    for (const n of all) {
      const len = JSON.stringify(n).length + 1;
      if (size + len > NOTIFY_MAX && batch.length) {
        await this.sql.notify(CHECKS_CHANNEL, JSON.stringify(batch));
        batch = [];
        size = 2;
      }
      batch.push(n);
      size += len;
    }
    if (batch.length) await this.sql.notify(CHECKS_CHANNEL, JSON.stringify(batch));
  }

  async recordSnapshot(target: string, s: Snapshot): Promise<void> {
    const ts = Date.parse(s.checked_at);
    if (!Number.isFinite(ts)) throw new Error(`snapshot of ${target} has no valid checked_at: ${s.checked_at}`);
    const m = s.maintenance === true;
    const one = outcomeOf(s.status, m);
    const hour = floorTo(ts, HOUR);
    const day = floorTo(ts, DAY);
    await this.sql.transaction(async (tx) => {
      // Two instances never fold into one target's rows at once (a lease handover, a late check).
      await tx.lockWithNext(`monitor:${target}`);
      const rows = await tx.all<FoldRow>(FOLD_READ, [target, hour, target, day, target, hour]);
      const hourRow = rows.find((r) => r.g === 0);
      const dayRow = rows.find((r) => r.g === 1);
      const prev = rows.find((r) => r.g === 2);
      await tx.runLast(INSERT_SNAPSHOT, [target, ts, s.checked_at, s.status, s.response_time_ms, s.details ? JSON.stringify(s.details) : null, s.error ?? null, m ? 1 : 0]);
      const h = hourRow ? accFromRow(hourRow) : new RollupAcc();
      h.add(s.status, s.response_time_ms, m);
      const base = hourRow ?? prev;
      const cum = base ? (CUM_COLUMNS.map((c) => Number(base[c])) as Outcomes) : ZERO;
      await tx.runLast(UPSERT.hour, [...h.row(target, hour), ...plus(cum, one)]);
      // A late check (its clock behind an earlier one's) is added to every later hour's totals.
      await tx.runLast(BUMP_CUM, [...one, target, hour]);
      const d = dayRow ? accFromRow(dayRow) : new RollupAcc();
      d.add(s.status, s.response_time_ms, m);
      await tx.runLast(UPSERT.day, d.row(target, day));
    });
    this.announce(target, s);
  }

  async recent(target: string, limit: number): Promise<Snapshot[]> {
    const rows = await this.sql.all<SnapshotRow>('SELECT checked_at, status, response_time_ms, details, error, maintenance FROM snapshots WHERE target = ? ORDER BY ts DESC, id DESC LIMIT ?', [target, limit]);
    return rows.map(snapshotFromRow);
  }

  async counts(target: string, sinceMs: number, untilMs: number): Promise<CheckCounts> {
    return (await this.countsMany(target, [[sinceMs, untilMs]]))[0]!;
  }

  /** As the SQLite store's (CountsQuery): one statement for all windows. */
  async countsMany(target: string, windows: readonly (readonly [number, number])[]): Promise<CheckCounts[]> {
    const q = new CountsQuery(target, windows, this.rawFloor);
    type Row = { arm: number; c0: number; c1: number; c2: number; c3: number };
    const rows = await this.sql.all<Row>(q.sql('postgres'), q.params);
    return q.result(rows.map((r) => [Number(r.arm), [Number(r.c0), Number(r.c1), Number(r.c2), Number(r.c3)]]));
  }

  async uptime(target: string, sinceMs: number): Promise<{ total: number; up: number }> {
    return upAndTotal(await this.counts(target, sinceMs, Infinity));
  }

  async latency(target: string, sinceMs: number, untilMs = Infinity): Promise<LatencyStats | null> {
    const h = new LatencyHistogram();
    const plan = planWindow(sinceMs, untilMs, this.rawFloor);
    const pieces = (['raw', 'hour', 'day'] as const).flatMap((source) => plan[source].map(([from, to]) => ({ source, from, to })));
    if (!pieces.length) return null;
    type Row = { k: number; n: number; s: number | null; lo: number | null; hi: number | null; h: Buffer | null };
    for (const r of await this.sql.all<Row>(latencySql(pieces.map((q) => q.source)), pieces.flatMap((q) => [target, q.from, bound(q.to)]))) {
      if (Number(r.k) === 0) h.add(Number(r.n));
      else h.addEncoded(r.h, Number(r.n), Number(r.s), r.lo, r.hi);
    }
    return h.stats();
  }

  async rollups(target: string, grain: RollupGrain, fromMs: number, toMs: number): Promise<Rollup[]> {
    return (await this.sql.all<RollupRow>(ROLLUP_ROWS(grain), [target, fromMs, bound(toMs)])).map((r) => {
      const a = accFromRow(r);
      return { start: Number(r.start), operational: a.operational, degraded: a.degraded, down: a.down, maintenance: a.maintenance, latency: a.hist.stats() };
    });
  }

  async trend(target: string, sinceMs: number, bucketMs: number, buckets: number): Promise<TrendBucket[]> {
    if (sinceMs < this.rawFloor) {
      const hists: LatencyHistogram[] = [];
      for (let i = 0; i < buckets; i++) hists.push(new LatencyHistogram());
      for (const r of await this.sql.all<RollupRow>(ROLLUP_ROWS('hour'), [target, ceilTo(sinceMs, HOUR), bound(sinceMs + buckets * bucketMs)])) {
        hists[Math.floor((Number(r.start) - sinceMs) / bucketMs)]?.addEncoded(r.hist, r.rt_count, Number(r.rt_sum), r.rt_min, r.rt_max);
      }
      return hists.map((h, i) => ({ start: new Date(sinceMs + i * bucketMs).toISOString(), ...(h.stats() ?? { count: 0 }) }));
    }
    const out: TrendBucket[] = [];
    for (let i = 0; i < buckets; i++) out.push({ start: new Date(sinceMs + i * bucketMs).toISOString(), count: 0 });
    const rows = await this.sql.all<{ b: number; v: number }>(
      'SELECT (ts - ?) / ? AS b, response_time_ms AS v FROM snapshots WHERE target = ? AND ts >= ? AND response_time_ms > 0 AND maintenance = 0 ORDER BY b, v',
      [sinceMs, bucketMs, target, sinceMs],
    );
    let i = 0;
    while (i < rows.length) {
      const b = Number(rows[i]!.b);
      let j = i;
      while (j < rows.length && Number(rows[j]!.b) === b) j++;
      const stats = statsFromSorted(rows.slice(i, j).map((r) => r.v), j - i);
      if (out[b] && stats) Object.assign(out[b], stats);
      i = j;
    }
    return out;
  }

  async saveRoutes(target: string, results: RouteResult[]): Promise<void> {
    await this.sql.transaction(async (tx) => {
      await tx.run('DELETE FROM route_checks WHERE target = ?', [target]);
      for (const r of results) await tx.runLast('INSERT INTO route_checks (target, path, result) VALUES (?, ?, ?) ON CONFLICT (target, path) DO UPDATE SET result = excluded.result', [target, r.path, JSON.stringify(r)]);
    });
  }

  async routes(target: string): Promise<RouteResult[]> {
    return (await this.sql.all<{ result: string }>('SELECT result FROM route_checks WHERE target = ? ORDER BY path', [target])).map((r) => JSON.parse(r.result) as RouteResult);
  }

  async saveDns(target: string, results: DnsResult[]): Promise<void> {
    await this.sql.transaction(async (tx) => {
      await tx.run('DELETE FROM dns_checks WHERE target = ?', [target]);
      for (const r of results) {
        await tx.runLast('INSERT INTO dns_checks (target, key, result) VALUES (?, ?, ?) ON CONFLICT (target, key) DO UPDATE SET result = excluded.result', [target, `${r.name} ${r.record_type} ${r.expected.join(',')}`, JSON.stringify(r)]);
      }
    });
  }

  async dns(target: string): Promise<DnsResult[]> {
    return (await this.sql.all<{ result: string }>('SELECT result FROM dns_checks WHERE target = ? ORDER BY key', [target])).map((r) => JSON.parse(r.result) as DnsResult);
  }

  async saveResult(target: string, kind: string, result: Record<string, unknown>): Promise<void> {
    await this.sql.run('INSERT INTO results (target, kind, result) VALUES (?, ?, ?) ON CONFLICT (target, kind) DO UPDATE SET result = excluded.result', [target, kind, JSON.stringify(result)]);
  }

  async result(target: string, kind: string): Promise<Record<string, unknown> | undefined> {
    const r = await this.sql.value<string>('SELECT result FROM results WHERE target = ? AND kind = ?', [target, kind]);
    return r === undefined ? undefined : (JSON.parse(r) as Record<string, unknown>);
  }

  async recordTestRun(target: string, run: TestRun): Promise<void> {
    await this.sql.run('INSERT INTO test_runs (target, ts, started_at, exit_code, duration_ms, passed, error) VALUES (?, ?, ?, ?, ?, ?, ?)', [
      target,
      Date.parse(run.started_at),
      run.started_at,
      run.exit_code,
      run.duration_ms,
      run.passed ? 1 : 0,
      run.error ?? null,
    ]);
  }

  async testRuns(target: string, limit: number): Promise<TestRun[]> {
    return (await this.sql.all<TestRunRow>(`SELECT ${TEST_RUN_COLS} FROM test_runs WHERE target = ? ORDER BY ts DESC, id DESC LIMIT ?`, [target, limit])).map(testRunFromRow);
  }

  async lastPassingRun(target: string): Promise<TestRun | undefined> {
    const r = await this.sql.get<TestRunRow>(`SELECT ${TEST_RUN_COLS} FROM test_runs WHERE target = ? AND passed = 1 ORDER BY ts DESC, id DESC LIMIT 1`, [target]);
    return r ? testRunFromRow(r) : undefined;
  }

  async openIncident(target: string, startedAt: string, cause: string, checks: number): Promise<Incident> {
    // The partial unique index makes a second open a no-op: the one already open is answered.
    await this.sql.run('INSERT INTO incidents (target, ts_start, started_at, cause, checks) VALUES (?, ?, ?, ?, ?) ON CONFLICT (target) WHERE ended_at IS NULL DO NOTHING', [target, Date.parse(startedAt), startedAt, cause, checks]);
    const open = await this.currentIncident(target);
    if (!open) throw new Error(`the incident of ${target} was resolved as it opened; the next check decides again`);
    return open;
  }

  async addIncidentCheck(id: number): Promise<void> {
    await this.sql.run('UPDATE incidents SET checks = checks + 1 WHERE id = ?', [id]);
  }

  async resolveIncident(id: number, endedAt: string): Promise<boolean> {
    return (await this.sql.run('UPDATE incidents SET ended_at = ?, ts_end = ? WHERE id = ? AND ended_at IS NULL', [endedAt, Date.parse(endedAt), id])).changes === 1;
  }

  async claimAlert(incidentId: number, event: string): Promise<boolean> {
    return (await this.sql.run('INSERT INTO incident_alerts (incident_id, event) VALUES (?, ?) ON CONFLICT DO NOTHING', [incidentId, event])).changes === 1;
  }

  async alertClaimed(incidentId: number, event: string): Promise<boolean> {
    return (await this.sql.value('SELECT 1 FROM incident_alerts WHERE incident_id = ? AND event = ?', [incidentId, event])) !== undefined;
  }

  async currentIncident(target: string): Promise<Incident | undefined> {
    const r = await this.sql.get<IncidentRow>('SELECT * FROM incidents WHERE target = ? AND ended_at IS NULL ORDER BY ts_start DESC LIMIT 1', [target]);
    return r ? incident(r) : undefined;
  }

  async incidents(target: string, limit: number): Promise<Incident[]> {
    return (await this.sql.all<IncidentRow>('SELECT * FROM incidents WHERE target = ? ORDER BY ts_start DESC, id DESC LIMIT ?', [target, limit])).map(incident);
  }

  async incidentsBetween(target: string, fromMs: number, toMs: number, limit: number): Promise<Incident[]> {
    return (await this.sql.all<IncidentRow>('SELECT * FROM incidents WHERE target = ? AND ts_start < ? AND (ts_end IS NULL OR ts_end > ?) ORDER BY ts_start, id LIMIT ?', [target, toMs, fromMs, limit])).map(incident);
  }

  /**
   * As the SQLite store's, once a day across the cluster (the first instance to claim the day
   * runs it); the others hear the new raw floor.
   */
  async prune(cut: { rawBeforeMs: number; rollupsBeforeMs: number }): Promise<number> {
    const rawBefore = floorTo(cut.rawBeforeMs, HOUR);
    let removed = 0;
    await this.sql.exclusive(
      'monitor prune',
      async () => {
        await this.sql.run('INSERT INTO monitor_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = greatest(monitor_meta.value, excluded.value)', ['raw_floor', rawBefore]);
        await this.readFloor();
        await this.sql.notify(FLOOR_CHANNEL);
        const targets = await this.sql.all<{ target: string }>('SELECT target FROM rollup_day GROUP BY target UNION SELECT target FROM test_runs GROUP BY target');
        for (const { target } of targets) {
          removed += await this.sql.transaction(async (tx: SqlExecutor) => (await tx.run('DELETE FROM snapshots WHERE target = ? AND ts < ?', [target, rawBefore])).changes + (await tx.run('DELETE FROM test_runs WHERE target = ? AND ts < ?', [target, rawBefore])).changes);
        }
        removed += await this.sql.transaction(
          async (tx) =>
            (await tx.run('DELETE FROM rollup_hour WHERE start < ?', [floorTo(cut.rollupsBeforeMs, HOUR)])).changes +
            (await tx.run('DELETE FROM rollup_day WHERE start < ?', [floorTo(cut.rollupsBeforeMs, DAY)])).changes +
            (await tx.run('DELETE FROM incidents WHERE ended_at IS NOT NULL AND ts_end < ?', [cut.rollupsBeforeMs])).changes +
            (await tx.run('DELETE FROM incident_alerts WHERE incident_id NOT IN (SELECT id FROM incidents)')).changes,
        );
      },
      { period: floorTo(cut.rawBeforeMs, DAY) },
    );
    return removed;
  }

  async close(): Promise<void> {
    clearTimeout(this.noticeTimer);
    if (this.notices.length) this.sending = this.flushNotices().catch(() => undefined);
    await this.sending;
    for (const u of this.unlisten.splice(0)) u();
    await this.sql.close();
  }
}
