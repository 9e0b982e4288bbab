// The monitor store over the SQL surface, one text for SQLite and PostgreSQL: statements branch on
// the engine only where the dialects differ (a blob's type name, greatest/max). Opened by
// monitor-sqlite.ts (a file in the data dir) or monitor-pg.ts (a cluster's shared database).
import type { Engine, SqlDatabase, SqlExecutor } from './sql.js';
import type { LimiterWindows } from './limiter-windows.js';
import { SqlHeartbeats, type HeartbeatSignal, type HeartbeatState } from './monitor-heartbeats.js';
import { SqlSilences } from './monitor-silences.js';
import { SqlAlertSends } from './monitor-alert-sends.js';
import { LatencyHistogram } from './latency-histogram.js';
import type { CheckCounts, DnsResult, MonitorStore, Rollup, RollupGrain, RouteResult, TestRun } from './monitor.js';
import type { Incident, IncidentEvent, IncidentEventKind, LatencyStats, Snapshot, TrendBucket } from '../schemas/monitor.js';
import { upAndTotal, type Uptime } from '../monitor/uptime.js';
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
  oneCheck,
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
import { sqlText } from './sql-text.js';

const ROLLUP_COLS = 'operational, degraded, down, maintenance, rt_count, rt_sum, rt_min, rt_max, hist';
const TEST_RUN_COLS = 'started_at, exit_code, duration_ms, passed, error';
const SNAPSHOT_COLS = 'checked_at, status, response_time_ms, details, error, maintenance';

/** The raw floor moved (a prune, on this instance or another sharing the database). */

/** The order of a timeline's events that share a millisecond. */
const EVENT_ORDER = `CASE kind WHEN 'opened' THEN 0 WHEN 'caused_by' THEN 1 WHEN 'silenced' THEN 2 WHEN 'alerted' THEN 3 WHEN 'alert_failed' THEN 4 WHEN 'reminded' THEN 5 WHEN 'resolved' THEN 6 ELSE 7 END`;

export const FLOOR_CHANNEL = 'mkt_monitor_floor';

/** The statements whose text differs by engine, built once per engine. */
interface Dialect {
  foldRead: string;
  setFloor: string;
}

function dialect(engine: Engine): Dialect {
  // A typed NULL: PostgreSQL types a bare NULL in a sub-select as text, which no union of integers takes.
  const blob = engine === 'postgres' ? 'bytea' : 'BLOB';
  const greatest = engine === 'postgres' ? 'greatest' : 'max';
  return {
    // The hour row, the day row and the hour before (for a new hour's running totals), in one read.
    foldRead: `SELECT 0 AS g, ${ROLLUP_COLS}, ${CUM_COLUMNS.join(', ')} FROM rollup_hour WHERE target = ? AND start = ?
      UNION ALL SELECT 1, ${ROLLUP_COLS}, NULL, NULL, NULL, NULL FROM rollup_day WHERE target = ? AND start = ?
      UNION ALL SELECT * FROM (SELECT 2, 0, 0, 0, 0, 0, 0, CAST(NULL AS INTEGER), CAST(NULL AS INTEGER), CAST(NULL AS ${blob}), ${CUM_COLUMNS.join(', ')} FROM rollup_hour WHERE target = ? AND start < ? ORDER BY start DESC LIMIT 1) AS prev`,
    // The floor only moves forward, whichever instance prunes first.
    setFloor: `INSERT INTO monitor_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = ${greatest}(monitor_meta.value, excluded.value)`,
  };
}

