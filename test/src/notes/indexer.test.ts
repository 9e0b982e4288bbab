// The notes indexer on a real bare repository and a real index (both engines): a note blob over
// the size limit written behind the server's back is never indexed (full read and incremental
// catch-up, including a note that grows past the limit), the remembered ref tips stay bounded
// however many namespace names readers ask for, two indexers on one database (two instances)
// catching up the same moves at once leave the index equal to the refs, and what an indexer
// remembers (tips, the indexed flag) is dropped when any instance changes the repository's index.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { NotesIndexer, REF_READ_TTL_MS } from '../../../src/notes/indexer.js';
import { SqlNotesIndex } from '../../../src/store/notes-sql.js';
import { listNotes } from '../../../src/git/notes-tree.js';
import { MAX_NOTE_BYTES } from '../../../src/schemas/notes.js';
import { describeEngines } from '../../helpers/engines.js';
import { tempDir } from '../../helpers/tmp.js';
import { GIT_ENV } from '../../helpers/notes-server.js';

let dir: { path: string; remove(): void };
let gitDir: string;
let commits: string[];
const git = (args: string[], input?: string) => execFileSync('git', ['--git-dir', gitDir, ...args], { input, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, env: { ...process.env, ...GIT_ENV } }).trim();

/** Sets the note on `target` in refs/notes/<ns> with git itself, behind any server's back. */
function gitNote(ns: string, target: string, content: string): void {
  const blob = git(['hash-object', '-w', '--stdin'], content);
  git(['notes', `--ref=${ns}`, 'add', '-f', '-C', blob, target]);
}

beforeEach(() => {
  dir = tempDir('mkt-notes-indexer-');
  gitDir = join(dir.path, 'repo.git');
  execFileSync('git', ['init', '-q', '--bare', gitDir]);
  const tree = git(['mktree'], '');
  commits = [];
  for (let i = 0; i < 6; i++) commits.push(git(['commit-tree', tree, ...(i ? ['-p', commits[i - 1]!] : []), '-m', `c${i}`]));
  git(['update-ref', 'refs/heads/main', commits[5]!]);
});
afterEach(() => dir?.remove());

