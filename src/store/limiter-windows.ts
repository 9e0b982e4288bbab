// LimiterWindows: the store side of every limiter (rate limits, sign-in and abuse guards). Windows
// live in the service's database, so they survive restarts and instances share them. The store only
// reads and writes rows; whether a slot is granted is decided in daemon/plugins/limiter-window.ts,
// inside a transaction that locks the window first.

/** One stored window. */
export interface WindowRow {
  /** Start of the window (ms since the epoch). */
  windowStart: number;
  /** Slots taken in it. */
  taken: number;
}

/** Row operations on the windows: the store itself (autocommit) or one open transaction. */
export interface LimiterRows {
  /**
   * Inside a transaction: holds every other transaction that locks the same window until this one
   * ends, so a read-decide-write on it cannot interleave with another instance's.
   */
  lockWindow(scope: string, key: string): Promise<void>;
  /** The key's stored window, whether current or over; undefined when none is stored. */
  window(scope: string, key: string): Promise<WindowRow | undefined>;
  /** Stores the key's window (inserted, or replacing the stored one). */
  putWindow(scope: string, key: string, row: WindowRow): Promise<void>;
  /** Gives one slot back to the window that started at `windowStart` (a newer window is left alone). */
  release(scope: string, key: string, windowStart: number): Promise<void>;
  /** Forgets the scope's windows that started before `before`; returns how many. */
  prune(scope: string, before: number): Promise<number>;
}

export interface LimiterWindows extends LimiterRows {
  /** Runs `fn` in one transaction on the windows (rerun on PostgreSQL after a serialization failure). */
  transaction<T>(fn: (tx: LimiterRows) => Promise<T>): Promise<T>;
}
