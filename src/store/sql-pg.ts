// The PostgreSQL engine of the SQL surface: node-postgres with a pool. Placeholders are numbered
// here, 64-bit integers come back as numbers (row counts, byte counts and millisecond instants
// all fit in 2^53), and a lost connection becomes StoreUnavailableError, which the server answers
// with 503: the statement's transaction was not committed, so nothing acknowledged is lost.
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { AutocommitDatabase, claimPeriod, numberedPlaceholders, StoreUnavailableError, UnstorableInputError, type ComponentMigrations, type RunResult, type SqlDatabase, type SqlExecutor } from './sql.js';
import { redactDatabaseUrl } from '../util/redact-url.js';

// int8 (COUNT, SUM of integers, BIGINT columns) and numeric (SUM of bigint) as numbers.
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1700, (v) => Number(v));

const RETRYABLE = new Set(['40001', '40P01']);
/** MKT_SQL_TRACE=1 prints each statement's text (never its parameters) to stderr: how many a request costs. */
const TRACE = process.env.MKT_SQL_TRACE === '1';
const TX_ATTEMPTS = 8;

/** Whether an error means the server or the connection is gone (not a bad statement). */
export function isConnectionError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  const code = typeof e.code === 'string' ? e.code : '';
  if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'].includes(code)) return true;
  // 57P01-03: the server is shutting down or starting; class 08: connection exceptions.
  if (/^57P0[123]$/.test(code) || code.startsWith('08')) return true;
  const msg = typeof e.message === 'string' ? e.message : '';
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended|not queryable/i.test(msg);
}

// 22021: a NUL byte in text; 22P05: \u0000 in a JSON value. Both come from the client's input.
const UNSTORABLE = new Set(['22021', '22P05']);

function wrap(err: unknown): unknown {
  if (err instanceof StoreUnavailableError || err instanceof UnstorableInputError) return err;
  if (isConnectionError(err)) return new StoreUnavailableError((err as Error).message || String(err));
  if (UNSTORABLE.has(String((err as { code?: unknown }).code))) return new UnstorableInputError();
  return err;
}

/**
 * A statement's numbered text and its prepared-statement name (a digest of the text, so every
 * connection of every instance names one statement alike). The store's statements are a fixed
 * set of literals, so the map stays small; past its bound, statements are still named, only
 * converted again each time.
 */
const statements = new Map<string, { name: string; text: string }>();
function statement(sql: string): { name: string; text: string } {
  let s = statements.get(sql);
  if (s === undefined) {
    const text = numberedPlaceholders(sql);
    s = { name: `mkt_${createHash('sha256').update(text).digest('base64url').slice(0, 24)}`, text };
    if (statements.size < 10_000) statements.set(sql, s);
  }
  return s;
}

/** A statement as node-postgres takes it: named (prepared once per connection), or plain text. */
function queryConfig(sql: string, params: readonly unknown[] | undefined): pg.QueryConfig | string {
  if (params === undefined && (sql === 'BEGIN' || sql === 'COMMIT' || sql === 'ROLLBACK')) return sql;
  const s = statement(sql);
  // Named: each connection parses and plans a statement once, then only binds and executes.
  return { name: s.name, text: s.text, values: params ? [...params] : [] };
}

let sent = 0;
/** Statements this process has sent to PostgreSQL (BEGIN and COMMIT included): what a request or a check costs. */
export function pgStatementsSent(): number {
  return sent;
}

function trace(sql: string, pipelined: boolean): void {
  sent++;
  if (TRACE) process.stderr.write(`SQL ${pipelined ? '+ ' : ''}${sql.replace(/\s+/g, ' ').slice(0, 160)}\n`);
}

const LOCK = 'SELECT pg_advisory_xact_lock(hashtextextended(?, 0))';

/**
 * Whether the server answers, as the statements find it: the first failure for a lost server and
 * the first success after it each call the listeners once, so a service logs one line when the
 * database goes and one when it is back, not one per request (each request still answers 503).
 *
 * Only a connection opened after the loss was noticed can prove the server back. PostgreSQL shuts
 * down by terminating its backends one by one, so for a few milliseconds an old connection still
 * answers after another has been cut; counting that answer told "back" and then "gone" again.
 * A new connection cannot be opened until a server accepts work again (one shutting down refuses
 * it with 57P03), so an answer after one has been opened is the server's, not the dying one's.
 */
