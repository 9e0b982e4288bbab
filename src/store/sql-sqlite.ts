// The SQLite engine of the SQL surface: one better-sqlite3 connection (WAL), statements cached by
// their text, rows read as arrays and made objects by one function per statement (rowMaker).
// better-sqlite3 is synchronous, so a transaction whose body awaits would let other statements of
// this process run inside it; transactions therefore take turns, and a statement outside them
// waits while one is open. BEGIN IMMEDIATE takes the write lock up front, so a transaction's reads
// and writes see one state, as PostgreSQL's row and advisory locks give there.
// The reads of one request turn outside transactions share one read transaction (statement()).
import { EventEmitter } from 'node:events';
import type Database from 'better-sqlite3';
import { openDatabase, type Db } from './sqlite.js';
import { atRequestTurnEnd, inRequestTurn } from '../util/request-turn.js';
import { AutocommitDatabase, claimPeriod, type ComponentMigrations, type RunResult, type SqlDatabase, type SqlExecutor } from './sql.js';

type Stmt = Database.Statement<unknown[]>;
type RowMaker = (values: unknown[]) => Record<string, unknown>;

/** A cached statement: a reader with `row` returns arrays, each made an object by `row`. */
interface Prepared {
  stmt: Stmt;
  row?: RowMaker;
  /** Whether the statement only reads (sqlite3_stmt_readonly): a `RETURNING` write is a reader that writes. */
  readOnly: boolean;
}

/**
 * better-sqlite3 builds each row object in C++, one property at a time through V8's API: on a
 * ten-row page that cost more than SQLite's own reading (bench/README.md, "Where a row's own time
 * goes"). Rows are read as arrays instead, and a function made once per statement turns each into
 * an object with one literal, whose shape V8 then knows. Same objects, same key order; a repeated
 * column name keeps its last value, as before.
 */
function rowMaker(columns: string[]): RowMaker | undefined {
  // A literal's "__proto__" key would set the prototype: such a statement keeps better-sqlite3's objects.
  if (columns.includes('__proto__')) return undefined;
  // Code made from column names SQLite reports for our own statements, each quoted by JSON.stringify.
  return new Function('v', `return {${columns.map((c, i) => `${JSON.stringify(c)}: v[${i}]`).join(', ')}};`) as RowMaker;
}

function bind(params: readonly unknown[] | undefined): unknown[] {
  if (!params) return [];
  return params.map((p) => (p === undefined ? null : p === true ? 1 : p === false ? 0 : p));
}

/** Statements on one connection; `inTx` says whether they belong to the open transaction. */
class SqliteExecutor implements SqlExecutor {
  readonly engine = 'sqlite' as const;
  constructor(
    private readonly owner: SqliteDatabase,
    private readonly inTx: boolean,
  ) {}

  /** Whether this statement must first wait for an open transaction to end (see the header). */
  private mustWait(): boolean {
    return !this.inTx && this.owner.transactionOpen;
  }

  // Each statement awaits only when it must wait: most run at once, without two more promises.
  async all<T>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    if (this.mustWait()) await this.owner.idle();
    const { stmt, row } = this.owner.statement(sql, this.inTx);
    if (!stmt.reader) {
      stmt.run(...bind(params));
      return [];
    }
    const rows = stmt.all(...bind(params)) as unknown[];
    if (row) for (let i = 0; i < rows.length; i++) rows[i] = row(rows[i] as unknown[]);
    return rows as T[];
  }

  /** The first row as better-sqlite3 reads it (an array for a statement with a RowMaker); once ready to run. */
  private first(sql: string, params: readonly unknown[] | undefined): { found: unknown; row?: RowMaker } {
    const { stmt, row } = this.owner.statement(sql, this.inTx);
    if (!stmt.reader) {
      stmt.run(...bind(params));
      return { found: undefined };
    }
    return { found: stmt.get(...bind(params)), row };
  }

  async get<T>(sql: string, params?: readonly unknown[]): Promise<T | undefined> {
    if (this.mustWait()) await this.owner.idle();
    const { found, row } = this.first(sql, params);
    if (found === undefined) return undefined;
    return (row ? row(found as unknown[]) : found) as T;
  }

  async value<T>(sql: string, params?: readonly unknown[]): Promise<T | undefined> {
    if (this.mustWait()) await this.owner.idle();
    const { found, row } = this.first(sql, params);
    if (found === undefined) return undefined;
    if (row) return (found as unknown[])[0] as T;
    for (const k in found as Record<string, unknown>) return (found as Record<string, unknown>)[k] as T;
    return undefined;
  }

  async column<T>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    if (this.mustWait()) await this.owner.idle();
    const { stmt } = this.owner.statement(sql, this.inTx);
    if (!stmt.reader) throw new Error('column() of a statement that returns no rows');
    // Plucked, better-sqlite3 makes no array a row (a page of 500 texts read 30% faster); the
    // statement goes back to raw rows for all/get/value, which share it. Nothing runs in between.
    stmt.pluck(true);
    try {
      return stmt.all(...bind(params)) as T[];
    } finally {
      stmt.raw(true);
    }
  }

  async run(sql: string, params?: readonly unknown[]): Promise<RunResult> {
    if (this.mustWait()) await this.owner.idle();
    const r = this.owner.statement(sql, this.inTx).stmt.run(...bind(params));
    return { changes: r.changes };
  }

  async lock(_key: string): Promise<void> {
    if (!this.inTx) throw new Error('lock() outside a transaction');
  }

  lockWithNext(key: string): Promise<void> {
    return this.lock(key);
  }

  async runLast(sql: string, params?: readonly unknown[]): Promise<void> {
    await this.run(sql, params);
  }
}

