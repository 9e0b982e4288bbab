// Limiter windows (rate limits, sign-in and abuse guards) kept in a service's database, so they
// survive restarts and instances share them; a slot is reserved in one atomic statement.
import { migrate, type Db } from './sqlite.js';

/** A window as it stands after a reservation. */
export interface Reservation {
  /** Whether the slot was taken (false: the window is full). */
  granted: boolean;
  /** Start of the window the answer is about (ms since the epoch). */
  windowStart: number;
  /** Slots taken in that window, this one included when granted. */
  count: number;
}

export interface WindowRule {
  /** A stored window that started before this instant is over (ms since the epoch). */
  expiredBefore: number;
  /** Start of the window that opens when the stored one is over or absent. */
  opensAt: number;
  /** Slots per window (at least 1). */
  limit: number;
}

/** The store side of every limiter; the limiters decide the windows, this keeps the counts. */
export interface LimiterWindows {
  /**
   * Takes one slot of `key`'s window in one atomic step: an expired or absent window is replaced by
   * a new one holding this slot; a current one grants the slot only while fewer than `limit` are taken.
   */
  reserve(scope: string, key: string, rule: WindowRule): Promise<Reservation>;
  /** Slots taken in `key`'s current window (0 when it is over or absent), without taking one. */
  taken(scope: string, key: string, expiredBefore: number): Promise<number>;
  /** Gives one slot back to the window that started at `windowStart` (a newer window is left alone). */
  release(scope: string, key: string, windowStart: number): Promise<void>;
  /** Forgets the scope's windows that started before `before`; returns how many. */
  prune(scope: string, before: number): Promise<number>;
}

const MIGRATIONS = [
  `CREATE TABLE limiter_windows (
     scope TEXT NOT NULL,
     key TEXT NOT NULL,
     window_start INTEGER NOT NULL,
     taken INTEGER NOT NULL,
     PRIMARY KEY (scope, key)
   );
   CREATE INDEX limiter_windows_by_start ON limiter_windows (scope, window_start);`,
];

export class SqliteLimiterWindows implements LimiterWindows {
  private readonly q;

  constructor(db: Db) {
    migrate(db, 'limiter', MIGRATIONS);
    this.q = {
      // Old-row values are read in SET and WHERE, so the test and the increment are one step.
      reserve: db.prepare(
        `INSERT INTO limiter_windows (scope, key, window_start, taken) VALUES (@scope, @key, @opensAt, 1)
         ON CONFLICT (scope, key) DO UPDATE SET
           window_start = CASE WHEN window_start < @expiredBefore THEN @opensAt ELSE window_start END,
           taken = CASE WHEN window_start < @expiredBefore THEN 1 ELSE taken + 1 END
         WHERE window_start < @expiredBefore OR taken < @limit
         RETURNING window_start, taken`,
      ),
      current: db.prepare('SELECT window_start, taken FROM limiter_windows WHERE scope = ? AND key = ?'),
      release: db.prepare('UPDATE limiter_windows SET taken = taken - 1 WHERE scope = ? AND key = ? AND window_start = ? AND taken > 0'),
      prune: db.prepare('DELETE FROM limiter_windows WHERE scope = ? AND window_start < ?'),
    };
  }

  async reserve(scope: string, key: string, rule: WindowRule): Promise<Reservation> {
    const taken = this.q.reserve.get({ scope, key, ...rule }) as { window_start: number; taken: number } | undefined;
    if (taken) return { granted: true, windowStart: taken.window_start, count: taken.taken };
    const full = this.q.current.get(scope, key) as { window_start: number; taken: number };
    return { granted: false, windowStart: full.window_start, count: full.taken };
  }

  async taken(scope: string, key: string, expiredBefore: number): Promise<number> {
    const row = this.q.current.get(scope, key) as { window_start: number; taken: number } | undefined;
    return row && row.window_start >= expiredBefore ? row.taken : 0;
  }

  async release(scope: string, key: string, windowStart: number): Promise<void> {
    this.q.release.run(scope, key, windowStart);
  }

  async prune(scope: string, before: number): Promise<number> {
    return this.q.prune.run(scope, before).changes;
  }
}
