// Whether a database already holds a marketplace, asked before anything is migrated: `mkt admin`
// refuses a place that holds none rather than creating one by accident.
import type { SqlDatabase } from './sql.js';

/**
 * The components the marketplace's stores migrate (src/store/marketplace.ts); a PostgreSQL
 * database the monitor shares records `monitor` in the same table, which is no marketplace.
 */
const MARKETPLACE_COMPONENTS = ['accounts', 'repos', 'notes', 'license', 'limiter', 'sync', 'sync-storage'];

/** True when the schema_migrations table exists and records a marketplace component. */
export async function holdsMarketplace(sql: SqlDatabase): Promise<boolean> {
  const table =
    sql.engine === 'postgres'
      ? await sql.value<boolean>("SELECT to_regclass('schema_migrations') IS NOT NULL")
      : (await sql.value<number>("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")) === 1;
  if (!table) return false;
  const marks = MARKETPLACE_COMPONENTS.map(() => '?').join(', ');
  return (await sql.value<string>(`SELECT component FROM schema_migrations WHERE component IN (${marks}) LIMIT 1`, MARKETPLACE_COMPONENTS)) !== undefined;
}