export class SqliteDatabase extends AutocommitDatabase implements SqlDatabase {
  readonly engine = 'sqlite' as const;
  readonly label: string;
  /** The connection (see `db`). */
  private readonly conn: Db;
  private readonly statements = new Map<string, Prepared>();
  /** Resolves when the open transaction (if any) ends; transactions queue on it. */
  private turn: Promise<void> = Promise.resolve();
  private busy = 0;
  private readonly running = new Set<string>();
  private readonly events = new EventEmitter();
  /** Whether the turn's read transaction is open (see statement()). */
  private turnRead = false;
  /** What changeMark saw last, and the mark it gave (moved by one at each change seen). */
  private marked = { version: -1, changes: -1, mark: 0 };
  /** Autocommit statements (they wait while a transaction is open). */
  protected readonly auto: SqliteExecutor;

  /** Opens (creating) the file; `connection` reuses a connection the caller opened and closes. */
  constructor(file: string, connection?: Db) {
    super();
    this.conn = connection ?? openDatabase(file);
    this.label = file;
    this.auto = new SqliteExecutor(this, false);
    this.events.setMaxListeners(0);
  }

  /**
   * The connection, for code that runs statements of its own on it (migrations at open, tests):
   * the request turn's read transaction ends first, so what it runs commits as it returns.
   */
  get db(): Db {
    this.endTurnRead();
    return this.conn;
  }

  /** Whether a request turn's read transaction is open on the connection (statement()). */
  get readingInTurn(): boolean {
    return this.turnRead && this.conn.inTransaction;
  }

  prepare(sql: string): Prepared {
    let p = this.statements.get(sql);
    if (!p) {
      const stmt = this.conn.prepare(sql);
      const row = stmt.reader ? rowMaker(stmt.columns().map((c) => c.name)) : undefined;
      if (row) stmt.raw(true);
      p = { stmt, row, readOnly: stmt.readonly };
      this.statements.set(sql, p);
    }
    return p;
  }

  /**
   * `sql` prepared for a statement of the executor, `inTx` when it belongs to the open transaction.
   * In a request turn (src/util/request-turn.ts) an autocommit read joins the turn's one read
   * transaction, begun at its first read and committed when the turn ends: each read statement
   * outside a transaction paid SQLite's read lock on the WAL index (two fcntl calls, and an fstat
   * while the WAL is empty), 4-6 µs on this VM against 0.6 for a keyed lookup (bench/README.md,
   * "One read transaction a turn"). Any other autocommit statement ends it first, so a write
   * still commits as it returns and every read after it sees it.
   */
  statement(sql: string, inTx: boolean): Prepared {
    const p = this.prepare(sql);
    if (!inTx) {
      if (!p.readOnly) this.endTurnRead();
      else if (!this.turnRead && inRequestTurn() && !this.conn.inTransaction) this.beginTurnRead();
    }
    return p;
  }

  private beginTurnRead(): void {
    this.prepare('BEGIN').stmt.run();
    this.turnRead = true;
    atRequestTurnEnd(this.endTurnReadQuietly);
  }

