// Typed client of the health monitor API, used by `mkt monitor`.
import type { HttpClient } from './http.js';
import type { LatencyStats, Snapshot, TrendBucket } from '../schemas/monitor.js';

export type SnapshotJson = Snapshot;
export type LatencyJson = LatencyStats;

export type TargetStatusJson = {
  label: string;
  latest: SnapshotJson | null;
  recent: SnapshotJson[];
  uptime_24h: number | null;
  uptime_7d: number | null;
  latency_24h?: LatencyJson;
  current_incident?: { started_at: string; cause: string };
} & Record<string, unknown>;

export interface TrendJson {
  target: string;
  window_hours: number;
  bucket_minutes: number;
  buckets: TrendBucket[];
  overall: LatencyJson | null;
  baseline: LatencyJson | null;
}

export interface SlaReportJson {
  target: string;
  label: string;
  from: string;
  to: string;
  generated_at: string;
  uptime: number | null;
  downtime_minutes: number;
  checks: { operational: number; degraded: number; down: number; maintenance: number; counted: number };
  minutes: { period: number; operational: number; degraded: number; down: number; maintenance: number; no_data: number };
  incident_count: number;
  incidents: { id: number; status: string; started_at: string; ended_at: string | null; cause: string; checks: number; duration_s: number | null; in_period_s: number }[];
  latency: LatencyJson | null;
  maintenance_windows: { name: string; title: string; start: string; end: string }[];
}

export class MonitorClient {
  constructor(readonly http: HttpClient) {}
  health(): Promise<{ status: string; version: string }> {
    return this.http.json('GET', '/api/health');
  }
  statusAll(): Promise<{ targets: Record<string, TargetStatusJson> }> {
    return this.http.json('GET', '/api/status');
  }
  status(target: string): Promise<TargetStatusJson> {
    return this.http.json('GET', `/api/status/${encodeURIComponent(target)}`);
  }
  trends(target: string, hours?: number, bucketMinutes?: number): Promise<TrendJson> {
    return this.http.json('GET', `/api/trends/${encodeURIComponent(target)}`, { query: { hours, bucket_minutes: bucketMinutes } });
  }
  report(target: string, from?: string, to?: string): Promise<SlaReportJson> {
    return this.http.json('GET', `/api/report/${encodeURIComponent(target)}`, { query: { from, to } });
  }
  mesh(): Promise<{ instances: Record<string, Record<string, unknown>> }> {
    return this.http.json('GET', '/api/mesh');
  }
}