const upsertRollup = (g: RollupGrain): string => {
  const cols = ['target', 'start', ...ROLLUP_COLS.split(', '), ...(g === 'hour' ? CUM_COLUMNS : [])];
  return `INSERT INTO rollup_${g} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})
    ON CONFLICT (target, start) DO UPDATE SET ${cols.slice(2).map((c) => `${c} = excluded.${c}`).join(', ')}`;
};
const UPSERT = { hour: upsertRollup('hour'), day: upsertRollup('day') };
const BUMP_CUM = `UPDATE rollup_hour SET ${CUM_COLUMNS.map((c) => `${c} = ${c} + ?`).join(', ')} WHERE target = ? AND start > ?`;
const SNAPSHOT_PARAMS = 8;
/** Rows in one INSERT at most (800 parameters: within SQLite's and PostgreSQL's limits). */
const INSERT_ROWS_MAX = 100;
const insertTexts: string[] = [];
/** The INSERT of `rows` snapshot rows, its text made once per row count. */
function insertSnapshots(rows: number): string {
  return (insertTexts[rows] ??= `INSERT INTO snapshots (target, ts, checked_at, status, response_time_ms, details, error, maintenance) VALUES ${Array.from({ length: rows }, () => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`);
}
const ROLLUP_ROWS = (g: RollupGrain): string => `SELECT start, ${ROLLUP_COLS} FROM rollup_${g} WHERE target = ? AND start >= ? AND start < ? ORDER BY start`;
const ROLLUP_ROWS_BY_GRAIN = { hour: ROLLUP_ROWS('hour'), day: ROLLUP_ROWS('day') };

type FoldRow = RollupRow & { g: number } & Record<string, number | null>;
type CountsRow = { arm: number; c0: number; c1: number; c2: number; c3: number };
type LatencyRow = { k: number; n: number; s: number | null; lo: number | null; hi: number | null; h: Buffer | null };

function rollupOf(r: RollupRow): Rollup {
  const a = accFromRow(r);
  return { start: Number(r.start), operational: a.operational, degraded: a.degraded, down: a.down, maintenance: a.maintenance, latency: a.hist.stats() };
}

export class SqlMonitorStore implements MonitorStore {
  private readonly dialect: Dialect;
  /** Compound statements' texts by the shape of their pieces (a handful of shapes occur), built once. */
  private readonly compounds = new Map<string, string>();
  /** Raw rows are complete from here on (the last raw prune's cut-off, 0 before any); read at open, moved by `prune`. */
  protected rawFloor: number;
  /** Heartbeat targets' ping keys and last signals. */
  readonly heartbeats: SqlHeartbeats;
  /** Each alert channel's last send. */
  readonly alertSends: SqlAlertSends;
  /** Ad-hoc silences of alerts. */
  readonly silences: SqlSilences;

  protected constructor(
    readonly sql: SqlDatabase,
    /** The rate limit's window, in this database so that it survives a restart (and a cluster shares it). */
    readonly windows: LimiterWindows,
    rawFloor: number,
  ) {
    this.dialect = dialect(sql.engine);
    this.rawFloor = rawFloor;
    this.heartbeats = new SqlHeartbeats(sql);
    this.alertSends = new SqlAlertSends(sql);
    this.silences = new SqlSilences(sql);
  }

  private compound(key: string, text: () => string): string {
    let sql = this.compounds.get(key);
    if (sql === undefined) {
      sql = text();
      this.compounds.set(key, sql);
    }
    return sql;
  }

  /** Re-reads the raw floor (after a prune here, or another instance's notice). */
  protected async readFloor(): Promise<void> {
    this.rawFloor = Number((await this.sql.value<number>('SELECT value FROM monitor_meta WHERE key = ?', ['raw_floor'])) ?? 0);
  }

  /**
   * The raw row and its rollups in one transaction, so a crash never leaves them disagreeing. Under
   * the target's lock (PostgreSQL; SQLite's write transactions are serial), two instances never
   * fold into one target's rows at once. PostgreSQL: two round trips, the read, then the writes
   * with COMMIT.
   */
  async recordSnapshot(target: string, s: Snapshot): Promise<void> {
    await this.sql.transaction((tx) => this.fold(tx, target, [s]));
    this.recorded(target, [s]);
  }

  /**
   * Heartbeat pings of one target in one transaction: the target's state read once and written
   * once, each ping's snapshot built (by `snapshotOf`, from the state before that ping) and folded
   * into the rollups together. A burst of pings costs one commit, not one each.
   */
  async recordHeartbeatPings(target: string, pings: readonly { signal: HeartbeatSignal; at: number }[], snapshotOf: (before: HeartbeatState | undefined, i: number) => Snapshot): Promise<{ snapshots: Snapshot[]; state: HeartbeatState | undefined }> {
    const out = await this.sql.transaction(async (tx) => {
      const { before, state } = await this.heartbeats.signalAll(tx, target, pings);
      const snapshots = pings.map((_, i) => snapshotOf(before[i], i));
      await this.fold(tx, target, snapshots);
      return { snapshots, state };
    });
    this.recorded(target, out.snapshots);
    return out;
  }

