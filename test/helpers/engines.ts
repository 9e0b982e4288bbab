// Runs one store test suite against both engines: SQLite (a file in a fresh temp dir) and
// PostgreSQL (a fresh database on the run's server). `describeEngines('X', (open) => …)` gives
// each test its own empty database through `open()`; databases opened are closed after each test.
import { afterEach, describe } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Engine, SqlDatabase } from '../../src/store/sql.js';
import { SqliteDatabase } from '../../src/store/sql-sqlite.js';
import { PgDatabase } from '../../src/store/sql-pg.js';
import { freshDatabaseUrl } from './pg.js';

export const ENGINES: Engine[] = ['sqlite', 'postgres'];

/** An empty database of the engine; the caller closes it. */
export async function openEmptyDatabase(engine: Engine): Promise<{ db: SqlDatabase; dispose(): Promise<void> }> {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'mkt-sqlite-'));
    const db = new SqliteDatabase(join(dir, 'test.db'));
    return { db, dispose: async () => { await db.close(); rmSync(dir, { recursive: true, force: true }); } };
  }
  const db = await PgDatabase.open(await freshDatabaseUrl());
  return { db, dispose: () => db.close() };
}

export function describeEngines(name: string, body: (open: () => Promise<SqlDatabase>, engine: Engine) => void): void {
  for (const engine of ENGINES) {
    describe(`${name} [${engine}]`, () => {
      const opened: { dispose(): Promise<void> }[] = [];
      afterEach(async () => {
        for (const o of opened.splice(0)) await o.dispose().catch(() => undefined);
      });
      body(async () => {
        const o = await openEmptyDatabase(engine);
        opened.push(o);
        return o.db;
      }, engine);
    });
  }
}
