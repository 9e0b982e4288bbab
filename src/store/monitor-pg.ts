// The monitor store on PostgreSQL (MKT_DATABASE_URL), shared by every instance of a cluster: the
// one SQL adapter (monitor-sql.ts) plus what only a cluster needs — the notices of recorded checks
// for the other instances' status caches, the raw floor heard from the instance that pruned, and
// the daily prune run once across the cluster.
import type { SqlDatabase } from './sql.js';
import type { LimiterWindows } from './limiter-windows.js';
import { SqlLimiterWindows } from './limiter-windows-sql.js';
import type { Snapshot } from '../schemas/monitor.js';
import { MONITOR_PG_MIGRATIONS } from './monitor-migrations-pg.js';
import { FLOOR_CHANNEL, SqlMonitorStore } from './monitor-sql.js';
import { DAY, floorTo } from './monitor-rollups.js';

/** Every recorded health check, for the status caches of the other instances (NOTIFY payload: a JSON array). */
export const CHECKS_CHANNEL = 'mkt_monitor_checks';
/** PostgreSQL refuses a NOTIFY payload of 8,000 bytes or more. */
const NOTIFY_MAX = 7_000;

/** A recorded check as other instances hear of it: enough to count it (details stay in the store). */
export interface CheckNotice {
  /** The instance that recorded it. */
  from: string;
  target: string;
  snapshot: Snapshot;
}

export class PgMonitorStore extends SqlMonitorStore {
  private unlisten: (() => void)[] = [];
  /** Checks recorded here and not yet announced; sent together every 100 ms. */
  private notices: CheckNotice[] = [];
  private noticeTimer: NodeJS.Timeout | undefined;
  private sending: Promise<void> | undefined;

  private constructor(
    sql: SqlDatabase,
    windows: LimiterWindows,
    private readonly instanceId: string,
  ) {
    super(sql, windows, 0);
  }

  /** `instanceId` names this instance in the check notices it sends. */
  static async open(sql: SqlDatabase, instanceId = 'store'): Promise<PgMonitorStore> {
    await sql.migrate('monitor', { sqlite: [], postgres: MONITOR_PG_MIGRATIONS });
    const store = new PgMonitorStore(sql, await SqlLimiterWindows.open(sql), instanceId);
    await store.readFloor();
    store.unlisten.push(await sql.listen(FLOOR_CHANNEL, () => void store.readFloor().catch(() => undefined)));
    return store;
  }

  /** Calls `fn` with every batch of checks recorded by the other instances. */
  async onChecks(fn: (notices: CheckNotice[]) => void): Promise<void> {
    this.unlisten.push(
      await this.sql.listen(CHECKS_CHANNEL, (payload) => {
        if (!payload) return; // the listener reconnected: nothing to count
        try {
          const notices = (JSON.parse(payload) as CheckNotice[]).filter((n) => n.from !== this.instanceId);
          if (notices.length) fn(notices);
        } catch {
          // a foreign payload on our channel: ignored
        }
      }),
    );
  }

  protected override recorded(target: string, snapshots: readonly Snapshot[]): void {
    for (const s of snapshots) this.announce(target, s);
  }

  private announce(target: string, s: Snapshot): void {
    const snapshot: Snapshot = { status: s.status, checked_at: s.checked_at, response_time_ms: s.response_time_ms };
    if (s.maintenance) snapshot.maintenance = true;
    this.notices.push({ from: this.instanceId, target, snapshot });
    this.noticeTimer ??= setTimeout(() => {
      this.noticeTimer = undefined;
      this.sending = this.flushNotices().catch(() => undefined);
    }, 100);
    this.noticeTimer.unref();
  }

  private async flushNotices(): Promise<void> {
    const all = this.notices;
    this.notices = [];
    let batch: CheckNotice[] = [];
    let size = 2;
    for (const n of all) {
      const len = JSON.stringify(n).length + 1;
      if (size + len > NOTIFY_MAX && batch.length) {
        await this.sql.notify(CHECKS_CHANNEL, JSON.stringify(batch));
        batch = [];
        size = 2;
      }
      batch.push(n);
      size += len;
    }
    if (batch.length) await this.sql.notify(CHECKS_CHANNEL, JSON.stringify(batch));
  }

  /** Once a day across the cluster (the first instance to claim the day runs it); the others hear the new raw floor. */
  override async prune(cut: { rawBeforeMs: number; rollupsBeforeMs: number }): Promise<number> {
    let removed = 0;
    await this.sql.exclusive(
      'monitor prune',
      async () => {
        removed = await super.prune(cut);
      },
      { period: floorTo(cut.rawBeforeMs, DAY) },
    );
    return removed;
  }

  override async close(): Promise<void> {
    clearTimeout(this.noticeTimer);
    if (this.notices.length) this.sending = this.flushNotices().catch(() => undefined);
    await this.sending;
    for (const u of this.unlisten.splice(0)) u();
    await super.close();
  }
}