describeEngines('NotesIndexer', (open) => {
  it('skips a note over the limit on a full read and on catch-up, keeps the rest, and drops a note that grew past it', async () => {
    const index = await SqlNotesIndex.open(await open());
    const indexer = new NotesIndexer(index);
    const repo = { id: 'r1', dir: gitDir };
    gitNote('big', commits[0]!, 'small note');
    gitNote('big', commits[1]!, 'x'.repeat(MAX_NOTE_BYTES + 1));
    gitNote('big', commits[2]!, 'y'.repeat(MAX_NOTE_BYTES)); // exactly the limit is a note like any other
    expect(await indexer.rebuild(repo)).toEqual({ namespaces: 1, notes: 2 });
    expect((await index.get('r1', 'big', commits[0]!))?.content).toBe('small note');
    expect(await index.get('r1', 'big', commits[1]!)).toBeUndefined();
    expect((await index.get('r1', 'big', commits[2]!))?.content).toHaveLength(MAX_NOTE_BYTES);

    // Incremental catch-up: a small note grows past the limit, an oversized one arrives.
    gitNote('big', commits[0]!, 'z'.repeat(MAX_NOTE_BYTES + 100));
    await indexer.ensureCurrent(repo);
    expect(await index.get('r1', 'big', commits[0]!)).toBeUndefined();
    expect((await index.counts('r1')).get('big')).toBe(1);
    expect((await index.tips('r1')).get('big')).toBe(git(['rev-parse', 'refs/notes/big']));

    // A namespace first seen with an oversized note (read whole, not diffed).
    gitNote('fresh', commits[1]!, 'w'.repeat(2 * MAX_NOTE_BYTES));
    gitNote('fresh', commits[2]!, 'fine');
    await indexer.ensureCurrent(repo);
    expect(await index.get('r1', 'fresh', commits[1]!)).toBeUndefined();
    expect((await index.get('r1', 'fresh', commits[2]!))?.content).toBe('fine');
    await indexer.close();
  });

  it('cachedNote answers what a read would, from memory, only while the ref was read within REF_READ_TTL_MS', async () => {
    const indexer = new NotesIndexer(await SqlNotesIndex.open(await open()));
    const repo = { id: 'r5', dir: gitDir };
    gitNote('commits', commits[0]!, 'one');
    // The clock the ref reads are timed by, held still and moved by hand.
    // Whole milliseconds: with a fractional start, (t + 100) - t can come out a hair under 100.
    let now = Math.ceil(performance.now());
    const clock = vi.spyOn(performance, 'now').mockImplementation(() => now);
    /** What a read answers: the ref caught up, then the note (NotesApi.readable and get). */
    const read = async (ns: string, target: string) => {
      await indexer.ensureRefCurrent(repo, ns);
      return (await indexer.note(repo.id, ns, target))?.content;
    };
    try {
      expect(indexer.cachedNote(repo, 'commits', commits[0]!)).toBeUndefined();
      // Once a read found everything in memory (a catch-up forgets what it remembered, and on
      // PostgreSQL so does its own notification when it arrives).
      await expect.poll(async () => [await read('commits', commits[0]!), indexer.cachedNote(repo, 'commits', commits[0]!)?.content]).toEqual(['one', 'one']);
      // No note, a namespace with no ref, a target never read: the read's to answer.
      expect(await read('commits', commits[1]!)).toBeUndefined();
      expect(indexer.cachedNote(repo, 'commits', commits[1]!)).toBeUndefined();
      expect(await read('nowhere', commits[0]!)).toBeUndefined();
      expect(indexer.cachedNote(repo, 'nowhere', commits[0]!)).toBeUndefined();
      expect(indexer.cachedNote(repo, 'commits', commits[2]!)).toBeUndefined();

      // Changed behind the server's back: a read within REF_READ_TTL_MS of the last ref read still
      // answers what it knew, and so does cachedNote; after it, cachedNote leaves it to the read,
      // which finds the new note.
      gitNote('commits', commits[0]!, 'two');
      now += REF_READ_TTL_MS - 1;
      expect(indexer.cachedNote(repo, 'commits', commits[0]!)?.content).toBe('one');
      expect(await read('commits', commits[0]!)).toBe('one');
      now += 1;
      expect(indexer.cachedNote(repo, 'commits', commits[0]!)).toBeUndefined();
      expect(await read('commits', commits[0]!)).toBe('two');
      await expect.poll(async () => [await read('commits', commits[0]!), indexer.cachedNote(repo, 'commits', commits[0]!)?.content]).toEqual(['two', 'two']);
    } finally {
      clock.mockRestore();
      await indexer.close();
    }
  });

  it('does not grow with namespace names that do not exist', async () => {
    gitNote('big', commits[0]!, 'one');
    gitNote('fresh', commits[0]!, 'two');
    const indexer = new NotesIndexer(await SqlNotesIndex.open(await open()));
    const repo = { id: 'r2', dir: gitDir };
    await indexer.ensureCurrent(repo);
    for (let i = 0; i < 2000; i++) await indexer.ensureRefCurrent(repo, `nobody-asked-${i}`);
    for (const ns of ['big', 'fresh']) await indexer.ensureRefCurrent(repo, ns);
    expect(indexer.rememberedDiskTips).toBe(2);
    await indexer.close();
  });

  it("remembers that a repository is indexed, and its tips, until any instance changes its index; an empty notification forgets every repository", async () => {
    const db = await open();
    const index = await SqlNotesIndex.open(db);
    const a = new NotesIndexer(index);
    const other = new NotesIndexer(await SqlNotesIndex.open(db));
    const repo = { id: 'r4', dir: gitDir };
    gitNote('commits', commits[0]!, 'one');
    expect(await a.isIndexed(repo.id)).toBe(false);
    await a.ensureCurrent(repo);
    expect(await a.isIndexed(repo.id)).toBe(true);
    const isIndexed = vi.spyOn(index, 'isIndexed');
    const tips = vi.spyOn(index, 'tips');
    /** Index reads of one up-to-date check and one look at the flag (0 once remembered). */
    const reads = async () => {
      isIndexed.mockClear();
      tips.mockClear();
      await a.ensureCurrent(repo);
      expect(await a.isIndexed(repo.id)).toBe(true);
      return isIndexed.mock.calls.length + tips.mock.calls.length;
    };
    // Once the catch-up's own notification has been heard, nothing is read again.
    await expect.poll(reads).toBe(0);

    // Another instance drops the repository's index: this one hears it and reads again.
    await (await SqlNotesIndex.open(db)).dropRepo(repo.id);
    await expect.poll(() => a.isIndexed(repo.id)).toBe(false);
    await other.ensureCurrent(repo);
    await expect.poll(() => a.isIndexed(repo.id)).toBe(true);

    // The listener reconnected (an empty payload): whatever was missed meanwhile is read again.
    await expect.poll(reads).toBe(0);
    await db.notify('mkt_notes_index', '');
    await expect.poll(reads).toBe(2);
    await a.close();
    await other.close();
  });

  it('two indexers on one database (two instances) catch up the same moves at once and agree with the refs', async () => {
    const db = await open();
    const a = new NotesIndexer(await SqlNotesIndex.open(db));
    const b = new NotesIndexer(await SqlNotesIndex.open(db));
    const index = await SqlNotesIndex.open(db);
    const repo = { id: 'r3', dir: gitDir };
    for (let round = 0; round < 4; round++) {
      gitNote('commits', commits[round]!, `round ${round}`);
      if (round === 2) git(['update-ref', '-d', 'refs/notes/gone']);
      if (round < 2) gitNote('gone', commits[round]!, `gone ${round}`);
      await Promise.all([a.ensureCurrent(repo), b.ensureCurrent(repo), a.ensureCurrent(repo), b.ensureCurrent(repo)]);
      const tip = git(['rev-parse', 'refs/notes/commits']);
      expect((await index.tips('r3')).get('commits')).toBe(tip);
      const want = (await listNotes(gitDir, tip)).map((n) => n.target).sort();
      expect((await index.counts('r3')).get('commits')).toBe(want.length);
      // Each sees what the other indexed, through its own caches.
      for (const x of [a, b]) expect((await x.note('r3', 'commits', commits[round]!))?.content).toBe(`round ${round}`);
    }
    expect((await index.tips('r3')).has('gone')).toBe(false);
    expect(await index.counts('r3')).toEqual(new Map([['commits', 4]]));
    await a.close();
    await b.close();
  });
});