  /** Snapshots recorded (committed): PostgreSQL tells the other instances. */
  protected recorded(target: string, snapshots: readonly Snapshot[]): void {
    void target;
    void snapshots;
  }

  /**
   * Inside a transaction: the raw rows of one target and their rollups, under the target's lock.
   * Rows of one hour share a read and a write of its rollups; only the last hour's writes may wait
   * for COMMIT (PostgreSQL), since a later hour's read must see an earlier one's.
   */
  private async fold(tx: SqlExecutor, target: string, snaps: readonly Snapshot[]): Promise<void> {
    const hours = new Map<number, { ts: number; s: Snapshot }[]>();
    // A group of pings mostly shares one checked_at text (made once a millisecond): parsed once.
    let lastText: string | undefined;
    let lastTs = NaN;
    for (const s of snaps) {
      const ts = s.checked_at === lastText ? lastTs : Date.parse(s.checked_at);
      lastText = s.checked_at;
      lastTs = ts;
      if (!Number.isFinite(ts)) throw new Error(`snapshot of ${target} has no valid checked_at: ${s.checked_at}`);
      const hour = floorTo(ts, HOUR);
      let group = hours.get(hour);
      if (!group) hours.set(hour, (group = []));
      group.push({ ts, s });
    }
    await tx.lockWithNext(`monitor:${target}`);
    let left = hours.size;
    for (const [hour, group] of hours) {
      const write = --left === 0 ? tx.runLast.bind(tx) : async (sql: string, params: readonly unknown[]): Promise<void> => void (await tx.run(sql, params));
      const day = floorTo(hour, DAY);
      const rows = await tx.all<FoldRow>(this.dialect.foldRead, [target, hour, target, day, target, hour]);
      let hourRow: FoldRow | undefined;
      let dayRow: FoldRow | undefined;
      let prev: FoldRow | undefined;
      for (const r of rows) {
        const g = Number(r.g);
        if (g === 0) hourRow = r;
        else if (g === 1) dayRow = r;
        else prev = r;
      }
      const h = hourRow ? accFromRow(hourRow) : new RollupAcc();
      const d = dayRow ? accFromRow(dayRow) : new RollupAcc();
      let added = ZERO;
      const values: unknown[] = [];
      for (const { ts, s } of group) {
        const m = s.maintenance === true;
        values.push(target, ts, s.checked_at, s.status, s.response_time_ms, s.details ? JSON.stringify(s.details) : null, s.error ?? null, m ? 1 : 0);
        h.add(s.status, s.response_time_ms, m);
        d.add(s.status, s.response_time_ms, m);
        added = plus(added, oneCheck(s.status, m));
      }
      // The rows in statements of up to INSERT_ROWS_MAX each: a group of pings is one statement, not one a ping.
      for (let i = 0; i < values.length; i += INSERT_ROWS_MAX * SNAPSHOT_PARAMS) {
        const chunk = values.slice(i, i + INSERT_ROWS_MAX * SNAPSHOT_PARAMS);
        await write(insertSnapshots(chunk.length / SNAPSHOT_PARAMS), chunk);
      }
      // This hour's running totals: its own so far, or a new hour's from the hour before.
      const base = hourRow ?? prev;
      const cum = base ? (CUM_COLUMNS.map((c) => Number(base[c])) as Outcomes) : ZERO;
      await write(UPSERT.hour, [...h.row(target, hour), ...plus(cum, added)]);
      // A late check (its clock behind an earlier one's) is added to every later hour's totals.
      await write(BUMP_CUM, [...added, target, hour]);
      await write(UPSERT.day, d.row(target, day));
    }
  }

  async recent(target: string, limit: number): Promise<Snapshot[]> {
    const rows = await this.sql.all<SnapshotRow>(sqlText`SELECT ${SNAPSHOT_COLS} FROM snapshots WHERE target = ? ORDER BY ts DESC, id DESC LIMIT ?`, [target, limit]);
    return rows.map(snapshotFromRow);
  }

  async counts(target: string, sinceMs: number, untilMs: number): Promise<CheckCounts> {
    return (await this.countsMany(target, [[sinceMs, untilMs]]))[0]!;
  }

