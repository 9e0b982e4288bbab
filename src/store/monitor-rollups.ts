// The monitor store's rollup arithmetic (monitor-sql.ts): how a window splits into raw edges,
// whole hours and whole days; the per-hour and per-day accumulators; and the compound statements
// that read a status's windows in one round trip. Checks are classified by src/monitor/uptime.ts.
import type { Incident, LatencyStats, Snapshot } from '../schemas/monitor.js';
import { LatencyHistogram } from './latency-histogram.js';
import { OUTCOMES, OWN_STATUSES, outcomeOf, type CheckCounts } from '../monitor/uptime.js';
import type { RollupGrain, TestRun } from './monitor.js';
import type { Engine } from './sql.js';

/**
 * Running totals on each hourly row: the target's checks by outcome in every hourly row up to and
 * including this one, pruned rows included. The checks in a run of hours are then a difference
 * of two rows however long the run (a year is 8,760 rows), see `CountsQuery`.
 */
export const CUM_COLUMNS = ['cum_operational', 'cum_degraded', 'cum_down', 'cum_maintenance'];

export const HOUR = 3_600_000;
export const DAY = 86_400_000;
export const floorTo = (ms: number, unit: number): number => Math.floor(ms / unit) * unit;
export const ceilTo = (ms: number, unit: number): number => Math.ceil(ms / unit) * unit;
export const GRAIN_MS: Record<RollupGrain, number> = { hour: HOUR, day: DAY };

/** One rollup row being built: counts by outcome plus the latency histogram of its timed checks. */
export class RollupAcc {
  operational = 0;
  degraded = 0;
  down = 0;
  maintenance = 0;
  readonly hist = new LatencyHistogram();

  add(status: string, responseMs: number, maintenance: boolean): void {
    this[outcomeOf(status, maintenance)]++;
    // Latency is of timed checks outside maintenance, as the raw statements read it (latencySql).
    if (!maintenance && responseMs > 0) this.hist.add(responseMs);
  }

  outcomes(): Outcomes {
    return [this.operational, this.degraded, this.down, this.maintenance];
  }

  row(target: string, start: number): unknown[] {
    const h = this.hist;
    return [target, start, this.operational, this.degraded, this.down, this.maintenance, h.count, h.sum, h.count ? h.min : null, h.count ? h.max : null, h.count ? h.encode() : null];
  }
}

export interface RollupRow {
  start: number;
  operational: number;
  degraded: number;
  down: number;
  maintenance: number;
  rt_count: number;
  rt_sum: number;
  rt_min: number | null;
  rt_max: number | null;
  hist: Buffer | null;
}

export function accFromRow(r: RollupRow): RollupAcc {
  const a = new RollupAcc();
  a.operational = r.operational;
  a.degraded = r.degraded;
  a.down = r.down;
  a.maintenance = r.maintenance;
  a.hist.addEncoded(r.hist, r.rt_count, r.rt_sum, r.rt_min, r.rt_max);
  return a;
}

/** Checks by outcome, in the order of the rollup columns: operational, degraded, down, maintenance. */
export type Outcomes = [number, number, number, number];
export const ZERO: Outcomes = [0, 0, 0, 0];
export const plus = (a: Outcomes, b: Outcomes): Outcomes => [a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]];
const minus = (a: Outcomes, b: Outcomes): Outcomes => [a[0] - b[0], a[1] - b[1], a[2] - b[2], a[3] - b[3]];

/** The Outcomes of one check: its outcome's column gets 1. */
export function oneCheck(status: string, maintenance: boolean): Outcomes {
  const k = OUTCOMES.indexOf(outcomeOf(status, maintenance));
  return [k === 0 ? 1 : 0, k === 1 ? 1 : 0, k === 2 ? 1 : 0, k === 3 ? 1 : 0];
}

export interface IncidentRow {
  id: number;
  started_at: string;
  ended_at: string | null;
  ts_start: number;
  ts_end: number | null;
  cause: string;
  checks: number;
  caused_by?: string | null;
}

export function incident(r: IncidentRow): Incident {
  return {
    id: r.id,
    status: r.ended_at === null ? 'open' : 'resolved',
    started_at: r.started_at,
    ended_at: r.ended_at,
    cause: r.cause,
    checks: r.checks,
    duration_s: r.ts_end === null ? null : Math.round((r.ts_end - r.ts_start) / 1000),
    ...(r.caused_by ? { caused_by: r.caused_by } : {}),
  };
}

/** Nearest-rank percentile positions (0-based) for a sorted list of n values. */
export function rank(n: number, p: number): number {
  return Math.max(0, Math.ceil((p / 100) * n) - 1);
}

