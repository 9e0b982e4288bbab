// Monitor wire types shared by the server (store, status builder) and the `mkt monitor` client.
import { Type, type TSchema } from '@sinclair/typebox';
// The shared error body, re-exported so a service's routes import their wire types from one module.
export { ErrorSchema } from './common.js';

export interface Snapshot {
  status: string;
  checked_at: string;
  response_time_ms: number;
  details?: Record<string, unknown>;
  error?: string;
  /** True when the check ran inside a maintenance window: it counts as maintenance, not against uptime. */
  maintenance?: boolean;
}

export interface LatencyStats {
  count: number;
  min: number;
  mean: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export interface TrendBucket extends Partial<LatencyStats> {
  start: string;
  count: number;
}

/** The SLA report of GET /api/report/{target}; the accounting rules are in docs/monitor.md. */
export interface ReportMinutes {
  period: number;
  operational: number;
  degraded: number;
  down: number;
  maintenance: number;
  no_data: number;
}

export interface Incident {
  id: number;
  status: 'open' | 'resolved';
  started_at: string;
  ended_at: string | null;
  cause: string;
  checks: number;
  duration_s: number | null;
  /** The parent target (`depends_on`) that was down when this incident opened; its alerts were the parent's. */
  caused_by?: string;
}

/** A silence as the API answers it (docs/monitor.md, "Silences"). */
export interface SilenceJson {
  id: string;
  /** The silenced target; null when every target is silenced (`all`). */
  target: string | null;
  all: boolean;
  reason: string;
  created_at: string;
  expires_at: string;
}

/** What happened to an incident, in order: its timeline (dashboard, `mkt monitor detail`). */
export type IncidentEventKind = 'opened' | 'alerted' | 'reminded' | 'silenced' | 'caused_by' | 'resolved' | 'alert_failed';

export interface IncidentEvent {
  at: string;
  kind: IncidentEventKind;
  /** A short text: the channels alerted, the silence's reason, the parent, the failing channel. */
  detail?: string;
}

export interface ReportIncident extends Incident {
  /** Seconds of the incident inside the period (an open one runs to now). */
  in_period_s: number;
}

export interface SlaReport {
  target: string;
  label: string;
  from: string;
  to: string;
  generated_at: string;
  /**
   * When watching began inside the period: its start, or the target's first check when that came
   * later; null when the target had no check before the period's end.
   */
  watched_from: string | null;
  /** Seconds from `watched_from` to the period's end; downtime and the hour shares count only these. */
  watched_seconds: number;
  /** Percent of counted checks (operational + degraded + down) that were up; null without any. */
  uptime: number | null;
  downtime_minutes: number;
  checks: { operational: number; degraded: number; down: number; maintenance: number; counted: number };
  minutes: ReportMinutes;
  incident_count: number;
  incidents: ReportIncident[];
  latency: LatencyStats | null;
  maintenance_windows: { name: string; title: string; start: string; end: string }[];
}

// Response schemas for the OpenAPI document and the response serializer. Objects the spec leaves
// open (details, TLS, WHOIS, staleness, drift, identity, peers) allow any further property, so
// the serializer never drops a field; nullable values use type lists, not anyOf.

const open = (description: string): TSchema => Type.Object({}, { additionalProperties: true, description });
const nullable = (schema: TSchema): TSchema => Type.Unsafe({ ...schema, type: [schema.type as string, 'null'] });

export const SnapshotSchema = Type.Object({
  status: Type.String({ description: 'operational, degraded or down' }),
  checked_at: Type.String({ format: 'date-time' }),
  response_time_ms: Type.Integer(),
  details: Type.Optional(open('the JSON body of the health endpoint')),
  error: Type.Optional(Type.String()),
  maintenance: Type.Optional(Type.Boolean({ description: 'present (true) when the check ran inside a maintenance window' })),
});

export const LatencySchema = Type.Object({
  count: Type.Integer(),
  min: Type.Number(),
  mean: Type.Number(),
  p50: Type.Number(),
  p95: Type.Number(),
  p99: Type.Number(),
  max: Type.Number(),
});

const IncidentSchema = Type.Object(
  {
    id: Type.Integer(),
    status: Type.String({ description: 'open or resolved' }),
    started_at: Type.String({ format: 'date-time' }),
    ended_at: nullable(Type.String({ format: 'date-time' })),
    cause: Type.String(),
    checks: Type.Integer(),
    duration_s: nullable(Type.Integer()),
    caused_by: Type.Optional(Type.String({ description: 'the parent target (depends_on) that was down when it opened: its alerts were the parent\'s' })),
  },
  { additionalProperties: true },
);

const RouteStatusSchema = Type.Object({
  path: Type.String(),
  status_code: Type.Integer(),
  ok: Type.Boolean(),
  checked_at: Type.String({ format: 'date-time' }),
  response_time_ms: Type.Integer(),
  error: Type.Optional(Type.String()),
});

const DnsStatusSchema = Type.Object({
  name: Type.String(),
  record_type: Type.String(),
  expected: Type.Array(Type.String()),
  actual: Type.Array(Type.String()),
  matches: Type.Boolean(),
  checked_at: Type.String({ format: 'date-time' }),
  error: Type.Optional(Type.String()),
});

const VantagePointSchema = Type.Object({
  name: Type.String({ description: 'the instance (this one) or the mesh peer, as the config names it' }),
  self: Type.Optional(Type.Boolean({ description: 'present (true) on this instance\'s own point' })),
  status: nullable(Type.String({ description: 'its latest status; null without a usable answer' })),
  checked_at: nullable(Type.String({ format: 'date-time' })),
  error: Type.Optional(Type.String({ description: 'why there is no vote: no answer, stale, not polled yet, not checked yet' })),
});

export const TargetStatusSchema = Type.Object({
  label: Type.String(),
  latest: nullable(SnapshotSchema),
  recent: Type.Array(SnapshotSchema, { maxItems: 10 }),
  uptime_24h: nullable(Type.Number()),
  uptime_7d: nullable(Type.Number()),
  latency_24h: Type.Optional(LatencySchema),
  tls: Type.Optional(open('latest TLS certificate check (docs/monitor.md)')),
  test_staleness: Type.Optional(open('test staleness assessment (docs/monitor.md)')),
  current_incident: Type.Optional(IncidentSchema),
  caused_by: Type.Optional(Type.String({ description: 'while the open incident was caused by a parent target (depends_on): that parent' })),
  incidents: Type.Optional(Type.Array(IncidentSchema, { maxItems: 10 })),
  route_status: Type.Optional(Type.Array(RouteStatusSchema)),
  dns_status: Type.Optional(Type.Array(DnsStatusSchema)),
  whois: Type.Optional(open('latest WHOIS check (docs/monitor.md)')),
  test_duration_drift: Type.Optional(open('test duration drift warning (docs/monitor.md)')),
  vantage_points: Type.Optional(Type.Array(VantagePointSchema, { description: 'with a mesh: each vantage point\'s latest status, this instance first (docs/monitor.md)' })),
  down_from: Type.Optional(Type.Array(Type.String(), { description: 'the vantage points whose latest result is down; omitted when none' })),
  regional: Type.Optional(Type.Boolean({ description: 'present (true) when down from fewer vantage points than the confirm quorum' })),
  heartbeat: Type.Optional(open('a heartbeat target: schedule or period_s, grace_s, watching_since, last_ping_at, last_ok, last_start_at, running, late_after (docs/monitor.md#heartbeats)')),
  ping_url: Type.Optional(Type.String({ description: 'a heartbeat target\'s ping URL (GET /api/status/{target} only; the key in it is a secret)' })),
});

export const StatusAllSchema = Type.Object({ targets: Type.Record(Type.String(), TargetStatusSchema) });

const BucketSchema = Type.Object({
  start: Type.String({ format: 'date-time' }),
  count: Type.Integer(),
  min: Type.Optional(Type.Number()),
  mean: Type.Optional(Type.Number()),
  p50: Type.Optional(Type.Number()),
  p95: Type.Optional(Type.Number()),
  p99: Type.Optional(Type.Number()),
  max: Type.Optional(Type.Number()),
});

export const TrendSchema = Type.Object({
  target: Type.String(),
  window_hours: Type.Integer({ minimum: 0 }),
  bucket_minutes: Type.Integer({ minimum: 0 }),
  buckets: Type.Array(BucketSchema),
  overall: nullable(LatencySchema),
  baseline: nullable(LatencySchema),
});

export const IdentitySchema = open('instance identity: name, version, started_at, targets (count)');

export const PeerStatusSchema = Type.Object({
  instance: IdentitySchema,
  targets: Type.Record(Type.String(), open('target summary: label, status, response_time_ms, checked_at; with confirm also confirmed and, while an incident is open, incident {started_at, alerted}')),
  peers: Type.Record(Type.String(), open('peer summary: status, last_seen, latency_ms')),
});

export const MeshSchema = Type.Object({
  instances: Type.Record(Type.String(), open('this instance as in peer status, a peer\'s cached status, or {status, last_seen, error}')),
});
