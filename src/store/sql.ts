// The one SQL surface every store adapter is written against, whatever the engine: SQLite (the
// embedded default, better-sqlite3) or PostgreSQL (node-postgres with a pool). Queries use `?`
// placeholders and the SQL both engines share; an adapter branches on `engine` only where the
// dialects differ (full-text search, a few functions). Rules live above this, in domain modules
// that run inside `transaction()`; the adapters only answer questions and write rows.

export type Engine = 'sqlite' | 'postgres';

/** What a statement returns when it writes. */
export interface RunResult {
  changes: number;
}

/** Runs statements: the database itself (autocommit) or one open transaction. */
export interface SqlExecutor {
  readonly engine: Engine;
  /** Every row. */
  all<T>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** The first row, or undefined. */
  get<T>(sql: string, params?: readonly unknown[]): Promise<T | undefined>;
  /** The first column of the first row, or undefined. */
  value<T>(sql: string, params?: readonly unknown[]): Promise<T | undefined>;
  /** The first column of every row (no row objects: a page of texts read as texts). */
  column<T>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  run(sql: string, params?: readonly unknown[]): Promise<RunResult>;
  /**
   * Inside a transaction: serialises every transaction that locks the same key until this one ends
   * (a PostgreSQL transaction-scoped advisory lock). SQLite's write transactions are serial already,
   * so there it costs nothing. Outside a transaction it is an error.
   */
  lock(key: string): Promise<void>;
  /**
   * `lock(key)` taken together with the transaction's next statement (on PostgreSQL, one round
   * trip instead of two). Only for a lock that guards this transaction's own statements: work done
   * outside the database between this call and the next statement is not covered by it.
   */
  lockWithNext(key: string): Promise<void>;
  /**
   * The transaction's last write, whose result nobody reads: PostgreSQL sends it with COMMIT (one
   * round trip), so its failure rolls the transaction back and is thrown by `transaction()`.
   * SQLite runs it now. Outside a transaction it runs at once.
   */
  runLast(sql: string, params?: readonly unknown[]): Promise<void>;
}

/** A migration moves one component from version N-1 to N; append only. */
export type SqlMigration = string | ((x: SqlExecutor) => Promise<void>);

/** One component's migrations for each engine; the two lists version independently. */
export interface ComponentMigrations {
  sqlite: SqlMigration[];
  postgres: SqlMigration[];
}

export interface SqlDatabase extends SqlExecutor {
  /** Where it lives, without credentials (for logs and errors). */
  readonly label: string;
  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws.
   * On PostgreSQL a serialization failure or deadlock reruns `fn` (a few times), so `fn` must
   * have no effects outside the database.
   */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /** Applies the component's pending migrations (instances starting together take turns). */
  migrate(component: string, migrations: ComponentMigrations): Promise<void>;
  /**
   * Runs `fn` only if no other instance runs a job under `name` now (a PostgreSQL session advisory
   * lock; in-process on SQLite, where one process owns the file). Returns false when skipped.
   * With `period` (the start of the job's schedule period, ms since the epoch), it also runs only
   * if no instance has run `name` for that period or a later one yet: instances whose timers fire
   * a little apart still run a scheduled job once per period.
   */
  exclusive(name: string, fn: () => Promise<void>, opts?: { period?: number }): Promise<boolean>;
  /**
   * Tells every instance on this database that `channel` changed (PostgreSQL NOTIFY; on SQLite,
   * this process's own listeners). Listeners also hear their own instance's notifications.
   */
  notify(channel: string, payload?: string): Promise<void>;
  /** Calls `fn` on every notification of `channel`; returns the unsubscribe function. */
  listen(channel: string, fn: (payload: string) => void): Promise<() => void>;
  /**
   * A number that differs from the last one whenever anything may have been committed to the
   * database since, by any process or instance: what a read may be cached under (read-cache.ts).
   * Undefined where no such mark is cheaper than the read itself (PostgreSQL: another instance's
   * commit is seen only by asking the server).
   */
  changeMark(): Promise<number | undefined>;
  /**
   * changeMark without waiting: undefined also while a transaction of this process is open (its
   * uncommitted rows must not mark a read), where changeMark waits for it to end.
   */
  changeMarkNow(): number | undefined;
  close(): Promise<void>;
}

/**
 * What both engines' databases share: statements outside a transaction go to `auto` (the pool, or
 * the one connection), so each engine supplies that executor and the database-wide operations.
 */
export abstract class AutocommitDatabase {
  protected abstract readonly auto: SqlExecutor;

  all<T>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return this.auto.all<T>(sql, params);
  }
  get<T>(sql: string, params?: readonly unknown[]): Promise<T | undefined> {
    return this.auto.get<T>(sql, params);
  }
  value<T>(sql: string, params?: readonly unknown[]): Promise<T | undefined> {
    return this.auto.value<T>(sql, params);
  }
  column<T>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return this.auto.column<T>(sql, params);
  }
  run(sql: string, params?: readonly unknown[]): Promise<RunResult> {
    return this.auto.run(sql, params);
  }
  lock(key: string): Promise<void> {
    return this.auto.lock(key);
  }
  lockWithNext(key: string): Promise<void> {
    return this.auto.lockWithNext(key);
  }
  async runLast(sql: string, params?: readonly unknown[]): Promise<void> {
    await this.auto.run(sql, params);
  }
}

/**
 * The store is unreachable (connection refused, dropped, server shutting down). The server
 * answers 503 for it; the request's effect was not committed.
 */
export class StoreUnavailableError extends Error {
  readonly statusCode = 503;
  readonly expose = true;
  constructor(detail: string) {
    super(`the database is unavailable; retry shortly (${detail})`);
    this.name = 'StoreUnavailableError';
  }
}

/**
 * A value the engine cannot store as given, from the client's input: PostgreSQL text cannot hold
 * the NUL character (SQLite can). Answered 400 rather than 500; nothing was written.
 */
export class UnstorableInputError extends Error {
  readonly statusCode = 400;
  readonly expose = true;
  constructor() {
    super('text fields cannot contain the NUL character (U+0000)');
    this.name = 'UnstorableInputError';
  }
}

/** The table `exclusive(…, { period })` claims periods in; the same DDL on both engines. */
export const JOB_RUNS_DDL = 'CREATE TABLE IF NOT EXISTS job_runs (job TEXT PRIMARY KEY, last_period BIGINT NOT NULL)';

const withJobRuns = new WeakSet<SqlExecutor>();

/**
 * Claims `period` of `job` for this instance: true when no run of that period or a later one was
 * recorded. One statement each, so two instances never both claim a period.
 */
export async function claimPeriod(x: SqlExecutor, job: string, period: number): Promise<boolean> {
  // The table is made once per database object, not on every tick.
  if (!withJobRuns.has(x)) {
    await x.run(JOB_RUNS_DDL);
    withJobRuns.add(x);
  }
  if ((await x.run('UPDATE job_runs SET last_period = ? WHERE job = ? AND last_period < ?', [period, job, period])).changes === 1) return true;
  return (await x.run('INSERT INTO job_runs (job, last_period) VALUES (?, ?) ON CONFLICT (job) DO NOTHING', [job, period])).changes === 1;
}

/** Rewrites `?` placeholders as `$1, $2, …`, leaving quoted text and `?|`-style operators alone. */
export function numberedPlaceholders(sql: string): string {
  let out = '';
  let n = 0;
  let quote: string | undefined;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!;
    if (quote) {
      out += c;
      if (c === quote) quote = undefined;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      out += c;
      continue;
    }
    if (c === '?') {
      out += `$${++n}`;
      continue;
    }
    out += c;
  }
  return out;
}
