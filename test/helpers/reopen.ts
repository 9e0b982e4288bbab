// One database that tests connect to more than once: a restart (a new connection after the first
// closed) or a second instance (PostgreSQL: its own pool; SQLite: the same connection, because two
// connections of one process on one file would block each other's BEGIN IMMEDIATE synchronously).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Engine, SqlDatabase } from '../../src/store/sql.js';
import { SqliteDatabase } from '../../src/store/sql-sqlite.js';
import { PgDatabase } from '../../src/store/sql-pg.js';
import { freshDatabaseUrl } from './pg.js';

export interface ReopenableDatabase {
  engine: Engine;
  /** A new connection (pool) to the database; closed by dispose() unless closed before. */
  connect(): Promise<SqlDatabase>;
  /** What a second instance uses: its own pool on PostgreSQL, `db` itself on SQLite. */
  instance(db: SqlDatabase): Promise<SqlDatabase>;
  dispose(): Promise<void>;
}

export async function reopenableDatabase(engine: Engine): Promise<ReopenableDatabase> {
  const opened: SqlDatabase[] = [];
  const dir = engine === 'sqlite' ? mkdtempSync(join(tmpdir(), 'mkt-reopen-')) : undefined;
  const url = engine === 'postgres' ? await freshDatabaseUrl() : undefined;
  const connect = async (): Promise<SqlDatabase> => {
    const db = url ? await PgDatabase.open(url) : new SqliteDatabase(join(dir!, 'test.db'));
    opened.push(db);
    return db;
  };
  return {
    engine,
    connect,
    instance: async (db) => (engine === 'postgres' ? connect() : db),
    async dispose() {
      for (const db of opened.splice(0)) await db.close().catch(() => undefined);
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
