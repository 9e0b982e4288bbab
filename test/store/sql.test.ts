// The SQL surface behaves the same on both engines: placeholders, types, transactions that
// commit or roll back, transaction locks that serialise, migrations, exclusive jobs, notifications.
import { describe, expect, it } from 'vitest';
import { describeEngines } from '../helpers/engines.js';
import { numberedPlaceholders } from '../../src/store/sql.js';

describe('numberedPlaceholders', () => {
  it('numbers ? outside quotes only', () => {
    expect(numberedPlaceholders("SELECT ?, '?', \"a?\", ? FROM t WHERE x = ?")).toBe("SELECT $1, '?', \"a?\", $2 FROM t WHERE x = $3");
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