  /** All windows in one statement (CountsQuery). */
  async countsMany(target: string, windows: readonly (readonly [number, number])[]): Promise<CheckCounts[]> {
    const q = new CountsQuery(target, windows, this.rawFloor);
    const rows = await this.sql.all<CountsRow>(this.compound(q.key, () => q.sql(this.sql.engine)), q.params);
    return q.result(rows.map((r) => [Number(r.arm), [Number(r.c0), Number(r.c1), Number(r.c2), Number(r.c3)]]));
  }

  async uptime(target: string, sinceMs: number): Promise<Uptime> {
    return upAndTotal(await this.counts(target, sinceMs, Infinity));
  }

  /** Latency from raw edges and the rollups' histograms: counts, min, max, mean exact; percentiles within 1 %. */
  async latency(target: string, sinceMs: number, untilMs = Infinity): Promise<LatencyStats | null> {
    const plan = planWindow(sinceMs, untilMs, this.rawFloor);
    const pieces = (['raw', 'hour', 'day'] as const).flatMap((source) => plan[source].map(([from, to]) => ({ source, from, to })));
    if (!pieces.length) return null;
    const sources = pieces.map((q) => q.source);
    const h = new LatencyHistogram();
    for (const r of await this.sql.all<LatencyRow>(this.compound(`latency:${sources.join(',')}`, () => latencySql(sources)), pieces.flatMap((q) => [target, q.from, bound(q.to)]))) {
      if (Number(r.k) === 0) h.add(Number(r.n));
      else h.addEncoded(r.h, Number(r.n), Number(r.s), r.lo, r.hi);
    }
    return h.stats();
  }

  async firstCheckAt(target: string): Promise<number | undefined> {
    const hour = await this.sql.value<number | null>('SELECT MIN(start) FROM rollup_hour WHERE target = ?', [target]);
    if (hour === undefined || hour === null) return undefined;
    // Once that hour's raw rows are pruned, its start is the best known.
    if (Number(hour) < this.rawFloor) return Number(hour);
    const first = await this.sql.value<number | null>('SELECT MIN(ts) FROM snapshots WHERE target = ? AND ts >= ? AND ts < ?', [target, Number(hour), Number(hour) + HOUR]);
    return first === undefined || first === null ? Number(hour) : Number(first);
  }

  async rollups(target: string, grain: RollupGrain, fromMs: number, toMs: number): Promise<Rollup[]> {
    return (await this.sql.all<RollupRow>(ROLLUP_ROWS_BY_GRAIN[grain], [target, fromMs, bound(toMs)])).map(rollupOf);
  }