export class Availability {
  private down: string | undefined;
  /** When the loss was noticed (performance.now()): only a statement sent after it proves the server back. */
  private downSince = 0;
  /** When it was found back: a failure of a statement sent before then is the outage's, already told. */
  private upSince = 0;
  /** When a connection was last opened (performance.now()); -Infinity before the first. */
  private openedAt = -Infinity;
  private readonly listeners: ((up: boolean, detail: string) => void)[] = [];

  on(fn: (up: boolean, detail: string) => void): void {
    this.listeners.push(fn);
  }

  get available(): boolean {
    return this.down === undefined;
  }

  /** A new connection to the server completed its start-up (the pool's `connect` event). */
  connected(): void {
    this.openedAt = performance.now();
  }

  /**
   * A statement sent at `sentAt` (performance.now()) got an answer. It says the server is back only
   * if it was sent after the loss was noticed and a connection has been opened since: while
   * PostgreSQL shuts down, connections it has not cut yet still answer for a moment.
   */
  ok(sentAt: number): void {
    if (this.down === undefined || sentAt < this.downSince || this.openedAt < this.downSince) return;
    const was = this.down;
    this.down = undefined;
    this.upSince = performance.now();
    for (const fn of this.listeners) fn(true, was);
  }

  /**
   * A statement sent at `sentAt` failed: a lost server turns the state down (once), any other
   * error says nothing. Answers the error to throw.
   */
  failed(err: unknown, sentAt = performance.now()): unknown {
    const out = wrap(err);
    if (out instanceof StoreUnavailableError && this.down === undefined && sentAt >= this.upSince) {
      this.down = out.message;
      this.downSince = performance.now();
      for (const fn of this.listeners) fn(false, out.message);
    }
    return out;
  }
}

/** Statements outside a transaction: each one on whichever pooled connection is free. */
class PgExecutor implements SqlExecutor {
  readonly engine = 'postgres' as const;
  constructor(
    private readonly pool: Pick<pg.Pool, 'query'>,
    protected readonly health: Availability = new Availability(),
  ) {}

  protected async query(sql: string, params?: readonly unknown[]): Promise<pg.QueryResult> {
    trace(sql, false);
    const sentAt = performance.now();
    try {
      const r = await this.pool.query(queryConfig(sql, params ?? []));
      this.health.ok(sentAt);
      return r;
    } catch (err) {
      throw this.health.failed(err, sentAt);
    }
  }

  async all<T>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return (await this.query(sql, params)).rows as T[];
  }

  async get<T>(sql: string, params?: readonly unknown[]): Promise<T | undefined> {
    return (await this.query(sql, params)).rows[0] as T | undefined;
  }

  async value<T>(sql: string, params?: readonly unknown[]): Promise<T | undefined> {
    const row = (await this.query(sql, params)).rows[0] as Record<string, unknown> | undefined;
    if (row === undefined) return undefined;
    for (const k in row) return row[k] as T;
    return undefined;
  }

  async column<T>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    const r = await this.query(sql, params);
    const name = r.fields[0]?.name;
    if (name === undefined) throw new Error('column() of a statement that returns no rows');
    return r.rows.map((row: Record<string, unknown>) => row[name] as T);
  }

  async run(sql: string, params?: readonly unknown[]): Promise<RunResult> {
    return { changes: (await this.query(sql, params)).rowCount ?? 0 };
  }

  async lock(_key: string): Promise<void> {
    throw new Error('lock() outside a transaction');
  }

  lockWithNext(key: string): Promise<void> {
    return this.lock(key);
  }

  async runLast(sql: string, params?: readonly unknown[]): Promise<void> {
    await this.run(sql, params);
  }
}

interface Pending {
  sql: string;
  params?: readonly unknown[];
}

/**
 * One open transaction on one pooled connection, which runs in pipeline mode: statements that
 * need no answer in between travel together, so a round trip carries BEGIN with the first
 * statement, a `lockWithNext` lock with the statement after it, and `runLast` writes with COMMIT.
 * A transaction whose body ran no statement sends nothing at all.
 */
class PgTransaction extends PgExecutor {
  private begun = false;
  /** Locks to take just before the next statement. */
  private pending: Pending[] = [];
  /** Writes to send with COMMIT. */
  private last: Pending[] = [];

