// Two monitor stores on one database, as two cluster instances see it (two PostgreSQL pools on one
// fresh database; two handles on one SQLite file), closed and removed after each test.
import { afterEach } from 'vitest';
import { join } from 'node:path';
import type { MonitorStore } from '../../src/store/monitor.js';
import { SqliteMonitorStore } from '../../src/store/monitor-sqlite.js';
import { PgMonitorStore } from '../../src/store/monitor-pg.js';
import { PgDatabase } from '../../src/store/sql-pg.js';
import { freshDatabaseUrl } from './pg.js';
import { tempDir } from './tmp.js';

/** Call once at a test file's top level: returns `twoStores(engine)`, with the clean-up registered. */
export function sharedMonitorStores(): (engine: string) => Promise<[MonitorStore, MonitorStore]> {
  const opened: MonitorStore[] = [];
  const dirs: { remove(): void }[] = [];
  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close();
    for (const d of dirs.splice(0)) d.remove();
  });
  return async (engine) => {
    let open: () => Promise<MonitorStore>;
    if (engine === 'sqlite') {
      const d = tempDir();
      dirs.push(d);
      open = async () => new SqliteMonitorStore(join(d.path, 'monitor.db'));
    } else {
      const url = await freshDatabaseUrl();
      open = async () => PgMonitorStore.open(await PgDatabase.open(url));
    }
    const a = await open();
    const b = await open();
    opened.push(a, b);
    return [a, b];
  };
}
