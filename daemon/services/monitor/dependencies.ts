// Target dependencies (`depends_on`) as the check engine reads them: which parent of a target is
// down (has an open incident in the store, so only a confirmed outage suppresses), which is about
// to be, which children a parent's alert names, and when a suppressed child's own alerting began.
import type { MonitorConfig, TargetConfig } from '../../../src/config/monitor.js';
import type { Incident, MonitorStore } from '../../../src/store/monitor.js';

export class Dependencies {
  private children = new Map<string, TargetConfig[]>();
  private byName = new Map<string, TargetConfig>();
  private incidentThreshold = 3;

  constructor(private readonly store: MonitorStore) {}

  apply(config: MonitorConfig): void {
    this.incidentThreshold = config.incidentThreshold;
    this.byName = new Map(config.targets.map((t) => [t.name, t]));
    this.children = new Map();
    for (const t of config.targets) {
      for (const p of t.dependsOn ?? []) {
        const list = this.children.get(p);
        if (list) list.push(t);
        else this.children.set(p, [t]);
      }
    }
  }

  childrenOf(parent: string): readonly TargetConfig[] {
    return this.children.get(parent) ?? [];
  }

  /** The first parent (in `depends_on` order) with an open incident: the child's outage is its. */
  async downParent(t: TargetConfig): Promise<string | undefined> {
    for (const p of t.dependsOn ?? []) if (this.byName.has(p) && (await this.store.currentIncident(p))) return p;
    return undefined;
  }

  /**
   * A parent that may be about to open the incident a child reaching its threshold has: its latest
   * checks are down but fewer than its threshold, or it has not been checked since the child's
   * down streak began (`sinceMs`: a child checked a moment before its parent sees only the
   * parent's last good check). The child waits for it rather than alerting on its own. Bounded:
   * once the parent's streak reaches its threshold without an incident (a mesh quorum not met),
   * or its latest check is stale (its next one overdue), it no longer holds the child.
   */
  async pendingParent(t: TargetConfig, nowMs: number, sinceMs: number): Promise<string | undefined> {
    for (const name of t.dependsOn ?? []) {
      const p = this.byName.get(name);
      if (!p) continue;
      const threshold = p.incidentThreshold ?? this.incidentThreshold;
      const recent = await this.store.recent(name, threshold);
      const latest = recent[0];
      if (!latest || latest.maintenance) continue;
      const checkedAt = Date.parse(latest.checked_at);
      if (checkedAt < nowMs - 2 * p.intervalMs - p.timeoutMs) continue;
      if (latest.status !== 'down') {
        if (checkedAt < sinceMs) return name;
        continue;
      }
      let streak = 0;
      for (const s of recent) {
        if (s.status !== 'down' || s.maintenance) break;
        streak++;
      }
      if (streak < threshold) return name;
    }
    return undefined;
  }

  /** The children of `parent` whose latest check is down: the ones its alert names. */
  async affected(parent: string): Promise<string[]> {
    const out: string[] = [];
    for (const c of this.childrenOf(parent)) {
      const latest = (await this.store.recent(c.name, 1))[0];
      if (latest && !latest.maintenance && latest.status === 'down') out.push(c.name);
    }
    return out;
  }

  /**
   * When a child's incident (opened `caused_by` a parent) began to alert on its own: the end of the
   * parent's first incident since the child's start (the one it opened under); the child's start
   * if that one is gone (pruned) or still open.
   */
  async releasedAt(child: Incident, nowMs: number): Promise<number> {
    const start = Date.parse(child.started_at);
    if (!child.caused_by) return start;
    const [parent] = await this.store.incidentsBetween(child.caused_by, start, nowMs + 1, 1);
    return parent?.ended_at ? Date.parse(parent.ended_at) : start;
  }
}

/** Which reminder is due `nowMs` for an incident alerting since `sinceMs`: 0 before the first. */
export function reminderDue(everyMs: number, sinceMs: number, nowMs: number): number {
  return everyMs > 0 && nowMs >= sinceMs ? Math.floor((nowMs - sinceMs) / everyMs) : 0;
}
