// The monitor store on SQLite: one file in the data dir, opened synchronously (its migrations,
// the limiter's and the raw floor read as the constructor runs), then served by the one SQL
// adapter both engines share (monitor-sql.ts) on this file's one connection.
import { migrate } from './sqlite.js';
import { SqliteDatabase } from './sql-sqlite.js';
import { LIMITER_MIGRATIONS, SqlLimiterWindows } from './limiter-windows-sql.js';
import { MONITOR_MIGRATIONS } from './monitor-migrations-sqlite.js';
import { SqlMonitorStore } from './monitor-sql.js';

/** The file (or a database opened on it) migrated, with its raw floor: what the adapter needs. */
function opened(file: string | SqliteDatabase): [SqliteDatabase, SqlLimiterWindows, number] {
  const sql = typeof file === 'string' ? new SqliteDatabase(file) : file;
  try {
    migrate(sql.db, 'monitor', MONITOR_MIGRATIONS);
    migrate(sql.db, 'limiter', LIMITER_MIGRATIONS.sqlite.map((m) => {
      if (typeof m !== 'string') throw new Error('limiter migrations are plain SQL');
      return m;
    }));
    const floor = sql.db.prepare('SELECT value FROM monitor_meta WHERE key = ?').pluck().get('raw_floor') as number | undefined;
    // The limiter's windows share this connection and its turns: a transaction of either waits for the other's.
    return [sql, SqlLimiterWindows.migrated(sql), floor ?? 0];
  } catch (err) {
    if (typeof file === 'string') sql.db.close();
    throw err;
  }
}

export class SqliteMonitorStore extends SqlMonitorStore {
  /** Opens the file, or takes over a database already open on it (closed with the store). */
  constructor(file: string | SqliteDatabase) {
    super(...opened(file));
  }
}
