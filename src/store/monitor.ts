// MonitorStore: the health monitor's history — check snapshots, route/DNS/TLS/WHOIS results,
// test runs and incidents — with windowed statistics. Interface and types only: one adapter serves
// both engines (monitor-sql.ts, opened by monitor-sqlite.ts or monitor-pg.ts).
import type { CheckCounts } from '../monitor/uptime.js';
import type { HeartbeatSignal, HeartbeatState, SqlHeartbeats } from './monitor-heartbeats.js';
import type { SqlAlertSends } from './monitor-alert-sends.js';
import type { SqlSilences } from './monitor-silences.js';

export type { Snapshot, LatencyStats, TrendBucket, Incident } from '../schemas/monitor.js';
import type { Snapshot, LatencyStats, TrendBucket, Incident, IncidentEvent, IncidentEventKind } from '../schemas/monitor.js';
export type { CheckCounts } from '../monitor/uptime.js';

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

/** One hourly or daily rollup: the counts of its checks and the latency of its timed ones. */
export interface Rollup extends CheckCounts {
  /** Start of the hour or UTC day, epoch ms. */
  start: number;
  /** Latency over the checks with a response time > 0 outside maintenance; null when none. */
  latency: LatencyStats | null;
}

export type RollupGrain = 'hour' | 'day';

export interface MonitorStore {
  /** Heartbeat targets' ping keys and last signals (monitor-heartbeats.ts). */
  readonly heartbeats: SqlHeartbeats;
  /** Each alert channel's last send (monitor-alert-sends.ts). */
  readonly alertSends: SqlAlertSends;
  /** Ad-hoc silences: active ones hold a target's alerts (monitor-silences.ts). */
  readonly silences: SqlSilences;
  recordSnapshot(target: string, s: Snapshot): Promise<void>;
  /**
   * Heartbeat pings of one target in one transaction: its state updated and each ping's snapshot
   * (built by `snapshotOf` from the state before that ping) recorded; answers them and the state after.
   */
  recordHeartbeatPings(target: string, pings: readonly { signal: HeartbeatSignal; at: number }[], snapshotOf: (before: HeartbeatState | undefined, i: number) => Snapshot): Promise<{ snapshots: Snapshot[]; state: HeartbeatState | undefined }>;
  recent(target: string, limit: number): Promise<Snapshot[]>;
  /** Checks since `sinceMs`: total, and how many were up, by the uptime rule (src/monitor/uptime.ts). */
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
   * (a unique index), so instances sharing the store open it once. `causedBy`: the parent target
   * (`depends_on`) down when it opened.
   */
  openIncident(target: string, startedAt: string, cause: string, checks: number, causedBy?: string): Promise<Incident>;
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
  /** Adds an event to an incident's timeline (at = epoch ms). */
  addIncidentEvent(incidentId: number, kind: IncidentEventKind, at: number, detail?: string): Promise<void>;
  /** An incident's timeline, oldest first (at most `limit` events). */
  incidentEvents(incidentId: number, limit?: number): Promise<IncidentEvent[]>;
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
  /**
   * When the target's first recorded check ran (epoch ms): from the raw rows while they are kept,
   * else the start of its first hourly rollup; undefined when it has none.
   */
  firstCheckAt(target: string): Promise<number | undefined>;
  /** Hourly or daily rollups starting in [fromMs, toMs), oldest first; periods without checks are absent. */
  rollups(target: string, grain: RollupGrain, fromMs: number, toMs: number): Promise<Rollup[]>;
  /** Drops raw rows and test runs before `rawBeforeMs`, rollups and resolved incidents before `rollupsBeforeMs`; returns rows removed. */
  prune(cut: { rawBeforeMs: number; rollupsBeforeMs: number }): Promise<number>;
  close(): Promise<void>;
}
