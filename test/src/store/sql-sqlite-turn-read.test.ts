// SQLite's reads of one request turn share one read transaction (src/store/sql-sqlite.ts,
// statement(); src/util/request-turn.ts): begun at the turn's first read, committed when the turn
// ends, ended before any write, transaction, migration or close. What must hold: a write commits as
// it returns and every read after it sees it; nothing is left open once the turn ends; reads
// outside a request turn are their own; and over HTTP, a request sees every commit made before it
// was sent, by this process or another connection.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteDatabase } from '../../../src/store/sql-sqlite.js';
import { openDatabase, type Db } from '../../../src/store/sqlite.js';
import { inRequestTurn, requestArrived } from '../../../src/util/request-turn.js';
import { buildServer } from '../../../daemon/server.js';
import { createLogger } from '../../../daemon/logger.js';

/** Resolves once the check phase has run: the request turn open now (if any) has ended. */
const turnEnded = (): Promise<void> => new Promise((r) => setImmediate(r));

let dir: string;
let sql: SqliteDatabase;
/** Another connection to the same file, as another process (the CLI) would have. */
let other: Db;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mkt-turn-read-'));
  sql = new SqliteDatabase(join(dir, 'db.sqlite'));
  sql.db.exec('CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  other = openDatabase(join(dir, 'db.sqlite'));
  await turnEnded();
});

afterEach(async () => {
  await turnEnded();
  other.close();
  await sql.close();
  rmSync(dir, { recursive: true, force: true });
});

const count = async (): Promise<number | undefined> => sql.value<number>('SELECT count(*) FROM t');
const countFromOther = (): number => other.prepare('SELECT count(*) FROM t').pluck().get() as number;

