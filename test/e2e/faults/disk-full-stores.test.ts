// Issue 35, a full disk, beneath the servers: the SQLite engine and the git notes writer on a small
// tmpfs filled to the last byte. SQLite's SQLITE_FULL leaves no transaction open, so the very next
// write after space is freed commits; a notes write refused for space is a DiskFullError that
// leaves the ref where it was, no temporary or index-less pack, and a repository `git fsck` passes;
// a ref update refused for space is a DiskFullError too, not a ref that moved (which would retry).
import { afterEach, describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteDatabase } from '../../../src/store/sql-sqlite.js';
import { RepoGitPool } from '../../../src/git/repo-git.js';
import { writeNoteCommits, type NoteChange } from '../../../src/git/notes-write.js';
import { readRef } from '../../../src/git/refs.js';
import { git } from '../../../src/git/run.js';
import { DiskFullError, isDiskFull } from '../../../src/util/disk-full.js';
import { dirOn, smallDisk } from '../../helpers/small-disk.js';
import { fsck } from '../../helpers/git.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const change = (i: number, size = 20_000): NoteChange => ({
  target: (i + 1).toString(16).padStart(40, '0'),
  content: `note ${i}\n${'n'.repeat(size)}\n`,
  author: { name: 'T', email: 't@example.com' },
  message: `note ${i}\n`,
  nowSeconds: 1_700_000_000 + i,
});

describe('SQLite on a full disk', () => {
  it('a transaction refused with SQLITE_FULL leaves none open: the next write after freeing space commits, and integrity_check passes', async () => {
    const disk = await smallDisk(4 * 1024 * 1024);
    cleanups.push(() => disk.remove());
    const db = new SqliteDatabase(join(dirOn(disk, 'data'), 'test.db'));
    cleanups.push(() => db.close());
    await db.run('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
    for (let i = 0; i < 20; i++) await db.run('INSERT INTO t (body) VALUES (?)', ['a'.repeat(3000)]);

    disk.fill();
    // Inside a transaction (rows then COMMIT), and in autocommit: each refused for space.
    const inTx = await db
      .transaction(async (tx) => {
        for (let i = 0; i < 20; i++) await tx.run('INSERT INTO t (body) VALUES (?)', ['b'.repeat(3000)]);
      })
      .then(() => undefined, (err: unknown) => err);
    expect(isDiskFull(inTx), String(inTx)).toBe(true);
    expect(db.db.inTransaction).toBe(false);
    const auto = await db.run('INSERT INTO t (body) VALUES (?)', ['c'.repeat(3000)]).then(() => undefined, (err: unknown) => err);
    expect(isDiskFull(auto), String(auto)).toBe(true);
    expect(db.db.inTransaction).toBe(false);
    // Reads answer meanwhile.
    expect(await db.value('SELECT count(*) FROM t')).toBe(20);

    disk.free();
    // The very next write commits: no retry, no reopening.
    await db.transaction(async (tx) => {
      await tx.run('INSERT INTO t (body) VALUES (?)', ['after']);
    });
    await db.run('INSERT INTO t (body) VALUES (?)', ['after, autocommit']);
    expect(await db.value('SELECT count(*) FROM t')).toBe(22);
    expect(await db.value('PRAGMA integrity_check')).toBe('ok');
  });
});

describe('git notes on a full disk', () => {
  it('a notes write and a ref update refused for space are DiskFullError; the ref stays, no stray pack, fsck passes; freed, both work', async () => {
    const disk = await smallDisk(8 * 1024 * 1024);
    cleanups.push(() => disk.remove());
    const gitDir = join(dirOn(disk, 'repos'), 'app.git');
    await git(undefined, ['init', '-q', '--bare', '--object-format=sha1', gitDir]);
    const pool = new RepoGitPool();
    cleanups.push(() => pool.close());
    const repo = pool.get(gitDir, 'sha1');
    const ref = 'refs/notes/commits';

    const first = await writeNoteCommits(repo, null, [change(0), change(1)]);
    await repo.updateRef(ref, first[1]!, null);
    // Objects written while there was space, their ref moved only once the disk is full.
    const pending = await writeNoteCommits(repo, first[1]!, [change(2)]);
    const packs = readdirSync(join(gitDir, 'objects', 'pack')).sort();

    disk.fill();
    const written = await writeNoteCommits(repo, first[1]!, [change(3)]).then(() => undefined, (err: unknown) => err);
    expect(written).toBeInstanceOf(DiskFullError);
    expect((written as DiskFullError).message).toMatch(/^the disk is full: writing a pack of git objects; free space/);
    // Nothing half-written: no temporary file, no pack without its index.
    expect(readdirSync(join(gitDir, 'objects', 'pack')).sort()).toEqual(packs);

    const moved = await repo.updateRef(ref, pending[0]!, first[1]!).then(() => undefined, (err: unknown) => err);
    expect(isDiskFull(moved), String(moved)).toBe(true);
    expect(moved).toBeInstanceOf(DiskFullError);
    expect(readRef(gitDir, ref)).toBe(first[1]);

    disk.free();
    await repo.updateRef(ref, pending[0]!, first[1]!);
    const next = await writeNoteCommits(repo, pending[0]!, [change(3)]);
    await repo.updateRef(ref, next[0]!, pending[0]!);
    expect(readRef(gitDir, ref)).toBe(next[0]);
    const checked = await fsck(gitDir);
    expect(checked, checked.out).toMatchObject({ code: 0 });
    expect(checked.out).not.toMatch(/error|missing|broken|corrupt/i);
  });
});
