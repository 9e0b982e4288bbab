// Opening a service's SQL database: PostgreSQL when a URL is given (`--database-url` or
// MKT_DATABASE_URL), otherwise the embedded default, one SQLite file in the data dir.
import { join } from 'node:path';
import type { SqlDatabase } from './sql.js';

export interface DatabaseChoice {
  dataDir: string;
  /** The SQLite file's name inside the data dir (`marketplace.db`). */
  file: string;
  /** postgres:// or postgresql:// URL; empty or absent selects SQLite. */
  databaseUrl?: string | undefined;
}

/** The URL from the flag, else MKT_DATABASE_URL; undefined selects SQLite. */
export function databaseUrlFrom(flag: unknown, env: NodeJS.ProcessEnv): string | undefined {
  const raw = typeof flag === 'string' && flag.trim() !== '' ? flag.trim() : env.MKT_DATABASE_URL?.trim();
  if (!raw) return undefined;
  if (!/^postgres(ql)?:\/\//i.test(raw)) throw new Error('the database URL must start with postgres:// or postgresql://');
  return raw;
}

export async function openSqlDatabase(choice: DatabaseChoice): Promise<SqlDatabase> {
  if (choice.databaseUrl) {
    const { PgDatabase } = await import('./sql-pg.js');
    return PgDatabase.open(choice.databaseUrl);
  }
  const { SqliteDatabase } = await import('./sql-sqlite.js');
  return new SqliteDatabase(join(choice.dataDir, choice.file));
}
