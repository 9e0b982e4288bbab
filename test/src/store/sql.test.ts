// The SQL surface behaves the same on both engines: placeholders, types, transactions that
// commit or roll back, transaction locks that serialise, migrations, exclusive jobs, notifications.
import { describe, expect, it } from 'vitest';
import { describeEngines } from '../../helpers/engines.js';
import { numberedPlaceholders } from '../../../src/store/sql.js';
import { openDatabase, sqliteLimits } from '../../../src/store/sqlite.js';
import { SqliteDatabase } from '../../../src/store/sql-sqlite.js';

describe('numberedPlaceholders', () => {
  it('numbers ? outside quotes only', () => {
    expect(numberedPlaceholders("SELECT ?, '?', \"a?\", ? FROM t WHERE x = ?")).toBe("SELECT $1, '?', \"a?\", $2 FROM t WHERE x = $3");
  });
});

describe('sqliteLimits', () => {
  it('makes a bound LIMIT or OFFSET an expression, and leaves literals and other parameters alone', () => {
    expect(sqliteLimits('SELECT k FROM t WHERE n > ? ORDER BY n LIMIT ? OFFSET ?')).toBe('SELECT k FROM t WHERE n > ? ORDER BY n LIMIT +? OFFSET +?');
    expect(sqliteLimits('SELECT k FROM t limit ?')).toBe('SELECT k FROM t limit +?');
    expect(sqliteLimits('SELECT k FROM t LIMIT 2')).toBe('SELECT k FROM t LIMIT 2');
  });

  it('is applied to every statement a connection of openDatabase prepares', () => {
    const db = openDatabase(':memory:');
    try {
      expect(db.prepare('SELECT 1 LIMIT ?').source).toBe('SELECT 1 LIMIT +?');
      expect(db.prepare('SELECT 1 LIMIT ?').pluck().all(5)).toEqual([1]);
    } finally {
      db.close();
    }
  });
});

describe('SqliteDatabase rows', () => {
  // Rows are read as arrays and made objects by a function per statement: the objects must be
  // what better-sqlite3 itself would make.
  it('makes the same objects: key order, types, a repeated name keeping its last value, a __proto__ column setting no prototype', async () => {
    const db = new SqliteDatabase(':memory:');
    try {
      expect(await db.get(`SELECT 2 AS b, ? AS a, NULL AS "we ird""\\", x'00ff' AS bin`, ['x'])).toEqual({ b: 2, a: 'x', 'we ird"\\': null, bin: Buffer.from([0, 255]) });
      expect(Object.keys((await db.get<object>('SELECT 1 AS z, 2 AS y, 3 AS x'))!)).toEqual(['z', 'y', 'x']);
      expect(await db.get('SELECT 1 AS a, 2 AS a')).toEqual({ a: 2 });
      const proto = (await db.get<Record<string, unknown>>('SELECT 1 AS "__proto__", 2 AS b'))!;
      expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
      expect(proto.b).toBe(2);
      expect(await db.all('SELECT value AS v FROM json_each(?)', ['[1,2,3]'])).toEqual([{ v: 1 }, { v: 2 }, { v: 3 }]);
      expect(await db.value('SELECT 7 AS seven, 8 AS eight')).toBe(7);
      expect(await db.value('SELECT 1 WHERE 0')).toBeUndefined();
      expect(await db.get('SELECT 1 WHERE 0')).toBeUndefined();
    } finally {
      await db.close();
    }
  });
});

describe('SqliteDatabase change mark', () => {
  it('changeMarkNow is changeMark without waiting: the same mark, moved by a change, and none while a transaction is open', async () => {
    const db = new SqliteDatabase(':memory:');
    try {
      await db.run('CREATE TABLE t (n INTEGER)');
      const before = db.changeMarkNow();
      expect(before).toBe(await db.changeMark());
      let inside: number | undefined = -1;
      await db.transaction(async (x) => {
        await x.run('INSERT INTO t VALUES (1)');
        // Its uncommitted row must not mark a read; changeMark would wait for the commit.
        inside = db.changeMarkNow();
      });
      expect(inside).toBeUndefined();
      const after = db.changeMarkNow();
      expect(after).not.toBe(before);
      expect(await db.changeMark()).toBe(after);
    } finally {
      await db.close();
    }
  });
});

const SCHEMA = { sqlite: ['CREATE TABLE t (k TEXT PRIMARY KEY, n INTEGER NOT NULL)'], postgres: ['CREATE TABLE t (k TEXT PRIMARY KEY, n BIGINT NOT NULL)'] };

