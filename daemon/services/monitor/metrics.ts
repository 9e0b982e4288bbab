// GET /metrics in the Prometheus text format: check counts, each target's last status and
// response time, uptime over 24 h and 7 d, latency quantiles, and certificate/domain days left.
import type { TargetStatus } from './status.js';

function label(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

export function renderMetrics(counts: Record<string, number>, statuses: Record<string, TargetStatus>, healthCounts: Map<string, Map<string, number>> = new Map()): string {
  const out: string[] = [];
  const family = (name: string, type: string, help: string): void => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  };
  family('mkt_monitor_checks_total', 'counter', 'Checks completed since the monitor started, by kind.');
  for (const [kind, n] of Object.entries(counts)) out.push(`mkt_monitor_checks_total{kind="${label(kind)}"} ${n}`);
  family('mkt_monitor_target_checks_total', 'counter', 'Health checks of each target since the monitor started, by resulting status.');
  for (const name of Object.keys(statuses)) {
    for (const [status, n] of healthCounts.get(name) ?? []) out.push(`mkt_monitor_target_checks_total{target="${label(name)}",status="${label(status)}"} ${n}`);
  }
  family('mkt_monitor_target_up', 'gauge', '1 when the latest health check is operational or degraded, 0 when down.');
  for (const [name, s] of Object.entries(statuses)) if (s.latest) out.push(`mkt_monitor_target_up{target="${label(name)}"} ${s.latest.status === 'down' ? 0 : 1}`);
  family('mkt_monitor_target_status', 'gauge', 'The latest health status of each target (1 for the current status).');
  for (const [name, s] of Object.entries(statuses)) if (s.latest) out.push(`mkt_monitor_target_status{target="${label(name)}",status="${label(s.latest.status)}"} 1`);
  family('mkt_monitor_response_time_ms', 'gauge', 'Response time of the latest health check in milliseconds (0 when it failed).');
  for (const [name, s] of Object.entries(statuses)) if (s.latest) out.push(`mkt_monitor_response_time_ms{target="${label(name)}"} ${s.latest.response_time_ms}`);
  family('mkt_monitor_uptime_ratio', 'gauge', 'Share of checks that were up over the window.');
  for (const [name, s] of Object.entries(statuses)) {
    for (const [w, v] of [['24h', s.uptime_24h], ['7d', s.uptime_7d]] as const) {
      if (typeof v === 'number') out.push(`mkt_monitor_uptime_ratio{target="${label(name)}",window="${w}"} ${v / 100}`);
    }
  }
  family('mkt_monitor_latency_24h_ms', 'gauge', 'Response-time quantiles over 24 hours (checks with a response time above 0).');
  for (const [name, s] of Object.entries(statuses)) {
    const l = s.latency_24h as { p50: number; p95: number; p99: number } | undefined;
    if (l) for (const [q, v] of [['0.5', l.p50], ['0.95', l.p95], ['0.99', l.p99]] as const) out.push(`mkt_monitor_latency_24h_ms{target="${label(name)}",quantile="${q}"} ${v}`);
  }
  family('mkt_monitor_tls_days_left', 'gauge', 'Days until the TLS certificate expires (latest TLS check).');
  for (const [name, s] of Object.entries(statuses)) {
    const d = (s.tls as { days_left?: number | null } | undefined)?.days_left;
    if (typeof d === 'number') out.push(`mkt_monitor_tls_days_left{target="${label(name)}"} ${d}`);
  }
  family('mkt_monitor_domain_days_left', 'gauge', 'Days until the domain registration expires (latest WHOIS check).');
  for (const [name, s] of Object.entries(statuses)) {
    const d = (s.whois as { days_left?: number | null } | undefined)?.days_left;
    if (typeof d === 'number') out.push(`mkt_monitor_domain_days_left{target="${label(name)}"} ${d}`);
  }
  family('mkt_monitor_open_incidents', 'gauge', '1 when the target is in an incident.');
  for (const [name, s] of Object.entries(statuses)) out.push(`mkt_monitor_open_incidents{target="${label(name)}"} ${s.current_incident ? 1 : 0}`);
  return out.join('\n') + '\n';
}
