// Which instance of a monitor cluster checks which target: a lease per target in PostgreSQL (its
// owner and expiry, in the database's clock so that instances' clocks may disagree), and a
// heartbeat row per instance. Statements only; the policy (fair share, renewal, hand-over) is
// daemon/services/monitor/cluster.ts.
import type { SqlDatabase } from './sql.js';
import { sqlText } from './sql-text.js';

/** The database's clock in ms: every lease time is read and written against it, never a host's. */
const NOW_MS = '(extract(epoch from clock_timestamp()) * 1000)::bigint';
/** Heartbeat rows of instances gone this long are deleted (they are only shown while live). */
const FORGET_AFTER_MS = 86_400_000;

export interface InstanceRow {
  id: string;
  name: string;
  config_hash: string;
  targets: number;
  version: string;
  started_at: string;
  /** The database's clock at its last heartbeat. */
  seen_at: number;
}

export interface InstanceInfo {
  name: string;
  configHash: string;
  targets: number;
  version: string;
  startedAt: string;
}

export class MonitorLeases {
  constructor(
    private readonly sql: SqlDatabase,
    readonly instanceId: string,
  ) {}

  /** Records this instance as live now and answers every instance seen within `ttlMs`, this one included. */
  async heartbeat(me: InstanceInfo, ttlMs: number): Promise<InstanceRow[]> {
    await this.sql.run(
      sqlText`INSERT INTO monitor_instances (id, name, config_hash, targets, version, started_at, seen_at) VALUES (?, ?, ?, ?, ?, ?, ${NOW_MS})
       ON CONFLICT (id) DO UPDATE SET name = excluded.name, config_hash = excluded.config_hash, targets = excluded.targets, seen_at = excluded.seen_at`,
      [this.instanceId, me.name, me.configHash, me.targets, me.version, me.startedAt],
    );
    return this.sql.all<InstanceRow>(sqlText`SELECT id, name, config_hash, targets, version, started_at, seen_at FROM monitor_instances WHERE seen_at > ${NOW_MS} - ? ORDER BY id`, [ttlMs]);
  }

  /** Deletes the heartbeat rows of instances long gone. */
  async forgetDead(): Promise<void> {
    await this.sql.run(sqlText`DELETE FROM monitor_instances WHERE seen_at < ${NOW_MS} - ?`, [FORGET_AFTER_MS]);
  }

  /** Makes a (free) lease row for each target that has none. */
  async ensure(targets: readonly string[]): Promise<void> {
    await this.sql.run('INSERT INTO monitor_leases (target) SELECT unnest(?::text[]) ON CONFLICT (target) DO NOTHING', [targets]);
  }

  /**
   * Extends this instance's unexpired leases of `targets` by `ttlMs` and answers them; a lease
   * that expired is not renewed (another instance may hold it now). Leases of targets no longer
   * in `targets` are given up.
   */
  async renew(targets: readonly string[], ttlMs: number): Promise<string[]> {
    await this.sql.run("UPDATE monitor_leases SET owner = '', expires_at = 0 WHERE owner = ? AND NOT (target = ANY(?::text[]))", [this.instanceId, targets]);
    const rows = await this.sql.all<{ target: string }>(sqlText`UPDATE monitor_leases SET expires_at = ${NOW_MS} + ? WHERE owner = ? AND expires_at > ${NOW_MS} RETURNING target`, [ttlMs, this.instanceId]);
    return rows.map((r) => r.target);
  }

  /**
   * Takes up to `n` free or expired leases among `targets` for `ttlMs`; answers those taken. Rows
   * another instance is taking at the same moment are skipped, not waited for; the order is
   * this instance's own (a hash with its id), so instances claiming together rarely collide.
   */
  async claim(targets: readonly string[], n: number, ttlMs: number): Promise<string[]> {
    if (n <= 0) return [];
    const rows = await this.sql.all<{ target: string }>(
      sqlText`UPDATE monitor_leases SET owner = ?, expires_at = ${NOW_MS} + ?
       WHERE target IN (SELECT target FROM monitor_leases WHERE target = ANY(?::text[]) AND expires_at <= ${NOW_MS} ORDER BY md5(target || ?) LIMIT ? FOR UPDATE SKIP LOCKED)
       RETURNING target`,
      [this.instanceId, ttlMs, targets, this.instanceId, n],
    );
    return rows.map((r) => r.target);
  }

  /** Gives up these leases at once (free for any instance's next claim). */
  async release(targets: readonly string[]): Promise<void> {
    if (!targets.length) return;
    await this.sql.run("UPDATE monitor_leases SET owner = '', expires_at = 0 WHERE owner = ? AND target = ANY(?::text[])", [this.instanceId, targets]);
  }

  /** At a clean stop: every lease of this instance freed and its heartbeat gone, so the others take over at their next tick. */
  async leave(): Promise<void> {
    await this.sql.run("UPDATE monitor_leases SET owner = '', expires_at = 0 WHERE owner = ?", [this.instanceId]);
    await this.sql.run('DELETE FROM monitor_instances WHERE id = ?', [this.instanceId]);
  }

  /** Unexpired leases per owner, for /api/peer/info. */
  async owners(): Promise<Map<string, number>> {
    const rows = await this.sql.all<{ owner: string; n: number }>(sqlText`SELECT owner, count(*) AS n FROM monitor_leases WHERE expires_at > ${NOW_MS} GROUP BY owner`);
    return new Map(rows.map((r) => [r.owner, Number(r.n)]));
  }
}
