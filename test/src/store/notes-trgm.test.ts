// PostgreSQL without pg_trgm (issue 36): a database role that may not create extensions (a
// managed server's ordinary user) still migrates the notes index; the index says, once, that
// literal search scans, and literal search still answers exactly.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { pgServerUrl } from '../../helpers/pg.js';
import { PgDatabase } from '../../../src/store/sql-pg.js';
import { SqlNotesIndex } from '../../../src/store/notes-sql.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

async function asAdmin<T>(database: string | undefined, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const u = new URL(pgServerUrl());
  if (database) u.pathname = `/${database}`;
  const c = new pg.Client({ connectionString: u.toString() });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

describe('SqlNotesIndex [postgres] where CREATE EXTENSION is refused', () => {
  it('migrates without the trigram index, warns once, and literal search scans', async () => {
    const id = randomBytes(6).toString('hex');
    const role = `mkt_low_${id}`;
    const name = `mkt_test_${id}`;
    const password = randomBytes(12).toString('hex');
    // Names and the password are hex made here: safe to write into the DDL, which takes no parameters.
    await asAdmin(undefined, async (c) => {
      await c.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
      await c.query(`CREATE DATABASE ${name}`);
    });
    cleanups.push(() => asAdmin(undefined, async (c) => void (await c.query(`DROP ROLE ${role}`))));
    cleanups.push(() => asAdmin(undefined, async (c) => void (await c.query(`DROP DATABASE ${name} WITH (FORCE)`))));
    await asAdmin(name, async (c) => {
      await c.query(`GRANT USAGE, CREATE ON SCHEMA public TO ${role}`);
      await c.query(`REVOKE CREATE ON DATABASE ${name} FROM PUBLIC`);
    });
    const u = new URL(pgServerUrl());
    u.username = role;
    u.password = password;
    u.pathname = `/${name}`;
    const db = await PgDatabase.open(u.toString());
    cleanups.push(() => db.close());

    const index = await SqlNotesIndex.open(db);
    expect(index.warnings).toHaveLength(1);
    expect(index.warnings[0]).toMatch(/pg_trgm/);
    expect(await db.value<number>("SELECT COUNT(*) FROM pg_extension WHERE extname = 'pg_trgm'")).toBe(0);
    const T = (n: number) => n.toString(16).padStart(40, '0');
    await index.apply('r', 'ns', { from: null, to: 't' }, [
      { target: T(1), object_type: 'commit', blob: 'b1', content: 'see <20260101.abc@example.org>' },
      { target: T(2), object_type: 'commit', blob: 'b2', content: 'see <20260101.ABC@example.org>' },
    ], []);
    const hits = await index.searchPage('r', { kind: 'literal', text: 'abc@example' }, {}, { limit: 10 });
    expect(hits.map((h) => h.target)).toEqual([T(1)]);
    // A second start: still one warning (per index opened), the schema as it is.
    expect((await SqlNotesIndex.open(db)).warnings).toHaveLength(1);
  });
});
