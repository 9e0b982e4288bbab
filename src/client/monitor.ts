// Typed client of the health monitor API, used by `mkt monitor`.
import type { HttpClient } from './http.js';
import type { LatencyStats, SlaReport, Snapshot, TrendBucket } from '../schemas/monitor.js';

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
  /** Heartbeat targets only: where pings go (`/ping/{key}`); the key is a secret. */
  ping_url?: string;
} & Record<string, unknown>;

export interface TrendJson {
  target: string;
  window_hours: number;
  bucket_minutes: number;
  buckets: TrendBucket[];
  overall: LatencyJson | null;
  baseline: LatencyJson | null;
}

export type SlaReportJson = SlaReport;

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