describe('reads of a request turn', () => {
  it('share one read transaction, which the turn\'s end commits', async () => {
    requestArrived();
    expect(await count()).toBe(0);
    expect(sql.readingInTurn).toBe(true);
    // One snapshot for the turn: another connection's commit made after the turn's first read
    // is not in it...
    other.prepare("INSERT INTO t (v) VALUES ('a')").run();
    expect(await count()).toBe(0);
    await turnEnded();
    expect(inRequestTurn()).toBe(false);
    expect(sql.readingInTurn).toBe(false);
    // ...and is seen once the turn has ended.
    expect(await count()).toBe(1);
  });

  it('outside a request turn, each read is its own, as before', async () => {
    expect(await count()).toBe(0);
    expect(sql.readingInTurn).toBe(false);
    other.prepare("INSERT INTO t (v) VALUES ('a')").run();
    expect(await count()).toBe(1);
  });

  it('a write ends it first: it commits as it returns, and the turn\'s later reads see it', async () => {
    requestArrived();
    expect(await count()).toBe(0);
    await sql.run("INSERT INTO t (v) VALUES ('a')");
    expect(sql.readingInTurn).toBe(false);
    expect(countFromOther()).toBe(1);
    expect(await count()).toBe(1);
    // A write read through all() (RETURNING) is a write too.
    expect(await sql.all<{ k: number }>("INSERT INTO t (v) VALUES ('b') RETURNING k")).toEqual([{ k: 2 }]);
    expect(countFromOther()).toBe(2);
    // Another connection's commit made after the turn's reads began again is seen after a write
    // of this one: the write ended the snapshot.
    expect(await count()).toBe(2);
    other.prepare("INSERT INTO t (v) VALUES ('c')").run();
    await sql.run("UPDATE t SET v = 'bb' WHERE k = 2");
    expect(await count()).toBe(3);
  });

  it('a transaction after reads of the same turn begins, commits and is seen', async () => {
    requestArrived();
    expect(await count()).toBe(0);
    await sql.transaction(async (tx) => {
      await tx.run("INSERT INTO t (v) VALUES ('a')");
      expect(await tx.value('SELECT count(*) FROM t')).toBe(1);
    });
    expect(countFromOther()).toBe(1);
    expect(await count()).toBe(1);
    // A transaction that fails leaves the turn's reads working.
    await expect(
      sql.transaction(async (tx) => {
        await tx.run("INSERT INTO t (v) VALUES ('b')");
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    expect(await count()).toBe(1);
  });

  it('the change mark moves with the turn\'s snapshot, not inside it', async () => {
    requestArrived();
    const before = sql.changeMarkNow();
    other.prepare("INSERT INTO t (v) VALUES ('a')").run();
    // Inside the turn the mark is the snapshot's, as the reads are.
    expect(sql.changeMarkNow()).toBe(before);
    await turnEnded();
    expect(sql.changeMarkNow()).not.toBe(before);
  });

  it('a failed read leaves nothing open, and a write after it commits', async () => {
    requestArrived();
    expect(await count()).toBe(0);
    await expect(sql.get('SELECT * FROM missing')).rejects.toThrow(/no such table/);
    await sql.run("INSERT INTO t (v) VALUES ('a')");
    expect(countFromOther()).toBe(1);
    await turnEnded();
    expect(sql.readingInTurn).toBe(false);
  });

  it('code that takes the raw connection ends it first: what it runs commits as it returns', async () => {
    requestArrived();
    expect(await count()).toBe(0);
    expect(sql.readingInTurn).toBe(true);
    sql.db.prepare("INSERT INTO t (v) VALUES ('a')").run();
    expect(sql.readingInTurn).toBe(false);
    expect(countFromOther()).toBe(1);
  });

  it('closing in a turn ends it', async () => {
    const file = join(dir, 'closing.sqlite');
    const db = new SqliteDatabase(file);
    db.db.exec('CREATE TABLE u (x)');
    requestArrived();
    expect(await db.value('SELECT count(*) FROM u')).toBe(0);
    expect(db.readingInTurn).toBe(true);
    await db.close();
    expect(db.readingInTurn).toBe(false);
    // The turn's end finds it closed and does nothing.
    await turnEnded();
  });
});

describe('over HTTP', () => {
  it('each request sees every commit made before it was sent, however many are in flight', async () => {
    const app = await buildServer({
      logger: createLogger({ level: 'silent' }),
      service: {
        openapi: { title: 'test', version: '1.0.0' },
        async register(a) {
          a.get('/count', async () => ({ n: await count() }));
          a.get('/turn', async () => ({ turn: inRequestTurn() }));
          a.post('/add', async () => {
            await sql.run("INSERT INTO t (v) VALUES ('x')");
            return { n: await count() };
          });
        },
        async close() {},
      },
    });
    try {
      const url = await app.listen({ host: '127.0.0.1', port: 0 });
      const n = async (path: string, method = 'GET'): Promise<number> => {
        const init = method === 'GET' ? {} : { method, headers: { 'content-type': 'application/json' }, body: '{}' };
        const res = await fetch(`${url}${path}`, init);
        expect(res.status).toBe(200);
        return ((await res.json()) as { n: number }).n;
      };
      let committed = 0;
      for (let round = 0; round < 20; round++) {
        // Requests in flight together, so that several share a turn.
        const reads = await Promise.all(Array.from({ length: 8 }, () => n('/count')));
        for (const seen of reads) expect(seen).toBe(committed);
        // Another connection commits; every request sent after it must see it.
        other.prepare("INSERT INTO t (v) VALUES ('o')").run();
        committed++;
        const after = await Promise.all([n('/count'), n('/add', 'POST'), n('/count')]);
        committed++;
        // The add's own read sees its write; the reads beside it see at least the other's commit.
        expect(after[1]).toBe(committed);
        for (const seen of [after[0], after[2]]) expect(seen === committed - 1 || seen === committed).toBe(true);
      }
      expect(await n('/count')).toBe(committed);
      // The server's listener opens the turn; inject() does not pass through it, so it opens none.
      expect(await (await fetch(`${url}/turn`)).json()).toEqual({ turn: true });
      expect((await app.inject({ method: 'GET', url: '/turn' })).json()).toEqual({ turn: false });
    } finally {
      await app.close();
    }
  });
});
