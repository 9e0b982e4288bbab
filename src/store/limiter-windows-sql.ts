// The LimiterWindows adapter over the SQL surface (SQLite or PostgreSQL): table limiter_windows of
// component `limiter`. Row operations only; the limiters decide (daemon/plugins/limiter-window.ts).
import type { ComponentMigrations, SqlDatabase, SqlExecutor } from './sql.js';
import type { LimiterRows, LimiterWindows, WindowRow } from './limiter-windows.js';

/** SQLite: append only (databases in the field are at some version of it). PostgreSQL: the final schema. */
export const LIMITER_MIGRATIONS: ComponentMigrations = {
  sqlite: [
    `CREATE TABLE limiter_windows (
       scope TEXT NOT NULL,
       key TEXT NOT NULL,
       window_start INTEGER NOT NULL,
       taken INTEGER NOT NULL,
       PRIMARY KEY (scope, key)
     );
     CREATE INDEX limiter_windows_by_start ON limiter_windows (scope, window_start);`,
  ],
  postgres: [
    `CREATE TABLE limiter_windows (
       scope TEXT NOT NULL,
       key TEXT NOT NULL,
       window_start BIGINT NOT NULL,
       taken INTEGER NOT NULL,
       PRIMARY KEY (scope, key)
     );
     CREATE INDEX limiter_windows_by_start ON limiter_windows (scope, window_start);`,
  ],
};

class Rows implements LimiterRows {
  constructor(protected readonly x: SqlExecutor) {}

  async lockWindow(scope: string, key: string): Promise<void> {
    await this.x.lock(`limiter:${scope}\n${key}`);
  }

  async window(scope: string, key: string): Promise<WindowRow | undefined> {
    const r = await this.x.get<{ window_start: number; taken: number }>('SELECT window_start, taken FROM limiter_windows WHERE scope = ? AND key = ?', [scope, key]);
    return r ? { windowStart: Number(r.window_start), taken: Number(r.taken) } : undefined;
  }

  async putWindow(scope: string, key: string, row: WindowRow): Promise<void> {
    await this.x.run(
      `INSERT INTO limiter_windows (scope, key, window_start, taken) VALUES (?, ?, ?, ?)
       ON CONFLICT (scope, key) DO UPDATE SET window_start = excluded.window_start, taken = excluded.taken`,
      [scope, key, row.windowStart, row.taken],
    );
  }

  async release(scope: string, key: string, windowStart: number): Promise<void> {
    await this.x.run('UPDATE limiter_windows SET taken = taken - 1 WHERE scope = ? AND key = ? AND window_start = ? AND taken > 0', [scope, key, windowStart]);
  }

  async prune(scope: string, before: number): Promise<number> {
    return (await this.x.run('DELETE FROM limiter_windows WHERE scope = ? AND window_start < ?', [scope, before])).changes;
  }
}

export class SqlLimiterWindows extends Rows implements LimiterWindows {
  private constructor(private readonly sql: SqlDatabase) {
    super(sql);
  }

  static async open(sql: SqlDatabase): Promise<SqlLimiterWindows> {
    await sql.migrate('limiter', LIMITER_MIGRATIONS);
    return new SqlLimiterWindows(sql);
  }

  /**
   * On a database whose `limiter` migrations have run already: the monitor's SQLite store migrates
   * its file synchronously as it opens (monitor-sqlite.ts), and shares its database object.
   */
  static migrated(sql: SqlDatabase): SqlLimiterWindows {
    return new SqlLimiterWindows(sql);
  }

  transaction<T>(fn: (tx: LimiterRows) => Promise<T>): Promise<T> {
    return this.sql.transaction((x) => fn(new Rows(x)));
  }
}