/** Stats from values streamed in ascending order; `n` is known up front from a count. */
export function statsFromSorted(values: Iterable<number>, n: number): LatencyStats | null {
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

/** SQLite binds a number; an open end is the largest safe one. */
export const bound = (ms: number): number => (ms === Infinity ? Number.MAX_SAFE_INTEGER : ms);

/** Where a window's checks are read from: raw rows at its ragged edges, rollups for whole hours and days. */
export interface WindowPlan {
  raw: [number, number][];
  hour: [number, number][];
  day: [number, number][];
}

/**
 * Splits [since, until) into raw edges, whole hours and whole UTC days. Raw rows exist from
 * `rawFloor` on; an edge before it is cut back to the whole hour (the documented rounding).
 */
export function planWindow(since: number, until: number, rawFloor: number): WindowPlan {
  const plan: WindowPlan = { raw: [], hour: [], day: [] };
  if (!(until > since)) return plan;
  const a = ceilTo(since, HOUR);
  const b = until === Infinity ? Infinity : floorTo(until, HOUR);
  if (b !== Infinity && a > b) {
    // Inside one hour: raw only.
    if (since >= rawFloor) plan.raw.push([since, until]);
    return plan;
  }
  if (since < a && since >= rawFloor) plan.raw.push([since, a]);
  if (b !== Infinity && until > b && b >= rawFloor) plan.raw.push([b, until]);
  // Whole hours up to the first whole day, whole days, then whole hours after the last whole day.
  const d0 = ceilTo(a, DAY);
  const d1 = b === Infinity ? Infinity : floorTo(b, DAY);
  if (d1 !== Infinity && d0 >= d1) {
    if (b > a) plan.hour.push([a, b]);
    return plan;
  }
  if (d0 > a) plan.hour.push([a, d0]);
  plan.day.push([d0, d1]);
  if (d1 !== Infinity && b > d1) plan.hour.push([d1, b]);
  return plan;
}

/** A disjoint piece of the raw edges of one or more windows. */
export interface RawPiece {
  from: number;
  to: number;
  /** The indexes of the windows whose raw edges contain the piece. */
  windows: number[];
}

/**
 * Cuts the raw edges of several windows' plans into disjoint pieces, so that rows two windows
 * share (windows ending at the same instant share their last partial hour) are summed once,
 * each piece one indexed range.
 */
function rawPieces(plans: readonly WindowPlan[]): RawPiece[] {
  const out: RawPiece[] = [];
  const ranges = plans.flatMap((p, i) => p.raw.map(([from, to]) => ({ from, to, i })));
  const points = [...new Set(ranges.flatMap((r) => [r.from, r.to]))].sort((x, y) => x - y);
  for (let k = 0; k + 1 < points.length; k++) {
    const from = points[k]!;
    const to = points[k + 1]!;
    const windows = [...new Set(ranges.filter((r) => r.from <= from && to <= r.to).map((r) => r.i))];
    if (windows.length) out.push({ from, to, windows });
  }
  return out;
}

/** A plan's whole hours and days as one run [from, to) of hours, or null. */
function wholeHours(p: WindowPlan): [number, number] | null {
  const runs = [...p.hour, ...p.day].filter(([a, b]) => b > a);
  if (!runs.length) return null;
  return [Math.min(...runs.map((r) => r[0])), Math.max(...runs.map((r) => r[1]))];
}

/**
 * The four outcome counts of raw rows, in OUTCOMES order, by uptime.ts's classification (its own
 * statuses by name, any other status down, maintenance whatever the status); SQLite sums
 * booleans, PostgreSQL filters a count.
 */
function rawCounts(engine: Engine): string {
  const own = OWN_STATUSES.map((s) => `'${s}'`);
  const when = [...own.map((s) => `status = ${s}`), `status NOT IN (${own.join(', ')})`];
  if (engine === 'sqlite') return [...when.map((w) => `coalesce(sum(maintenance = 0 AND ${w}), 0)`), 'coalesce(sum(maintenance), 0)'].map((e, k) => `${e} AS c${k}`).join(', ');
  return [...when.map((w) => `count(*) FILTER (WHERE maintenance = 0 AND ${w})`), 'count(*) FILTER (WHERE maintenance = 1)'].map((e, k) => `${e} AS c${k}`).join(', ');
}

/**
 * One statement for the counts of several windows: a row (arm, four counts) for each raw piece
 * (arms 0..raw-1), for each boundary x of their runs of whole hours the totals of all hours before
 * x (arms raw.., read off the first hour at or after x as its running totals minus its own
 * counts), and the totals of all hours (arm -1, the last hour's running totals). Columns are
 * named (arm, c0..c3) for engines that answer objects.
 */
function countsSql(raw: number, boundaries: number, engine: Engine = 'sqlite'): string {
  const arms: string[] = [];
  for (let i = 0; i < raw; i++) arms.push(`SELECT ${i} AS arm, ${rawCounts(engine)} FROM snapshots WHERE target = ? AND ts >= ? AND ts < ?`);
  const before = CUM_COLUMNS.map((c, k) => `${c} - ${OUTCOMES[k]} AS c${k}`).join(', ');
  for (let i = raw; i < raw + boundaries; i++) arms.push(`SELECT * FROM (SELECT ${i} AS arm, ${before} FROM rollup_hour WHERE target = ? AND start >= ? ORDER BY start LIMIT 1) AS b${i}`);
  arms.push(`SELECT * FROM (SELECT -1 AS arm, ${CUM_COLUMNS.map((c, k) => `${c} AS c${k}`).join(', ')} FROM rollup_hour WHERE target = ? ORDER BY start DESC LIMIT 1) AS total`);
  return arms.join(' UNION ALL ');
}

/**
 * One statement reading the latency of each piece: raw rows as (response time, 1, ...) and
 * rollups as (count, sum, min, max, histogram), told apart by the first column. Every arm names its
 * columns: a statement of rollups only takes its names from its first arm.
 */
export function latencySql(sources: readonly (keyof WindowPlan)[]): string {
  return sources
    .map((src) =>
      src === 'raw'
        ? `SELECT 0 AS k, response_time_ms AS n, NULL AS s, NULL AS lo, NULL AS hi, NULL AS h FROM snapshots WHERE target = ? AND ts >= ? AND ts < ? AND response_time_ms > 0 AND maintenance = 0`
        : `SELECT 1 AS k, rt_count AS n, rt_sum AS s, rt_min AS lo, rt_max AS hi, hist AS h FROM rollup_${src} WHERE target = ? AND start >= ? AND start < ?`,
    )
    .join(' UNION ALL ');
}


export interface SnapshotRow {
  checked_at: string;
  status: string;
  response_time_ms: number;
  details: string | null;
  error: string | null;
  maintenance: number;
}

/** A stored snapshot: optional fields only when set. */
export function snapshotFromRow(r: SnapshotRow): Snapshot {
  const s: Snapshot = { status: r.status, checked_at: r.checked_at, response_time_ms: r.response_time_ms };
  if (r.details !== null) s.details = JSON.parse(r.details) as Record<string, unknown>;
  if (r.error !== null) s.error = r.error;
  if (r.maintenance === 1) s.maintenance = true;
  return s;
}

export interface TestRunRow {
  started_at: string;
  exit_code: number | null;
  duration_ms: number;
  passed: number;
  error: string | null;
}

export function testRunFromRow(r: TestRunRow): TestRun {
  const t: TestRun = { started_at: r.started_at, exit_code: r.exit_code, duration_ms: r.duration_ms, passed: r.passed === 1 };
  if (r.error !== null) t.error = r.error;
  return t;
}

/**
 * The counts of several windows read as one compound statement (`countsSql`): the statement's
 * shape, its parameters, and how its rows (arm, four counts) add up to each window's counts.
 * Raw edges are cut into disjoint pieces, each summed once; a window's whole hours and days
 * [a, b) are the hours' totals before b less those before a, read from the running totals (two
 * index lookups, however long the window).
 */
export class CountsQuery {
  readonly raw: RawPiece[];
  readonly points: number[];
  readonly params: unknown[];
  private readonly spans: ([number, number] | null)[];

  constructor(
    target: string,
    private readonly windows: readonly (readonly [number, number])[],
    rawFloor: number,
  ) {
    const plans = windows.map(([a, b]) => planWindow(a, b, rawFloor));
    this.raw = rawPieces(plans);
    this.spans = plans.map(wholeHours);
    this.points = [...new Set(this.spans.flatMap((sp) => (sp ? sp.filter((x) => x !== Infinity) : [])))];
    this.params = this.raw.flatMap((p) => [target, p.from, bound(p.to)]);
    for (const x of this.points) this.params.push(target, x);
    this.params.push(target);
  }

  /** The statement for `engine` (a handful of shapes occur: `key` names one). */
  sql(engine: Engine): string {
    return countsSql(this.raw.length, this.points.length, engine);
  }

  get key(): string {
    return `counts:${this.raw.length}:${this.points.length}`;
  }

  /** Each window's counts from the statement's rows. */
  result(rows: Iterable<[number, Outcomes]>): CheckCounts[] {
    const out = this.windows.map((): Outcomes => ZERO);
    const before = new Map<number, Outcomes>();
    let all = ZERO;
    for (const [arm, c] of rows) {
      if (arm < 0) all = c;
      else if (arm < this.raw.length) for (const w of this.raw[arm]!.windows) out[w] = plus(out[w]!, c);
      else before.set(this.points[arm - this.raw.length]!, c);
    }
    // No hour at or after x: every hour is before it.
    const totalBefore = (x: number): Outcomes => (x === Infinity ? all : (before.get(x) ?? all));
    this.spans.forEach((sp, w) => {
      if (sp) out[w] = plus(out[w]!, minus(totalBefore(sp[1]), totalBefore(sp[0])));
    });
    return out.map(([operational, degraded, down, maintenance]) => ({ operational, degraded, down, maintenance }));
  }
}
