// Which heartbeat target a ping key belongs to: the key from the configuration, or the one
// generated once and kept in the store (so every instance of a cluster, and every restart, knows
// the same key). Refreshed when the configuration is applied.
import type { MonitorConfig } from '../../../src/config/monitor.js';
import type { SqlHeartbeats } from '../../../src/store/monitor-heartbeats.js';

/** What `PingKeys.targetNow` answers while the keys are being read again. */
export const PENDING = Symbol('pending');

export class PingKeys {
  private byKey = new Map<string, string>();
  private byTarget = new Map<string, string>();
  private ready: Promise<void> = Promise.resolve();
  private refreshing = false;

  constructor(
    private readonly store: SqlHeartbeats,
    private readonly now: () => number,
  ) {}

  /**
   * Reads (and, for targets seen the first time, makes) every heartbeat target's key; the maps
   * are swapped whole when done, so lookups meanwhile answer from the previous configuration.
   */
  refresh(config: MonitorConfig): Promise<void> {
    const next = (async (): Promise<void> => {
      const targets = config.targets.filter((t) => t.heartbeat);
      const stored = new Map((await this.store.states(targets.map((t) => t.name))).map((s) => [s.target, s.key]));
      const byKey = new Map<string, string>();
      const byTarget = new Map<string, string>();
      for (const t of targets) {
        const key = t.heartbeat!.pingKey ?? stored.get(t.name) ?? (await this.store.ensure(t.name, this.now())).key;
        // The row (and its first sighting) exists even for a key from the configuration.
        if (!stored.has(t.name) && t.heartbeat!.pingKey !== undefined) await this.store.ensure(t.name, this.now());
        byKey.set(key, t.name);
        byTarget.set(t.name, key);
      }
      this.byKey = byKey;
      this.byTarget = byTarget;
    })();
    // A failed refresh leaves the previous maps; the caller logs it.
    this.refreshing = true;
    const ready = (this.ready = next.catch(() => undefined).then(() => {
      // A later refresh has taken over: it clears the flag when it ends.
      if (this.ready === ready) this.refreshing = false;
    }));
    return next;
  }

  /** The target a key pings, or undefined. */
  async target(key: string): Promise<string | undefined> {
    await this.ready;
    return this.byKey.get(key);
  }

  /**
   * The target a key pings, answered at once when no refresh is under way (a ping's lookup then
   * costs no promise); `pending` while one is, so the caller awaits `target` instead.
   */
  targetNow(key: string): string | undefined | typeof PENDING {
    return this.refreshing ? PENDING : this.byKey.get(key);
  }

  /** The key of a heartbeat target, or undefined. */
  async keyOf(target: string): Promise<string | undefined> {
    await this.ready;
    return this.byTarget.get(target);
  }
}
