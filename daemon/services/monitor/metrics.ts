// GET /metrics through prom-client, on a registry of the monitor's own: counters and a response
// time histogram fed by every recorded check, gauges read from the target statuses at scrape time.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Snapshot } from '../../../src/store/monitor.js';
import { UPTIME_WINDOWS, type TargetStatus } from './status.js';

/** The current status of every configured target, as GET /api/status serves it. */
export type StatusSource = () => Promise<Record<string, TargetStatus>>;

/** Seconds: suited to HTTP health checks, from a local 5 ms to a 10 s timeout. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Uptime windows a status carries (percent), with their `window` label values (`24h`, `7d`, ...). */
const WINDOW_LABELS = UPTIME_WINDOWS.map(([field]) => [field.slice('uptime_'.length), field] as const);

/** prom-client default metrics that are gauges despite a `_total` suffix. */
const GAUGES_NAMED_TOTAL = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

type Statuses = Record<string, TargetStatus>;

/** Unix seconds of an ISO date in `field` of a result object; undefined when absent or unparsable. */
function timestampOf(result: unknown, field: string): number | undefined {
  const v = (result as Record<string, unknown> | undefined)?.[field];
  if (typeof v !== 'string') return undefined;
  const ms = Date.parse(v);
  return Number.isFinite(ms) ? ms / 1000 : undefined;
}

export class MonitorMetrics {
  private readonly registry = new Registry();
  private readonly checks: Counter<'kind'>;
  private readonly targetChecks: Counter<'target' | 'status'>;
  private readonly maintenanceChecks: Counter<'target'>;
  private readonly duration: Histogram<'target'>;
  /** Statuses seen by a target's counter, so forget() can remove each label set. */
  private readonly seen = new Map<string, Set<string>>();
  /** The configured targets once forget() has run: a check finishing after a reload adds no removed target back. */
  private keep?: Set<string>;
  /** One status read shared by every gauge of a scrape (prom-client collects them all at once). */
  private scrape?: Promise<Statuses>;

  constructor(private readonly statuses: StatusSource) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    // Gauges named like counters, which promtool rejects; sum() of nodejs_active_handles{type} etc. gives them.
    for (const name of GAUGES_NAMED_TOTAL) this.registry.removeSingleMetric(name);
    this.checks = new Counter({ name: 'mkt_monitor_checks_total', help: 'Checks completed since the monitor started, by kind.', labelNames: ['kind'], registers });
    this.targetChecks = new Counter({ name: 'mkt_monitor_target_checks_total', help: 'Health checks of each target since the monitor started, by resulting status.', labelNames: ['target', 'status'], registers });
    this.maintenanceChecks = new Counter({ name: 'mkt_monitor_maintenance_checks_total', help: 'Health checks of each target taken inside a maintenance window since the monitor started.', labelNames: ['target'], registers });
    this.duration = new Histogram({ name: 'mkt_monitor_check_duration_seconds', help: 'Response time of health checks that got a response, in seconds.', labelNames: ['target'], buckets: DURATION_BUCKETS, registers });

