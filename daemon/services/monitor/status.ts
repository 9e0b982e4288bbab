// TargetStatus as the spec shapes it: always-present fields, and the optional ones omitted
// exactly when the spec says (not configured, nothing recorded, or empty). Built per target
// from the store; status-cache.ts keeps them.
import type { TargetConfig } from '../../../src/config/monitor.js';
import type { LatencyStats, MonitorStore, Snapshot } from '../../../src/store/monitor.js';
import { pct, upAndTotal, type Uptime } from '../../../src/monitor/uptime.js';
import { durationDrift, staleness } from './checks/tests.js';
import type { MaintenanceOccurrence, MaintenanceSchedule } from './maintenance.js';
import { heartbeatJson } from './checks/heartbeat.js';

export const RECENT_LIMIT = 10;
export const INCIDENT_LIMIT = 10;
const DAY = 86_400_000;

export type TargetStatus = Record<string, unknown> & { label: string; latest: Snapshot | null; recent: Snapshot[] };

/** The uptime windows of a status, by field name and length in days (from rollups plus raw edges). */
export const UPTIME_WINDOWS = [
  ['uptime_24h', 1],
  ['uptime_7d', 7],
  ['uptime_30d', 30],
  ['uptime_90d', 90],
  ['uptime_365d', 365],
] as const;
export type UptimeField = (typeof UPTIME_WINDOWS)[number][0];

export interface WindowStats {
  uptime: Record<UptimeField, Uptime>;
  latency_24h: LatencyStats | null;
}

/** The statistics over the uptime windows and the 24-hour latency: the expensive part of a status. */
export async function windowStats(store: MonitorStore, target: string, nowMs: number): Promise<WindowStats> {
  const uptime = {} as WindowStats['uptime'];
  const counts = await store.countsMany(target, UPTIME_WINDOWS.map(([, days]) => [nowMs - days * DAY, Infinity] as const));
  UPTIME_WINDOWS.forEach(([field], i) => (uptime[field] = upAndTotal(counts[i]!)));
  return { uptime, latency_24h: await store.latency(target, nowMs - DAY) };
}

/** A maintenance occurrence as the API shows it. */
function occurrenceJson(o: MaintenanceOccurrence): Record<string, string> {
  return { name: o.name, title: o.title, start: new Date(o.start).toISOString(), end: new Date(o.end).toISOString() };
}

/** How far ahead a status announces the next maintenance. */
const UPCOMING_MS = 7 * DAY;

/** What a caller already holds; the rest is read from the store. */
export interface StatusParts {
  windows?: WindowStats;
  schedule?: MaintenanceSchedule;
  /** The last RECENT_LIMIT snapshots, most recent first. */
  recent?: Snapshot[];
}

export async function buildTargetStatus(store: MonitorStore, t: TargetConfig, nowMs: number, parts: StatusParts = {}): Promise<TargetStatus> {
  const recent = parts.recent ?? (await store.recent(t.name, RECENT_LIMIT));
  const w = parts.windows ?? (await windowStats(store, t.name, nowMs));
  const schedule = parts.schedule;
  const s: TargetStatus = { label: t.label, latest: recent[0] ?? null, recent };
  for (const [field] of UPTIME_WINDOWS) s[field] = pct(w.uptime[field]);
  if (w.latency_24h) s.latency_24h = w.latency_24h;
  const active = schedule?.activeAt(t.name, nowMs);
  if (active) s.maintenance = occurrenceJson(active);
  const next = schedule?.next(t.name, active ? active.end : nowMs);
  if (next && next.start - nowMs <= UPCOMING_MS) s.next_maintenance = occurrenceJson(next);
  if (t.tls) {
    const tls = await store.result(t.name, 'tls');
    if (tls) s.tls = tls;
  }
  if (t.tests) {
    const runs = await store.testRuns(t.name, 20);
    s.test_staleness = staleness(t.tests, runs, await store.lastPassingRun(t.name), nowMs);
    const drift = durationDrift(runs);
    if (drift) s.test_duration_drift = drift;
  }
  if (t.heartbeat) s.heartbeat = heartbeatJson(t, await store.heartbeats.get(t.name));
  const current = await store.currentIncident(t.name);
  if (current) s.current_incident = current;
  // `depends_on`: the parent whose outage this one's is (its alerts were the parent's).
  if (current?.caused_by) s.caused_by = current.caused_by;
  const incidents = await store.incidents(t.name, INCIDENT_LIMIT);
  if (incidents.length) s.incidents = incidents;
  if (t.routes.length) {
    const listed = new Set(t.routes.map((r) => r.path));
    const routes = (await store.routes(t.name)).filter((r) => listed.has(r.path));
    if (routes.length) s.route_status = routes;
  }
  if (t.dns.length) {
    const listed = new Set(t.dns.map((d) => `${d.name} ${d.type} ${d.expected.join(",")}`));
    const dns = (await store.dns(t.name)).filter((d) => listed.has(`${d.name} ${d.record_type} ${d.expected.join(",")}`));
    if (dns.length) s.dns_status = dns;
  }
  if (t.whois) {
    const whois = await store.result(t.name, 'whois');
    if (whois) s.whois = whois;
  }
  return s;
}
