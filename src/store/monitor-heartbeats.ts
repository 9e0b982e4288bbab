// Heartbeat targets' state in the monitor store: each target's ping key (generated once, shared
// by every instance on the store) and its last signals, which decide whether it is late. The
// snapshots of each signal go to the history like any check's (monitor-sql.ts).
import { randomBytes } from 'node:crypto';
import type { SqlDatabase, SqlExecutor } from './sql.js';
import { sqlText } from './sql-text.js';

export interface HeartbeatState {
  target: string;
  /** The stored (generated) ping key; a key in the configuration takes precedence over it. */
  key: string;
  /** When the store first saw the target, epoch ms: lateness counts from here until the first ping. */
  since: number;
  /** The last `/start`, epoch ms. */
  lastStart?: number;
  /** The last end of a run (success, fail or an exit status), epoch ms. */
  lastEnd?: number;
  /** Whether that end was a success. */
  lastOk?: boolean;
  /** Why that end was a failure. */
  lastError?: string;
}

export type HeartbeatSignal = { kind: 'start' } | { kind: 'end'; ok: boolean; error?: string };

interface Row {
  target: string;
  ping_key: string;
  since: number;
  last_start: number | null;
  last_end: number | null;
  last_ok: number | null;
  last_error: string | null;
}

/** A fresh ping key: 22 URL-safe characters (128 bits). */
export function newPingKey(): string {
  return randomBytes(16).toString('base64url');
}

function state(r: Row): HeartbeatState {
  const s: HeartbeatState = { target: r.target, key: r.ping_key, since: Number(r.since) };
  if (r.last_start !== null) s.lastStart = Number(r.last_start);
  if (r.last_end !== null) s.lastEnd = Number(r.last_end);
  if (r.last_ok !== null) s.lastOk = Number(r.last_ok) === 1;
  if (r.last_error !== null) s.lastError = r.last_error;
  return s;
}

const COLS = 'target, ping_key, since, last_start, last_end, last_ok, last_error';

export class SqlHeartbeats {
  constructor(private readonly sql: SqlDatabase) {}

  /**
   * The target's state, made the first time it is asked for with a generated key and `nowMs` as
   * its first sighting. Instances racing to make it all read the one row that won.
   */
  async ensure(target: string, nowMs: number): Promise<HeartbeatState> {
    await this.sql.run('INSERT INTO heartbeats (target, ping_key, since) VALUES (?, ?, ?) ON CONFLICT (target) DO NOTHING', [target, newPingKey(), nowMs]);
    const row = await this.sql.get<Row>(sqlText`SELECT ${COLS} FROM heartbeats WHERE target = ?`, [target]);
    if (!row) throw new Error(`the heartbeat state of ${target} vanished as it was made`);
    return state(row);
  }

  /** Every stored state of the given targets (one statement). */
  async states(targets: readonly string[]): Promise<HeartbeatState[]> {
    if (targets.length === 0) return [];
    const out: HeartbeatState[] = [];
    // Bound parameters in slices: SQLite takes at most 32766 in one statement.
    for (let i = 0; i < targets.length; i += 500) {
      const slice = targets.slice(i, i + 500);
      out.push(...(await this.sql.all<Row>(`SELECT ${COLS} FROM heartbeats WHERE target IN (${slice.map(() => '?').join(', ')})`, slice)).map(state));
    }
    return out;
  }

  async get(target: string): Promise<HeartbeatState | undefined> {
    const row = await this.sql.get<Row>(sqlText`SELECT ${COLS} FROM heartbeats WHERE target = ?`, [target]);
    return row ? state(row) : undefined;
  }

  /** Records a signal at `atMs`; answers the state as it was before (a success after a start times the run). */
  async signal(target: string, signal: HeartbeatSignal, atMs: number): Promise<HeartbeatState | undefined> {
    return this.sql.transaction(async (tx) => (await this.signalAll(tx, target, [{ signal, at: atMs }])).before[0]);
  }

  /**
   * Inside a transaction: records signals in order with one read and one write of the row; answers
   * the state before each, and after the last (undefined throughout for a target never seen).
   */
  async signalAll(tx: SqlExecutor, target: string, signals: readonly { signal: HeartbeatSignal; at: number }[]): Promise<{ before: (HeartbeatState | undefined)[]; state: HeartbeatState | undefined }> {
    // Read, then written whole: under the target's lock, so instances of a cluster take turns.
    await tx.lockWithNext(`monitor:${target}`);
    const row = await tx.get<Row>(sqlText`SELECT ${COLS} FROM heartbeats WHERE target = ?`, [target]);
    if (!row) return { before: signals.map(() => undefined), state: undefined };
    let s = state(row);
    const before: HeartbeatState[] = [];
    for (const { signal, at } of signals) {
      before.push(s);
      if (signal.kind === 'start') s = { ...s, lastStart: at };
      else {
        // Made field by field, not spread then `delete`d: a deleted field turns V8's object into
        // a slow dictionary, once a ping.
        const next: HeartbeatState = { target: s.target, key: s.key, since: s.since, lastEnd: at, lastOk: signal.ok };
        if (s.lastStart !== undefined) next.lastStart = s.lastStart;
        if (!signal.ok) next.lastError = signal.error ?? 'failed';
        s = next;
      }
    }
    await tx.run('UPDATE heartbeats SET last_start = ?, last_end = ?, last_ok = ?, last_error = ? WHERE target = ?', [s.lastStart ?? null, s.lastEnd ?? null, s.lastOk === undefined ? null : s.lastOk ? 1 : 0, s.lastError ?? null, target]);
    return { before, state: s };
  }
}