  constructor(
    private readonly c: pg.PoolClient,
    health: Availability,
  ) {
    super(c, health);
  }

  protected override query(sql: string, params?: readonly unknown[]): Promise<pg.QueryResult> {
    return this.send([...this.head(), { sql, params: params ?? [] }]);
  }

  /** BEGIN unless sent already, then the pending locks. */
  private head(): Pending[] {
    const out: Pending[] = this.begun ? [] : [{ sql: 'BEGIN' }];
    this.begun = true;
    out.push(...this.pending);
    this.pending = [];
    return out;
  }

  /** Sends the statements back to back and answers the last one's result; the first failure is thrown. */
  private async send(batch: Pending[]): Promise<pg.QueryResult> {
    // Corked, the batch leaves in one write: on loopback TCP each write costs the server more CPU
    // (the kernel delivers it to PostgreSQL inline) than node-postgres spends on a statement.
    const sentAt = performance.now();
    const stream = this.c.connection.stream;
    stream.cork();
    let sent: Promise<pg.QueryResult>[];
    try {
      sent = batch.map((st, i) => {
        trace(st.sql, i > 0);
        return this.c.query(queryConfig(st.sql, st.params));
      });
    } finally {
      stream.uncork();
    }
    // Every answer is awaited (none is left to reject unheard); a failure aborts the transaction,
    // so the statements after it fail too, and the first failure is the one that says why.
    const settled = await Promise.allSettled(sent);
    for (const r of settled) if (r.status === 'rejected') throw this.health.failed(r.reason, sentAt);
    this.health.ok(sentAt);
    return (settled[settled.length - 1] as PromiseFulfilledResult<pg.QueryResult>).value;
  }

  override async lock(key: string): Promise<void> {
    await this.send([...this.head(), { sql: LOCK, params: [key] }]);
  }

  override async lockWithNext(key: string): Promise<void> {
    this.pending.push({ sql: LOCK, params: [key] });
  }

  override async runLast(sql: string, params?: readonly unknown[]): Promise<void> {
    this.last.push({ sql, params: params ?? [] });
  }

  /** COMMIT, with the writes kept for it. Locks nothing followed guard nothing, so they are dropped. */
  async commit(): Promise<void> {
    if (!this.begun && this.last.length === 0) return;
    const batch = [...this.head(), ...this.last, { sql: 'COMMIT' }];
    this.last = [];
    const r = await this.send(batch);
    // COMMIT of a failed transaction answers ROLLBACK, not an error; send() threw for the failure
    // already, so this is only a guard against committing less than was asked.
    if (r.command !== 'COMMIT') throw new Error(`the transaction ended with ${r.command}, not COMMIT`);
  }

  async rollback(): Promise<void> {
    if (this.begun) await this.c.query('ROLLBACK');
  }
}

export class PgDatabase extends AutocommitDatabase implements SqlDatabase {
  readonly engine = 'postgres' as const;
  readonly label: string;
  private readonly pool: pg.Pool;
  protected readonly auto: PgExecutor;
  private readonly events = new EventEmitter();
  private listener: pg.Client | undefined;
  private listening = new Set<string>();
  private closed = false;
  private probing = false;
  /** The probe's connection while it is being tried: close() cuts it rather than wait out its connect. */
  private prober: pg.Client | undefined;
  /** Whether the server answers; `onAvailability` hears each change once. */
  readonly health = new Availability();

  private constructor(private readonly url: string, max: number) {
    super();
    this.label = redactDatabaseUrl(url);
    // Pipeline mode: a transaction's statements that need no answer in between share a round trip.
    // connectionTimeoutMillis bounds both a connect and the wait for a free connection, so a
    // request meets a lost or saturated server with a 503 within seconds rather than hanging.
    // Keep-alive finds a server that vanished without closing its connections (a host gone).
    this.pool = new pg.Pool({ connectionString: url, max, connectionTimeoutMillis: 5_000, idleTimeoutMillis: 30_000, keepAlive: true, keepAliveInitialDelayMillis: 10_000, pipeline: true });
    // An idle client whose server went away: the pool drops it; the next query reconnects.
    this.pool.on('error', () => undefined);
    this.pool.on('connect', () => this.health.connected());
    this.health.on((up) => void (up || this.probe()));
    this.auto = new PgExecutor(this.pool, this.health);
    this.events.setMaxListeners(0);
  }

