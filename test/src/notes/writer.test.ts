// NoteWriter's retry budget: while something outside the server moves the ref on every attempt,
// a write keeps trying until its time budget is spent, then fails with ContentionError having
// written nothing; and every write holds the ref lock its indexer is given (NotesIndexer.writing).
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NotesIndexer } from '../../../src/notes/indexer.js';
import type { RefLock } from '../../../src/notes/locks.js';
import { ContentionError, NoteWriter } from '../../../src/notes/writer.js';
import { SqlNotesIndex } from '../../../src/store/notes-sql.js';
import { SqliteDatabase } from '../../../src/store/sql-sqlite.js';
import { tempDir } from '../../helpers/tmp.js';
import { GIT_ENV } from '../../helpers/notes-server.js';

const REF = 'refs/notes/commits';
let dir: { path: string; remove(): void };
let gitDir: string;
let commit: string;
let db: SqliteDatabase;
const git = (args: string[]) => execFileSync('git', ['--git-dir', gitDir, ...args], { encoding: 'utf8', env: { ...process.env, ...GIT_ENV } }).trim();

beforeEach(() => {
  dir = tempDir('mkt-notes-writer-');
  gitDir = join(dir.path, 'repo.git');
  execFileSync('git', ['init', '-q', '--bare', gitDir]);
  commit = git(['commit-tree', git(['mktree']), '-m', 'c']);
  db = new SqliteDatabase(join(dir.path, 'm.db'));
});
afterEach(async () => {
  await db.close();
  dir.remove();
});

describe('NoteWriter', () => {
  it('gives up with ContentionError once its time budget is spent, writing nothing', async () => {
    const index = await SqlNotesIndex.open(db);
    const indexer = new NotesIndexer(index);
    git(['update-ref', REF, git(['commit-tree', git(['mktree']), '-m', 'start'])]);
    let races = 0;
    const racingNow = () => {
      const tip = git(['rev-parse', REF]);
      git(['update-ref', REF, git(['commit-tree', `${tip}^{tree}`, '-p', tip, '-m', `race ${++races}`]), tip]);
      return Math.floor(Date.now() / 1000);
    };
    // The budget fits several attempts however loaded the machine: an attempt and its race (a
    // handful of git processes) are timed first, and the budget is at least four times that.
    const t0 = Date.now();
    racingNow();
    races = 0;
    const budgetMs = Math.max(400, 4 * 3 * (Date.now() - t0));
    const writer = new NoteWriter(indexer, racingNow, { budgetMs });
    const repo = { id: 'r', dir: gitDir, objectFormat: 'sha1' as const };
    const started = Date.now();
    const err = await writer.write(repo, { namespace: 'commits', target: commit, content: 'x', author: { name: 'A', email: 'a@e' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContentionError);
    expect((err as Error).message).toMatch(/refs\/notes\/commits kept moving for \d+\.\d s \(\d+ attempts\)/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(budgetMs);
    expect(races).toBeGreaterThanOrEqual(2); // as many as fit in the budget, not a fixed count
    expect(git(['log', '-1', '--format=%s', REF])).toMatch(/^race \d+$/);
    await indexer.close();
  });

  it('holds the ref lock it is given around each write', async () => {
    const index = await SqlNotesIndex.open(db);
    const held: string[] = [];
    const refLock: RefLock = async (repoId, ref, fn) => {
      held.push(`${repoId} ${ref}`);
      return fn();
    };
    const indexer = new NotesIndexer(index, undefined, { refLock });
    const writer = new NoteWriter(indexer, () => 1_700_000_000);
    const out = await writer.write({ id: 'r', dir: gitDir, objectFormat: 'sha1' }, { namespace: 'reviews', target: commit, content: 'ok', author: { name: 'A', email: 'a@e' } });
    expect(out.action).toBe('added');
    expect(held).toEqual(['r refs/notes/reviews']);
    expect((await index.get('r', 'reviews', commit))?.content).toBe('ok');
    await indexer.close();
  });
});