describeEngines('SqlDatabase', (open) => {
  it('migrates once, and reads back numbers as numbers', async () => {
    const db = await open();
    await db.migrate('t', SCHEMA);
    await db.migrate('t', SCHEMA);
    await db.run('INSERT INTO t (k, n) VALUES (?, ?)', ['a', 1_700_000_000_123]);
    expect(await db.get('SELECT k, n FROM t WHERE k = ?', ['a'])).toEqual({ k: 'a', n: 1_700_000_000_123 });
    expect(await db.value('SELECT COUNT(*) FROM t')).toBe(1);
    expect(await db.value('SELECT SUM(n) FROM t')).toBe(1_700_000_000_123);
    expect((await db.run('UPDATE t SET n = n + 1 WHERE k = ?', ['zzz'])).changes).toBe(0);
  });

  it('honours a bound LIMIT and OFFSET, statement after statement with new values', async () => {
    const db = await open();
    await db.migrate('t', SCHEMA);
    for (let i = 1; i <= 5; i++) await db.run('INSERT INTO t (k, n) VALUES (?, ?)', [`k${i}`, i]);
    const page = (after: number, limit: number, offset = 0) => db.all<{ n: number }>('SELECT n FROM t WHERE n > ? ORDER BY n LIMIT ? OFFSET ?', [after, limit, offset]);
    expect((await page(0, 2)).map((r) => r.n)).toEqual([1, 2]);
    expect((await page(2, 3)).map((r) => r.n)).toEqual([3, 4, 5]);
    expect((await page(0, 2, 3)).map((r) => r.n)).toEqual([4, 5]);
    expect((await page(4, 10)).map((r) => r.n)).toEqual([5]);
  });

  it('column() reads the first column of every row, and the statement still reads rows after it', async () => {
    const db = await open();
    await db.migrate('t', SCHEMA);
    for (let i = 1; i <= 3; i++) await db.run('INSERT INTO t (k, n) VALUES (?, ?)', [`k${i}`, i]);
    const sql = 'SELECT k, n FROM t WHERE n > ? ORDER BY n LIMIT ?';
    expect(await db.column(sql, [0, 10])).toEqual(['k1', 'k2', 'k3']);
    expect(await db.column(sql, [3, 10])).toEqual([]);
    // The same text through all(), get() and value(): rows again, on the statement column() used.
    expect(await db.all(sql, [1, 10])).toEqual([{ k: 'k2', n: 2 }, { k: 'k3', n: 3 }]);
    expect(await db.get(sql, [0, 1])).toEqual({ k: 'k1', n: 1 });
    expect(await db.value(sql, [2, 1])).toBe('k3');
    expect(await db.column('SELECT n FROM t ORDER BY n', [])).toEqual([1, 2, 3]);
    expect(await db.transaction((tx) => tx.column<string>(sql, [1, 1]))).toEqual(['k2']);
    await expect(db.column('UPDATE t SET n = n WHERE k = ?', ['k1'])).rejects.toThrow(/returns no rows/);
  });

  it('rolls back a transaction that throws, commits one that resolves', async () => {
    const db = await open();
    await db.migrate('t', SCHEMA);
    await expect(db.transaction(async (tx) => {
      await tx.run('INSERT INTO t (k, n) VALUES (?, ?)', ['x', 1]);
      throw new Error('no');
    })).rejects.toThrow('no');
    expect(await db.value('SELECT COUNT(*) FROM t')).toBe(0);
    await db.transaction(async (tx) => tx.run('INSERT INTO t (k, n) VALUES (?, ?)', ['y', 2]));
    expect(await db.value('SELECT n FROM t WHERE k = ?', ['y'])).toBe(2);
  });

  it('serialises read-then-write transactions that lock one key', async () => {
    const db = await open();
    await db.migrate('t', SCHEMA);
    await db.run('INSERT INTO t (k, n) VALUES (?, ?)', ['c', 0]);
    await Promise.all(Array.from({ length: 20 }, () => db.transaction(async (tx) => {
      await tx.lock('counter c');
      const n = (await tx.value<number>('SELECT n FROM t WHERE k = ?', ['c']))!;
      await new Promise((r) => setTimeout(r, 1));
      await tx.run('UPDATE t SET n = ? WHERE k = ?', [n + 1, 'c']);
    })));
    expect(await db.value('SELECT n FROM t WHERE k = ?', ['c'])).toBe(20);
  });

  it('serialises them as well when the lock travels with the read and the write with COMMIT', async () => {
    const db = await open();
    await db.migrate('t', SCHEMA);
    await db.run('INSERT INTO t (k, n) VALUES (?, ?)', ['c', 0]);
    await Promise.all(Array.from({ length: 20 }, (_, i) => db.transaction(async (tx) => {
      await tx.lockWithNext('counter c');
      const n = (await tx.value<number>('SELECT n FROM t WHERE k = ?', ['c']))!;
      await new Promise((r) => setTimeout(r, 1));
      await tx.run('INSERT INTO t (k, n) VALUES (?, ?)', [`row ${i}`, i]);
      await tx.runLast('UPDATE t SET n = ? WHERE k = ?', [n + 1, 'c']);
    })));
    expect(await db.value('SELECT n FROM t WHERE k = ?', ['c'])).toBe(20);
    expect(await db.value('SELECT COUNT(*) FROM t')).toBe(21);
  });

  it('a failing last write rolls the whole transaction back and is thrown', async () => {
    const db = await open();
    await db.migrate('t', SCHEMA);
    await db.run('INSERT INTO t (k, n) VALUES (?, ?)', ['taken', 1]);
    await expect(db.transaction(async (tx) => {
      await tx.run('INSERT INTO t (k, n) VALUES (?, ?)', ['new', 2]);
      await tx.runLast('INSERT INTO t (k, n) VALUES (?, ?)', ['taken', 3]);
      return 'answered';
    })).rejects.toThrow(/unique|duplicate/i);
    expect(await db.all('SELECT k, n FROM t ORDER BY k')).toEqual([{ k: 'taken', n: 1 }]);
    // The connection is clean afterwards: the next transactions commit.
    for (let i = 0; i < 12; i++) await db.transaction(async (tx) => tx.run('UPDATE t SET n = n + 1 WHERE k = ?', ['taken']));
    expect(await db.value('SELECT n FROM t WHERE k = ?', ['taken'])).toBe(13);
  });

  it('a statement that fails after a pipelined lock throws its own error, not the aborted transaction\'s', async () => {
    const db = await open();
    await db.migrate('t', SCHEMA);
    await expect(db.transaction(async (tx) => {
      await tx.lockWithNext('k');
      await tx.run('INSERT INTO t (k, n) VALUES (?, ?)', ['a', null]);
    })).rejects.toThrow(/null/i);
    expect(await db.value('SELECT COUNT(*) FROM t')).toBe(0);
  });

  it('runs one exclusive job of a name at a time', async () => {
    const db = await open();
    let release!: () => void;
    const first = db.exclusive('job', () => new Promise<void>((r) => (release = r)));
    await new Promise((r) => setTimeout(r, 50));
    expect(await db.exclusive('job', async () => undefined)).toBe(false);
    release();
    expect(await first).toBe(true);
    expect(await db.exclusive('job', async () => undefined)).toBe(true);
  });

  it('delivers notifications to listeners', async () => {
    const db = await open();
    const heard: string[] = [];
    const stop = await db.listen('mkt_test', (p) => heard.push(p));
    await db.notify('mkt_test', 'hello');
    for (let i = 0; i < 100 && heard.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(heard).toEqual(['hello']);
    stop();
  });
});

describeEngines('SqlDatabase scheduled jobs', (open) => {
  it('runs a job once per period, even when instances fire one after another', async () => {
    const db = await open();
    let runs = 0;
    const job = async () => void runs++;
    expect(await db.exclusive('reaper', job, { period: 1000 })).toBe(true);
    expect(await db.exclusive('reaper', job, { period: 1000 })).toBe(false);
    // A late instance with an older period does not run it again.
    expect(await db.exclusive('reaper', job, { period: 500 })).toBe(false);
    expect(await db.exclusive('reaper', job, { period: 2000 })).toBe(true);
    const racing = await Promise.all(Array.from({ length: 10 }, () => db.exclusive('reaper', job, { period: 3000 })));
    expect(racing.filter(Boolean)).toHaveLength(1);
    expect(runs).toBe(3);
  });
});

describeEngines('SqlDatabase and hostile text', (open, engine) => {
  it('a NUL in text is a 400 input error on PostgreSQL (which cannot store it), stored as given on SQLite', async () => {
    const db = await open();
    await db.migrate('t', SCHEMA);
    const write = db.transaction((tx) => tx.run('INSERT INTO t (k, n) VALUES (?, ?)', ['a\u0000b', 1]));
    if (engine === 'postgres') {
      await expect(write).rejects.toMatchObject({ name: 'UnstorableInputError', statusCode: 400 });
      expect(await db.value('SELECT COUNT(*) FROM t')).toBe(0);
    } else {
      await write;
      expect(await db.value('SELECT k FROM t')).toBe('a\u0000b');
    }
  });
});
