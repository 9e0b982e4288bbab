// The notes indexer on a real bare repository and a real SQLite index: a note blob over the size
// limit written behind the server's back is never indexed (full read and incremental catch-up,
// including a note that grows past the limit), and the remembered ref tips stay bounded however
// many namespace names readers ask for.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotesIndexer } from '../../../src/notes/indexer.js';
import { SqliteNotesIndex } from '../../../src/store/notes.js';
import { openDatabase, type Db } from '../../../src/store/sqlite.js';
import { MAX_NOTE_BYTES } from '../../../src/schemas/notes.js';
import { tempDir } from '../../helpers/tmp.js';
import { GIT_ENV } from '../../helpers/notes-server.js';

let dir: { path: string; remove(): void };
let gitDir: string;
let db: Db;
let commits: string[];
const git = (args: string[], input?: string) => execFileSync('git', ['--git-dir', gitDir, ...args], { input, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, env: { ...process.env, ...GIT_ENV } }).trim();

/** Sets the note on `target` in refs/notes/<ns> with git itself, behind any server's back. */
function gitNote(ns: string, target: string, content: string): void {
  const blob = git(['hash-object', '-w', '--stdin'], content);
  git(['notes', `--ref=${ns}`, 'add', '-f', '-C', blob, target]);
}

beforeAll(() => {
  dir = tempDir('mkt-notes-indexer-');
  gitDir = join(dir.path, 'repo.git');
  execFileSync('git', ['init', '-q', '--bare', gitDir]);
  const tree = git(['mktree'], '');
  commits = [];
  for (let i = 0; i < 3; i++) commits.push(git(['commit-tree', tree, ...(i ? ['-p', commits[i - 1]!] : []), '-m', `c${i}`]));
  git(['update-ref', 'refs/heads/main', commits[2]!]);
  db = openDatabase(join(dir.path, 'marketplace.db'));
});
afterAll(() => {
  db?.close();
  dir?.remove();
});

describe('NotesIndexer and oversized notes', () => {
  it('skips a note over the limit on a full read and on catch-up, keeps the rest, and drops a note that grew past it', async () => {
    const index = new SqliteNotesIndex(db);
    const indexer = new NotesIndexer(index);
    const repo = { id: 'r1', dir: gitDir };
    gitNote('big', commits[0]!, 'small note');
    gitNote('big', commits[1]!, 'x'.repeat(MAX_NOTE_BYTES + 1));
    gitNote('big', commits[2]!, 'y'.repeat(MAX_NOTE_BYTES)); // exactly the limit is a note like any other
    expect(await indexer.rebuild(repo)).toEqual({ namespaces: 1, notes: 2 });
    expect(index.get('r1', 'big', commits[0]!)?.content).toBe('small note');
    expect(index.get('r1', 'big', commits[1]!)).toBeUndefined();
    expect(index.get('r1', 'big', commits[2]!)?.content).toHaveLength(MAX_NOTE_BYTES);

    // Incremental catch-up: a small note grows past the limit, an oversized one arrives.
    gitNote('big', commits[0]!, 'z'.repeat(MAX_NOTE_BYTES + 100));
    await indexer.ensureCurrent(repo);
    expect(index.get('r1', 'big', commits[0]!)).toBeUndefined();
    expect(index.counts('r1').get('big')).toBe(1);
    expect(index.tips('r1').get('big')).toBe(git(['rev-parse', 'refs/notes/big']));

    // A namespace first seen with an oversized note (read whole, not diffed).
    gitNote('fresh', commits[1]!, 'w'.repeat(2 * MAX_NOTE_BYTES));
    gitNote('fresh', commits[2]!, 'fine');
    await indexer.ensureCurrent(repo);
    expect(index.get('r1', 'fresh', commits[1]!)).toBeUndefined();
    expect(index.get('r1', 'fresh', commits[2]!)?.content).toBe('fine');
  });
});

describe('NotesIndexer remembered ref tips', () => {
  it('does not grow with namespace names that do not exist', async () => {
    const indexer = new NotesIndexer(new SqliteNotesIndex(db));
    const repo = { id: 'r2', dir: gitDir };
    await indexer.ensureCurrent(repo);
    for (let i = 0; i < 2000; i++) await indexer.ensureRefCurrent(repo, `nobody-asked-${i}`);
    for (const ns of ['big', 'fresh']) await indexer.ensureRefCurrent(repo, ns);
    expect(indexer.rememberedDiskTips).toBe(2);
  });
});