  /**
   * While the server is unavailable, a connection of its own is tried every second until one opens
   * and answers. Statements on the pool's old connections cannot prove the server back (see
   * Availability), and the loss may not be a restart at all (a saturated pool, one backend
   * terminated), in which case the pool may open no new connection for a long time.
   */
  private probe(): void {
    if (this.probing || this.closed) return;
    this.probing = true;
    const attempt = async (): Promise<void> => {
      if (this.closed || this.health.available) {
        this.probing = false;
        return;
      }
      // query_timeout: a server that takes the connection but never answers must not end the probing.
      const c = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 5_000, query_timeout: 5_000 });
      c.on('error', () => undefined);
      this.prober = c;
      try {
        await c.connect();
        this.health.connected();
        const sentAt = performance.now();
        await c.query('SELECT 1');
        this.health.ok(sentAt);
      } catch {
        // Still gone: the next attempt tells.
      } finally {
        this.prober = undefined;
        await c.end().catch(() => undefined);
      }
      if (this.closed || this.health.available) {
        this.probing = false;
        return;
      }
      setTimeout(() => void attempt(), 1_000).unref();
    };
    void attempt();
  }

  /** Connects (once, to fail fast with a clear error) and returns the database. */
  static async open(url: string, opts: { max?: number } = {}): Promise<PgDatabase> {
    const db = new PgDatabase(url, opts.max ?? 10);
    try {
      await db.pool.query('SELECT 1');
    } catch (err) {
      await db.pool.end().catch(() => undefined);
      const why = (err as Error).message || String(err);
      throw new Error(`cannot reach the database at ${db.label}: ${why}`);
    }
    return db;
  }

  /**
   * Logs a warning when the server is lost and an info line when it answers again: what an
   * operator sees in the log of a PostgreSQL restart, besides the requests' own 503 lines.
   */
  logAvailability(logger: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void }): void {
    let since = 0;
    this.onAvailability((up, detail) => {
      if (!up) {
        since = Date.now();
        logger.warn({ database: this.label, err: detail }, 'database unavailable: requests that need it answer 503 until it is back; reconnecting by itself');
      } else {
        logger.info({ database: this.label, down_ms: Date.now() - since }, 'database available again');
      }
    });
  }

  /** Calls `fn(false, why)` once when the server is lost and `fn(true, why it was lost)` once when it answers again. */
  onAvailability(fn: (up: boolean, detail: string) => void): void {
    this.health.on(fn);
  }

  /**
   * A pooled connection for the caller's own statements. The pool listens for a connection's
   * errors only while it is idle: a checked-out one whose server goes away (PostgreSQL shutting
   * down terminates every connection) would emit an `error` nobody hears, which ends the process.
   * This listener keeps the error for release(), which then drops the connection from the pool.
   */
  private async client(sentAt: number): Promise<{ c: pg.PoolClient; release(broken?: boolean): void }> {
    let c: pg.PoolClient;
    try {
      c = await this.pool.connect();
    } catch (err) {
      throw this.health.failed(err, sentAt);
    }
    let lost = false;
    const onError = (): void => void (lost = true);
    c.on('error', onError);
    return {
      c,
      release(broken = false) {
        c.removeListener('error', onError);
        c.release(broken || lost);
      },
    };
  }

  async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const sentAt = performance.now();
      const held = await this.client(sentAt);
      const tx = new PgTransaction(held.c, this.health);
      let broken = false;
      try {
        const out = await fn(tx);
        await tx.commit();
        return out;
      } catch (err) {
        broken = isConnectionError(err) || err instanceof StoreUnavailableError;
        if (!broken) await tx.rollback().catch(() => (broken = true));
        const code = (err as { code?: string }).code;
        if (!broken && code && RETRYABLE.has(code) && attempt < TX_ATTEMPTS) {
          await new Promise((r) => setTimeout(r, Math.random() * 10 * attempt));
          continue;
        }
        throw this.health.failed(err, sentAt);
      } finally {
        held.release(broken);
      }
    }
  }

  async migrate(component: string, migrations: ComponentMigrations): Promise<void> {
    const list = migrations.postgres;
    const sentAt = performance.now();
    const held = await this.client(sentAt);
    const c = held.c;
    try {
      // Instances starting together take turns; the second finds the work done.
      await c.query("SELECT pg_advisory_lock(hashtextextended('mkt schema migrations', 0))");
      try {
        await c.query('CREATE TABLE IF NOT EXISTS schema_migrations (component TEXT PRIMARY KEY, version INTEGER NOT NULL)');
        const row = (await c.query('SELECT version FROM schema_migrations WHERE component = $1', [component])).rows[0] as { version: number } | undefined;
        const current = row?.version ?? 0;
        if (current > list.length) {
          throw new Error(`${component} schema version ${current} is newer than this mkt knows (${list.length}); upgrade mkt`);
        }
        for (let v = current; v < list.length; v++) {
          const m = list[v]!;
          await c.query('BEGIN');
          try {
            if (typeof m === 'string') await c.query(m);
            else await m(new PgExecutor(c));
            await c.query(
              'INSERT INTO schema_migrations (component, version) VALUES ($1, $2) ON CONFLICT (component) DO UPDATE SET version = excluded.version',
              [component, v + 1],
            );
            await c.query('COMMIT');
          } catch (err) {
            await c.query('ROLLBACK').catch(() => undefined);
            throw err;
          }
        }
      } finally {
        await c.query("SELECT pg_advisory_unlock(hashtextextended('mkt schema migrations', 0))").catch(() => undefined);
      }
    } catch (err) {
      throw this.health.failed(err, sentAt);
    } finally {
      held.release();
    }
  }

  async exclusive(name: string, fn: () => Promise<void>, opts: { period?: number } = {}): Promise<boolean> {
    const sentAt = performance.now();
    const conn = await this.client(sentAt);
    const c = conn.c;
    let held = false;
    let broken = false;
    try {
      held = (await c.query('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok', [name])).rows[0]?.ok === true;
      if (!held) return false;
      if (opts.period !== undefined && !(await claimPeriod(this, name, opts.period))) return false;
      await fn();
      return true;
    } catch (err) {
      throw this.health.failed(err, sentAt);
    } finally {
      // A lock whose unlock fails is on a connection that must not go back to the pool: its
      // session would keep the job's lock, and no instance would run the job again.
      if (held) await c.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [name]).catch(() => void (broken = true));
      conn.release(broken);
    }
  }

  async changeMark(): Promise<number | undefined> {
    return undefined;
  }

  changeMarkNow(): number | undefined {
    return undefined;
  }

  async notify(channel: string, payload = ''): Promise<void> {
    await this.auto.run('SELECT pg_notify(?, ?)', [channel, payload]);
  }

  async listen(channel: string, fn: (payload: string) => void): Promise<() => void> {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`channel names are lower-case identifiers: ${channel}`);
    this.events.on(channel, fn);
    if (!this.listening.has(channel)) {
      this.listening.add(channel);
      const c = await this.listenClient().catch(() => undefined);
      await c?.query(`LISTEN ${channel}`).catch(() => undefined);
    }
    return () => this.events.off(channel, fn);
  }

  /**
   * One connection outside the pool holds the LISTENs. When it drops, it is reopened with every
   * channel, and each channel hears an empty notification: a cache may have missed one meanwhile.
   */
  private async listenClient(): Promise<pg.Client> {
    if (this.listener) return this.listener;
    const c = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 5_000 });
    this.listener = c;
    c.on('notification', (n) => this.events.emit(n.channel, n.payload ?? ''));
    c.on('error', () => this.dropListener(c));
    c.on('end', () => this.dropListener(c));
    try {
      await c.connect();
    } catch (err) {
      this.dropListener(c);
      throw err;
    }
    return c;
  }

  private dropListener(c: pg.Client): void {
    if (this.listener !== c) return;
    this.listener = undefined;
    void c.end().catch(() => undefined);
    if (this.closed) return;
    const retry = setTimeout(() => {
      if (this.closed) return;
      this.listenClient()
        .then(async (fresh) => {
          for (const ch of this.listening) await fresh.query(`LISTEN ${ch}`);
          for (const ch of this.listening) this.events.emit(ch, '');
        })
        .catch(() => undefined);
    }, 1_000);
    retry.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    // Destroyed, not ended: an end() during its connect waits for the connect to finish or time out.
    this.prober?.connection.stream.destroy();
    const l = this.listener;
    this.listener = undefined;
    await l?.end().catch(() => undefined);
    await this.pool.end();
  }
}
