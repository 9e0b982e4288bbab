// StatusCache: the statuses GET /api/status serves, kept warm. A target's status is rebuilt when
// it records a result or ages out; its expensive part, the uptime and latency windows, is built
// in the background at start and, while statuses are read, rebuilt before it ages out (`start`);
// its last snapshots are kept in memory as checks record them, so a request reads the store
// only for incidents and results.
import type { MonitorConfig, TargetConfig } from '../../../src/config/monitor.js';
import type { MonitorStore, Snapshot } from '../../../src/store/monitor.js';
import { countCheck, outcomeOf } from '../../../src/monitor/uptime.js';
import type { MaintenanceSchedule } from './maintenance.js';
import { buildTargetStatus, RECENT_LIMIT, windowStats, type TargetStatus, type WindowStats } from './status.js';

/** Uptime windows move with the clock; a cached status older than this is rebuilt. */
const MAX_AGE_MS = 15_000;
/**
 * Window statistics are rebuilt inline by a request at most this often per target: a minute moves
 * a 7-day uptime by very little, and rebuilding them on every check of a thousand targets would
 * dominate GET /api/status.
 */
const WINDOW_MAX_AGE_MS = 30_000;
/** The background refresh rebuilds windows older than this, so a request rarely finds one aged out. */
const WINDOW_REFRESH_MS = 20_000;
/** How often the background refresh looks for windows to rebuild. */
const REFRESH_EVERY_MS = 5_000;
/**
 * The background refresh runs while statuses are read (a dashboard, a Prometheus scrape) and
 * stops this long after the last read: a monitor nobody reads pays for its windows once, at start.
 */
const READER_IDLE_MS = 5 * 60_000;
/** A latency window rebuilt for a new check waits at least this long before the next rebuild. */
const LATENCY_MIN_AGE_MS = 5_000;

interface CachedWindows {
  at: number;
  value: WindowStats;
  /** A timed check arrived since: percentiles cannot be updated in place. */
  stale: boolean;
}

/** The snapshot as the store returns it: optional fields only when set. */
function stored(s: Snapshot): Snapshot {
  const out: Snapshot = { status: s.status, checked_at: s.checked_at, response_time_ms: s.response_time_ms };
  if (s.details) out.details = s.details;
  if (s.error !== undefined && s.error !== null) out.error = s.error;
  if (s.maintenance === true) out.maintenance = true;
  return out;
}

/** Whether a is an ISO time of toISOString's 24-character form (YYYY-MM-DDTHH:mm:ss.sssZ). */
const isoForm = (a: string): boolean => a.length === 24 && a.charCodeAt(23) === 90 /* Z */ && a.charCodeAt(10) === 84; /* T */

/**
 * Whether the time `a` is at or before `b`. Two ISO times of toISOString's form order as their
 * text does, which spares a Date.parse of each (ten a ping, when every ping compared itself with
 * each recent snapshot); any other form is parsed.
 */
function notAfter(a: string, b: string): boolean {
  return isoForm(a) && isoForm(b) ? a <= b : Date.parse(a) <= Date.parse(b);
}

/**
 * `recent` with new snapshots in the store's order (newest check first; of equal times, the
 * later recorded first), as a new array: statuses already built keep theirs. The snapshots come
 * in the order they were recorded (a group of pings, at once).
 */
export function withRecent(recent: readonly Snapshot[], added: readonly Snapshot[]): Snapshot[] {
  const out = [...recent];
  for (const s of added) {
    // A new check is most often the newest: compared with the first, not searched for.
    const at = out.length === 0 || notAfter(out[0]!.checked_at, s.checked_at) ? 0 : out.findIndex((r) => notAfter(r.checked_at, s.checked_at));
    out.splice(at < 0 ? out.length : at, 0, stored(s));
  }
  if (out.length > RECENT_LIMIT) out.length = RECENT_LIMIT;
  return out;
}

export class StatusCache {
  private readonly entries = new Map<string, { at: number; value: TargetStatus }>();
  private readonly windows = new Map<string, CachedWindows>();
  private readonly recent = new Map<string, Snapshot[]>();
  /** Window rebuilds in flight, so a request and the refresh share one. */
  private readonly building = new Map<string, Promise<CachedWindows>>();
  /** Results recorded per target: a read that saw a result arrive while it ran is not kept as current. */
  private readonly seq = new Map<string, number>();
  private refreshing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private lastRead = -Infinity;

  constructor(
    private readonly store: MonitorStore,
    private readonly now: () => number,
    private readonly schedule?: () => MaintenanceSchedule,
    private readonly refreshEveryMs = REFRESH_EVERY_MS,
  ) {}