    // collect() runs with the gauge as `this`: reach the shared status read through a closure.
    const read = (): Promise<Statuses> => this.current();
    const gauge = <L extends string>(name: string, help: string, labelNames: L[], fill: (s: Statuses, set: (labels: Record<L, string>, v: number) => void) => void): void => {
      new Gauge({
        name,
        help,
        labelNames,
        registers,
        async collect() {
          const s = await read();
          // Rebuilt from scratch each scrape: a target removed from the config disappears.
          this.reset();
          fill(s, (labels, v) => this.set(labels, v));
        },
      });
    };
    gauge('mkt_monitor_target_up', '1 when the latest health check is operational or degraded, 0 when down.', ['target'], (s, set) => {
      for (const [target, t] of Object.entries(s)) if (t.latest) set({ target }, t.latest.status === 'down' ? 0 : 1);
    });
    gauge('mkt_monitor_target_status', 'The latest health status of each target (1 for the current status).', ['target', 'status'], (s, set) => {
      for (const [target, t] of Object.entries(s)) if (t.latest) set({ target, status: t.latest.status }, 1);
    });
    gauge('mkt_monitor_response_time_seconds', 'Response time of the latest health check in seconds (0 when it got no response).', ['target'], (s, set) => {
      for (const [target, t] of Object.entries(s)) if (t.latest) set({ target }, t.latest.response_time_ms / 1000);
    });
    gauge('mkt_monitor_uptime_ratio', 'Share of checks that were up over the window (0 to 1).', ['target', 'window'], (s, set) => {
      for (const [target, t] of Object.entries(s)) {
        for (const [window, field] of WINDOW_LABELS) {
          const v = t[field];
          if (typeof v === 'number') set({ target, window }, v / 100);
        }
      }
    });
    gauge('mkt_monitor_tls_cert_expiry_timestamp_seconds', 'When the TLS certificate expires (latest TLS check), in Unix seconds.', ['target'], (s, set) => {
      for (const [target, t] of Object.entries(s)) {
        const at = timestampOf(t.tls, 'not_after');
        if (at !== undefined) set({ target }, at);
      }
    });
    gauge('mkt_monitor_domain_expiry_timestamp_seconds', 'When the domain registration expires (latest WHOIS check), in Unix seconds.', ['target'], (s, set) => {
      for (const [target, t] of Object.entries(s)) {
        const at = timestampOf(t.whois, 'expires_at');
        if (at !== undefined) set({ target }, at);
      }
    });
    gauge('mkt_monitor_open_incidents', 'Open incidents of the target (0 or 1).', ['target'], (s, set) => {
      for (const [target, t] of Object.entries(s)) set({ target }, t.current_incident ? 1 : 0);
    });
    gauge('mkt_monitor_in_maintenance', '1 while a maintenance window of the target is active.', ['target'], (s, set) => {
      for (const [target, t] of Object.entries(s)) set({ target }, typeof t.maintenance === 'object' && t.maintenance !== null ? 1 : 0);
    });
  }

  /** On a cluster: lease changes, leases held and statements sent to the database, read at each scrape. */
  watchCluster(read: () => { acquired: number; released: number; lost: number; held: number; statements: number }): void {
    const registers = [this.registry];
    new Counter({
      name: 'mkt_monitor_lease_changes_total',
      help: 'Target leases this instance took (acquired), handed back for balance (released) or found expired at renewal (lost).',
      labelNames: ['change'],
      registers,
      collect() {
        const s = read();
        this.reset();
        for (const change of ['acquired', 'released', 'lost'] as const) this.inc({ change }, s[change]);
      },
    });
    new Gauge({ name: 'mkt_monitor_leases_held', help: 'Targets this instance of the cluster checks now.', registers, collect() { this.set(read().held); } });
    new Counter({
      name: 'mkt_monitor_db_statements_total',
      help: 'Statements this instance sent to PostgreSQL (checks, statuses, leases).',
      registers,
      collect() {
        this.reset();
        this.inc(read().statements);
      },
    });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /**
   * Recorded results of one of the target's checks (one check's, or a group of pings'); health
   * snapshots also feed the per-target families. Counted once a run of one status in the group,
   * not once a snapshot: a burst of pings pays for one label lookup.
   */
  observe(target: string, kind: string, snapshots: readonly Snapshot[]): void {
    this.checks.inc({ kind }, snapshots.length || 1);
    if (!snapshots.length || (this.keep && !this.keep.has(target))) return;
    let statuses = this.seen.get(target);
    if (!statuses) this.seen.set(target, (statuses = new Set<string>()));
    let status = snapshots[0]!.status;
    let run = 0;
    let maintenance = 0;
    for (const s of snapshots) {
      if (s.status !== status) {
        this.targetChecks.inc({ target, status }, run);
        statuses.add(status);
        status = s.status;
        run = 0;
      }
      run++;
      if (s.response_time_ms > 0) this.duration.observe({ target }, s.response_time_ms / 1000);
      if (s.maintenance === true) maintenance++;
    }
    this.targetChecks.inc({ target, status }, run);
    statuses.add(status);
    if (maintenance) this.maintenanceChecks.inc({ target }, maintenance);
  }

  /** Drops the counters and histogram of every target not in `keep` (the configuration after a reload). */
  forget(keep: Set<string>): void {
    this.keep = new Set(keep);
    for (const [target, statuses] of this.seen) {
      if (keep.has(target)) continue;
      for (const status of statuses) this.targetChecks.remove({ target, status });
      this.duration.remove({ target });
      this.maintenanceChecks.remove({ target });
      this.seen.delete(target);
    }
  }

  /** The exposition text; serve it with `contentType`. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  private current(): Promise<Statuses> {
    if (!this.scrape) {
      const scrape = this.statuses();
      this.scrape = scrape;
      const done = (): void => {
        if (this.scrape === scrape) this.scrape = undefined;
      };
      scrape.then(done, done);
    }
    return this.scrape;
  }
}
