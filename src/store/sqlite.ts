// Opening a service database: better-sqlite3 in WAL mode with versioned migrations, its
// statements prepared with the one rewrite SQLite needs (sqliteLimits). Versions are kept per
// component in `schema_migrations`, so the areas of one service (the marketplace's accounts,
// notes, license and sync) share one file yet migrate apart.
import Database from 'better-sqlite3';
import { chmodSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

export type Db = Database.Database;

/** Migration N (1-based) moves a component from version N-1 to N. Append only. */
export type Migration = string | ((db: Db) => void);

/** Pages of WAL after which a commit checkpoints (bench/README.md, "Heartbeats, issue 31"). */
export const WAL_CHECKPOINT_PAGES = 10_000;

export function openDatabase(file: string): Db {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const db = new Database(file);
  if (file !== ':memory:') {
    try {
      chmodSync(file, 0o600);
    } catch {
      // a foreign-owned file keeps its mode; opening it still works
    }
  }
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  // A checkpoint runs inside the COMMIT that crosses the threshold and syncs the WAL and the file
  // (two fsyncs even at synchronous = NORMAL): at SQLite's default of 1,000 pages a busy writer
  // (a burst of monitor pings, 6 pages a commit) paid one every 170 commits, a fifth of its commit
  // time and its p99. 10,000 pages (a WAL of up to 40 MiB) makes them ten times rarer.
  db.pragma(`wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`);
  // Every statement of every store goes through this connection's prepare: rewritten here, none
  // can be written without it.
  const prepare = db.prepare.bind(db);
  db.prepare = ((source: string) => prepare(sqliteLimits(source))) as Db['prepare'];
  return db;
}

/** Applies the component's pending migrations, each in its own transaction. */
export function migrate(db: Db, component: string, migrations: Migration[]): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (component TEXT PRIMARY KEY, version INTEGER NOT NULL)');
  const row = db.prepare('SELECT version FROM schema_migrations WHERE component = ?').get(component) as { version: number } | undefined;
  const current = row?.version ?? 0;
  if (current > migrations.length) {
    throw new Error(`${component} schema version ${current} is newer than this mkt knows (${migrations.length}); upgrade mkt`);
  }
  const setVersion = db.prepare(
    'INSERT INTO schema_migrations (component, version) VALUES (?, ?) ON CONFLICT(component) DO UPDATE SET version = excluded.version',
  );
  for (let v = current; v < migrations.length; v++) {
    const m = migrations[v]!;
    db.transaction(() => {
      if (typeof m === 'string') db.exec(m);
      else m(db);
      setVersion.run(component, v + 1);
    })();
  }
}

/**
 * `LIMIT ?` as `LIMIT +?`. SQLite's planner reads a bare bound LIMIT (sqlite3ExprIsInteger marks
 * the variable in the statement's mask, SQLite 3.53), so binding it expires the statement and every
 * run prepares it again: 6-9 µs a run on our paged reads, more than the rows themselves. `+?` is the
 * same value as an expression the planner does not read (it looks through the unary plus without
 * the parse). PostgreSQL has no such cost and no `+` for an untyped parameter: SQLite only.
 */
export function sqliteLimits(sql: string): string {
  return sql.replace(/\b(LIMIT|OFFSET) \?/gi, '$1 +?');
}