  /**
   * New results for the target (a check's, or a group of pings'): its status is rebuilt on the
   * next read, and health snapshots are counted into the cached uptime windows and recent
   * snapshots at once, so neither lags a check. `whole` is false for snapshots without their
   * details (recorded by another cluster instance).
   */
  invalidate(target: string, snaps: readonly Snapshot[] = [], whole = true): void {
    this.seq.set(target, (this.seq.get(target) ?? 0) + 1);
    this.entries.delete(target);
    if (!snaps.length) return;
    const ring = this.recent.get(target);
    // A check another cluster instance recorded arrives without its details: its snapshots are
    // read again from the store rather than kept short.
    if (ring && whole) this.recent.set(target, withRecent(ring, snaps));
    else this.recent.delete(target);
    const w = this.windows.get(target);
    if (!w) return;
    const windows = Object.values(w.value.uptime);
    for (const snap of snaps) {
      if (snap.maintenance) continue;
      const outcome = outcomeOf(snap.status, false);
      for (const c of windows) countCheck(c, outcome);
      if (snap.response_time_ms > 0) w.stale = true;
    }
  }

  clear(): void {
    this.entries.clear();
    this.windows.clear();
    this.recent.clear();
  }

  /** The target's windows, rebuilt when older than `maxAgeMs` (or stale percentiles old enough). */
  private async windowsOf(target: string, now: number, maxAgeMs: number): Promise<CachedWindows> {
    const w = this.windows.get(target);
    const age = w ? now - w.at : Infinity;
    if (w && age < maxAgeMs && !(w.stale && (age >= LATENCY_MIN_AGE_MS || w.value.latency_24h === null))) return w;
    let build = this.building.get(target);
    if (!build) {
      const seen = this.seq.get(target) ?? 0;
      build = windowStats(this.store, target, now)
        .then((value) => {
          // A check recorded while the windows were read may be missing from them: serve them, but
          // rebuild on the next read rather than count that check twice or never.
          const fresh: CachedWindows = { at: (this.seq.get(target) ?? 0) === seen ? now : -Infinity, value, stale: false };
          this.windows.set(target, fresh);
          return fresh;
        })
        .finally(() => this.building.delete(target));
      this.building.set(target, build);
    }
    return build;
  }

  private async recentOf(target: string): Promise<Snapshot[]> {
    for (;;) {
      const ring = this.recent.get(target);
      if (ring) return ring;
      const seen = this.seq.get(target) ?? 0;
      const read = await this.store.recent(target, RECENT_LIMIT);
      // A snapshot recorded during the read may be missing from it: read again.
      if ((this.seq.get(target) ?? 0) === seen) {
        this.recent.set(target, read);
        return read;
      }
    }
  }

  async get(t: TargetConfig): Promise<TargetStatus> {
    const now = this.now();
    this.lastRead = now;
    const hit = this.entries.get(t.name);
    if (hit && now - hit.at < MAX_AGE_MS) return hit.value;
    const seen = this.seq.get(t.name) ?? 0;
    const recent = await this.recentOf(t.name);
    const w = await this.windowsOf(t.name, now, WINDOW_MAX_AGE_MS);
    const value = await buildTargetStatus(this.store, t, now, { windows: w.value, schedule: this.schedule?.(), recent });
    if ((this.seq.get(t.name) ?? 0) === seen) this.entries.set(t.name, { at: now, value });
    return value;
  }

  async all(config: MonitorConfig): Promise<Record<string, TargetStatus>> {
    const out: Record<string, TargetStatus> = {};
    for (const t of config.targets) out[t.name] = await this.get(t);
    return out;
  }

  /**
   * One pass over the targets, a target a turn of the event loop so requests interleave: loads
   * missing recent snapshots and rebuilds windows that will soon age out. Overlapping calls
   * share the pass in flight.
   */
  refresh(targets: readonly TargetConfig[]): Promise<void> {
    this.refreshing ??= (async () => {
      try {
        for (const t of targets) {
          if (this.stopped) return;
          await this.recentOf(t.name);
          await this.windowsOf(t.name, this.now(), WINDOW_REFRESH_MS);
          await new Promise((r) => setImmediate(r));
        }
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  /**
   * Warms the cache at once (the first GET /api/status after a restart finds it warm) and keeps
   * it warm while statuses are read; a failed pass is reported and the next one tries again.
   */
  start(targets: () => readonly TargetConfig[], onError: (err: unknown) => void): void {
    this.stopped = false;
    const pass = (): void => void this.refresh(targets()).catch(onError);
    pass();
    this.timer = setInterval(() => {
      if (this.now() - this.lastRead < READER_IDLE_MS) pass();
    }, this.refreshEveryMs);
    this.timer.unref();
  }

  /** Stops the background refresh and waits for a pass in flight (before the store closes). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.refreshing?.catch(() => undefined);
  }
}