  async trend(target: string, sinceMs: number, bucketMs: number, buckets: number): Promise<TrendBucket[]> {
    if (sinceMs < this.rawFloor) return this.trendFromRollups(target, sinceMs, bucketMs, buckets);
    const out: TrendBucket[] = [];
    for (let i = 0; i < buckets; i++) out.push({ start: new Date(sinceMs + i * bucketMs).toISOString(), count: 0 });
    // Ordered by bucket then value: each bucket's values are a sorted run.
    const rows = await this.sql.all<{ b: number; v: number }>(
      'SELECT CAST((ts - ?) / ? AS INTEGER) AS b, response_time_ms AS v FROM snapshots WHERE target = ? AND ts >= ? AND response_time_ms > 0 AND maintenance = 0 ORDER BY b, v',
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

  /** A trend reaching past the raw retention: each hourly rollup counts in the bucket where its hour starts. */
  private async trendFromRollups(target: string, sinceMs: number, bucketMs: number, buckets: number): Promise<TrendBucket[]> {
    const hists: LatencyHistogram[] = [];
    for (let i = 0; i < buckets; i++) hists.push(new LatencyHistogram());
    for (const r of await this.sql.all<RollupRow>(ROLLUP_ROWS_BY_GRAIN.hour, [target, ceilTo(sinceMs, HOUR), bound(sinceMs + buckets * bucketMs)])) {
      hists[Math.floor((Number(r.start) - sinceMs) / bucketMs)]?.addEncoded(r.hist, r.rt_count, Number(r.rt_sum), r.rt_min, r.rt_max);
    }
    return hists.map((h, i) => ({ start: new Date(sinceMs + i * bucketMs).toISOString(), ...(h.stats() ?? { count: 0 }) }));
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
    return (await this.sql.all<TestRunRow>(sqlText`SELECT ${TEST_RUN_COLS} FROM test_runs WHERE target = ? ORDER BY ts DESC, id DESC LIMIT ?`, [target, limit])).map(testRunFromRow);
  }

  async lastPassingRun(target: string): Promise<TestRun | undefined> {
    const r = await this.sql.get<TestRunRow>(sqlText`SELECT ${TEST_RUN_COLS} FROM test_runs WHERE target = ? AND passed = 1 ORDER BY ts DESC, id DESC LIMIT 1`, [target]);
    return r ? testRunFromRow(r) : undefined;
  }

  async openIncident(target: string, startedAt: string, cause: string, checks: number, causedBy?: string): Promise<Incident> {
    // The partial unique index makes a second open a no-op: the one already open is answered.
    await this.sql.run('INSERT INTO incidents (target, ts_start, started_at, cause, checks, caused_by) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (target) WHERE ended_at IS NULL DO NOTHING', [target, Date.parse(startedAt), startedAt, cause, checks, causedBy ?? null]);
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

  async addIncidentEvent(incidentId: number, kind: IncidentEventKind, at: number, detail?: string): Promise<void> {
    await this.sql.run('INSERT INTO incident_events (incident_id, ts, kind, detail) VALUES (?, ?, ?, ?)', [incidentId, at, kind, detail ?? null]);
  }

  /**
   * Events of one millisecond in the order they happen (an incident opens, under its parent, then
   * alerts; it resolves last): the table keeps no sequence of its own on PostgreSQL.
   */
  async incidentEvents(incidentId: number, limit = 200): Promise<IncidentEvent[]> {
    const rows = await this.sql.all<{ ts: number | string; kind: IncidentEventKind; detail: string | null }>(sqlText`SELECT ts, kind, detail FROM incident_events WHERE incident_id = ? ORDER BY ts, ${EVENT_ORDER} LIMIT ?`, [incidentId, limit]);
    return rows.map((r) => ({ at: new Date(Number(r.ts)).toISOString(), kind: r.kind, ...(r.detail !== null ? { detail: r.detail } : {}) }));
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
   * Two retentions. The raw floor is moved first (and announced to the instances sharing the
   * database): from then on windows reaching before it read rollups, never a half-pruned raw
   * table. Raw rows go target by target, a transaction each with a turn of the event loop between,
   * so a day of 1,000 targets (1.4M rows) never stalls the API; rollups and old incidents are small.
   */
  async prune(cut: { rawBeforeMs: number; rollupsBeforeMs: number }): Promise<number> {
    const rawBefore = floorTo(cut.rawBeforeMs, HOUR);
    await this.sql.run(this.dialect.setFloor, ['raw_floor', rawBefore]);
    await this.readFloor();
    await this.sql.notify(FLOOR_CHANNEL);
    let removed = 0;
    const targets = await this.sql.all<{ target: string }>('SELECT target FROM rollup_day GROUP BY target UNION SELECT target FROM test_runs GROUP BY target');
    for (const { target } of targets) {
      removed += await this.sql.transaction(
        async (tx) => (await tx.run('DELETE FROM snapshots WHERE target = ? AND ts < ?', [target, rawBefore])).changes + (await tx.run('DELETE FROM test_runs WHERE target = ? AND ts < ?', [target, rawBefore])).changes,
      );
      await new Promise((r) => setImmediate(r));
    }
    removed += await this.sql.transaction(
      async (tx) =>
        (await tx.run('DELETE FROM rollup_hour WHERE start < ?', [floorTo(cut.rollupsBeforeMs, HOUR)])).changes +
        (await tx.run('DELETE FROM rollup_day WHERE start < ?', [floorTo(cut.rollupsBeforeMs, DAY)])).changes +
        (await tx.run('DELETE FROM incidents WHERE ended_at IS NOT NULL AND ts_end < ?', [cut.rollupsBeforeMs])).changes +
        (await tx.run('DELETE FROM incident_alerts WHERE incident_id NOT IN (SELECT id FROM incidents)')).changes,
    );
    return removed;
  }

  async close(): Promise<void> {
    await this.sql.close();
  }
}