  /** Ends the turn's read transaction, if open: before a write, a transaction, a migration or closing. */
  private endTurnRead(): void {
    if (!this.turnRead) return;
    this.turnRead = false;
    // A statement's error may have rolled it back already (SQLITE_BUSY, SQLITE_NOMEM, SQLITE_IOERR).
    if (this.conn.inTransaction) this.prepare('COMMIT').stmt.run();
  }

  /** endTurnRead at the turn's end, where an error has no caller to go to. */
  private readonly endTurnReadQuietly = (): void => {
    try {
      this.endTurnRead();
    } catch {
      // A read transaction has nothing to commit: ROLLBACK ends it the same.
      if (this.conn.open && this.conn.inTransaction) this.conn.exec('ROLLBACK');
    }
  };

  /** Whether a transaction is open or waiting for its turn. */
  get transactionOpen(): boolean {
    return this.busy > 0;
  }

  /** Waits until no transaction is open. */
  async idle(): Promise<void> {
    while (this.busy > 0) await this.turn;
  }

  async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const before = this.turn;
    let done!: () => void;
    this.turn = new Promise<void>((r) => (done = r));
    this.busy++;
    try {
      await before;
      this.endTurnRead();
      // Prepared once (through the statement cache), not parsed by exec at each of a busy writer's commits.
      this.prepare('BEGIN IMMEDIATE').stmt.run();
      try {
        const out = await fn(new SqliteExecutor(this, true));
        this.prepare('COMMIT').stmt.run();
        return out;
      } catch (err) {
        if (this.conn.inTransaction) this.conn.exec('ROLLBACK');
        throw err;
      }
    } finally {
      this.busy--;
      done();
    }
  }

  async migrate(component: string, migrations: ComponentMigrations): Promise<void> {
    await this.idle();
    this.endTurnRead();
    const list = migrations.sqlite;
    this.conn.exec('CREATE TABLE IF NOT EXISTS schema_migrations (component TEXT PRIMARY KEY, version INTEGER NOT NULL)');
    const current = (this.conn.prepare('SELECT version FROM schema_migrations WHERE component = ?').get(component) as { version: number } | undefined)?.version ?? 0;
    if (current > list.length) {
      throw new Error(`${component} schema version ${current} is newer than this mkt knows (${list.length}); upgrade mkt`);
    }
    for (let v = current; v < list.length; v++) {
      const m = list[v]!;
      await this.transaction(async (tx) => {
        if (typeof m === 'string') this.conn.exec(m);
        else await m(tx);
        await tx.run(
          'INSERT INTO schema_migrations (component, version) VALUES (?, ?) ON CONFLICT(component) DO UPDATE SET version = excluded.version',
          [component, v + 1],
        );
      });
    }
  }

  async exclusive(name: string, fn: () => Promise<void>, opts: { period?: number } = {}): Promise<boolean> {
    if (this.running.has(name)) return false;
    this.running.add(name);
    try {
      if (opts.period !== undefined && !(await claimPeriod(this, name, opts.period))) return false;
      await fn();
      return true;
    } finally {
      this.running.delete(name);
    }
  }

  async notify(channel: string, payload = ''): Promise<void> {
    this.events.emit(channel, payload);
  }

  /**
   * `PRAGMA data_version` moves when another connection (another process, or another connection
   * of this one) commits to the file; `total_changes()` counts every row this connection has
   * written, by any statement or trigger, committed or not. Together they move at every change
   * the file may have seen: 2.4 µs, against 15 µs for a license key's lookup.
   */
  async changeMark(): Promise<number | undefined> {
    if (this.transactionOpen) await this.idle();
    return this.markNow();
  }

  changeMarkNow(): number | undefined {
    return this.transactionOpen ? undefined : this.markNow();
  }

  private markNow(): number {
    const version = (this.statement('PRAGMA data_version', false).stmt.get() as unknown[])[0] as number;
    const changes = (this.statement('SELECT total_changes()', false).stmt.get() as unknown[])[0] as number;
    if (version !== this.marked.version || changes !== this.marked.changes) this.marked = { version, changes, mark: this.marked.mark + 1 };
    return this.marked.mark;
  }

  async listen(channel: string, fn: (payload: string) => void): Promise<() => void> {
    this.events.on(channel, fn);
    return () => this.events.off(channel, fn);
  }

  async close(): Promise<void> {
    await this.idle();
    if (this.conn.open) {
      this.endTurnRead();
      this.conn.close();
    }
  }
}
