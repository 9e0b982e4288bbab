// Opening the monitor's store: one SQLite file in the data dir (the embedded default), or, with
// --database-url / MKT_DATABASE_URL, PostgreSQL shared by a cluster of instances, which also
// brings the cluster's leases and the notices of checks recorded by the other instances. Each
// engine's driver is loaded only when chosen: the PostgreSQL path never loads better-sqlite3.
import { join } from 'node:path';
import type { MonitorStore } from '../../../src/store/monitor.js';
import type { LimiterWindows } from '../../../src/store/limiter-windows.js';
import type { MonitorLeases } from '../../../src/store/monitor-leases.js';
import type { PgMonitorStore } from '../../../src/store/monitor-pg.js';
import type { SqlDatabase } from '../../../src/store/sql.js';
import type { PgDatabase } from '../../../src/store/sql-pg.js';

export interface OpenedMonitorStore {
  store: MonitorStore & { windows: LimiterWindows };
  /** Where it lives, without credentials. */
  label: string;
  /** The database under the store: `/healthz` asks it whether it answers. */
  sql: SqlDatabase;
  /** On PostgreSQL: the cluster's leases, the store (for check notices) and the database (its availability); absent on SQLite. */
  cluster?: { leases: MonitorLeases; pg: PgMonitorStore; db: PgDatabase };
}

export async function openMonitorStore(opts: { dataDir: string; databaseUrl?: string | undefined; instanceId: string }): Promise<OpenedMonitorStore> {
  if (!opts.databaseUrl) {
    const file = join(opts.dataDir, 'monitor.db');
    const { SqliteMonitorStore } = await import('../../../src/store/monitor-sqlite.js');
    const store = new SqliteMonitorStore(file);
    return { store, label: file, sql: store.sql };
  }
  const { PgDatabase } = await import('../../../src/store/sql-pg.js');
  const { PgMonitorStore } = await import('../../../src/store/monitor-pg.js');
  const { MonitorLeases } = await import('../../../src/store/monitor-leases.js');
  const sql = await PgDatabase.open(opts.databaseUrl);
  try {
    const pg = await PgMonitorStore.open(sql, opts.instanceId);
    return { store: pg, label: sql.label, sql, cluster: { leases: new MonitorLeases(sql, opts.instanceId), pg, db: sql } };
  } catch (err) {
    await sql.close().catch(() => undefined);
    throw err;
  }
}
