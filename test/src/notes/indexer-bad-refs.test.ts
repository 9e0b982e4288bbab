// Issue 28, finding 5, on the notes indexer with a real bare repository and a real index (both
// engines): a notes ref that is not a readable notes commit (a blob, a tree, a tag, a commit whose
// tree is missing), written behind the server's back, is left out of a rebuild and of a catch-up
// and logged once, instead of failing the whole repository's index; moved to a notes commit it is
// indexed again.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { NotesIndexer } from '../../../src/notes/indexer.js';
import { SqlNotesIndex } from '../../../src/store/notes-sql.js';
import { describeEngines } from '../../helpers/engines.js';
import { tempDir } from '../../helpers/tmp.js';
import { GIT_ENV } from '../../helpers/notes-server.js';

let dir: { path: string; remove(): void };
let gitDir: string;
let target: string;
const git = (args: string[], input?: string) => execFileSync('git', ['--git-dir', gitDir, ...args], { input, encoding: 'utf8', env: { ...process.env, ...GIT_ENV } }).trim();

beforeEach(() => {
  dir = tempDir('mkt-notes-badref-');
  gitDir = join(dir.path, 'repo.git');
  execFileSync('git', ['init', '-q', '--bare', gitDir]);
  target = git(['commit-tree', git(['mktree'], ''), '-m', 'c']);
  const blob = git(['hash-object', '-w', '--stdin'], 'a fine note');
  git(['notes', '--ref=good', 'add', '-C', blob, target]);
});
afterEach(() => dir?.remove());

/** Refs that are not notes commits, written straight into the repository. */
function writeBadRefs(): Record<string, string> {
  const blob = git(['hash-object', '-w', '--stdin'], 'not a notes commit');
  const tree = git(['mktree'], `100644 blob ${blob}\t${target}\n`);
  const tag = git(['mktag'], `object ${git(['rev-parse', 'refs/notes/good'])}\ntype commit\ntag t\ntagger T <t@example.com> 1700000000 +0000\n\na tag\n`);
  const orphan = git(['hash-object', '-t', 'commit', '--literally', '-w', '--stdin'], `tree ${'e'.repeat(40)}\nauthor T <t@example.com> 1 +0000\ncommitter T <t@example.com> 1 +0000\n\nx\n`);
  const bad = { 'bad/blob': blob, 'bad/tree': tree, 'bad/tag': tag, 'bad/orphan': orphan };
  for (const [ns, oid] of Object.entries(bad)) git(['update-ref', `refs/notes/${ns}`, oid]);
  return bad;
}

describeEngines('NotesIndexer and refs that are not notes commits', (open) => {
  it('rebuild and catch-up index the good refs, leave the bad ones out, log each bad tip once, and read a ref again once it is a notes commit', async () => {
    const index = await SqlNotesIndex.open(await open());
    const warnings: Record<string, unknown>[] = [];
    const indexer = new NotesIndexer(index, { warn: (fields) => warnings.push(fields) });
    const repo = { id: 'r1', dir: gitDir };
    const bad = writeBadRefs();
    expect(await indexer.rebuild(repo)).toEqual({ namespaces: 1, notes: 1 });
    expect([...(await index.tips('r1')).keys()]).toEqual(['good']);
    expect(warnings.map((w) => w.ref).sort()).toEqual(Object.keys(bad).map((ns) => `refs/notes/${ns}`).sort());
    expect(warnings.find((w) => w.ref === 'refs/notes/bad/blob')?.reason).toMatch(/is a blob, not a commit/);
    expect(warnings.find((w) => w.ref === 'refs/notes/bad/orphan')?.reason).toMatch(/cannot be read/);

    // Catch-up after the good ref moved: still no throw, no second warning.
    git(['notes', '--ref=good', 'add', '-f', '-m', 'a fine note, edited', target]);
    await indexer.ensureCurrent(repo);
    await indexer.ensureCurrent(repo);
    expect((await index.get('r1', 'good', target))?.content).toBe('a fine note, edited\n');
    expect(warnings).toHaveLength(4);
    expect(await indexer.isCurrent(repo, 'bad/blob')).toBe(true);
    expect(indexer.badTipReason('r1', 'bad/tag', bad['bad/tag']!)).toMatch(/is a tag, not a commit/);

    // A namespace the index holds, moved to a blob, leaves the index; moved to a notes commit, it is back.
    git(['update-ref', 'refs/notes/good', bad['bad/blob']!]);
    await indexer.ensureCurrent(repo);
    expect((await index.tips('r1')).has('good')).toBe(false);
    expect(warnings).toHaveLength(5);
    git(['update-ref', 'refs/notes/bad/tree', git(['commit-tree', bad['bad/tree']!, '-m', 'notes'])]);
    await indexer.ensureCurrent(repo);
    expect((await index.get('r1', 'bad/tree', target))?.content).toBe('not a notes commit');
    await indexer.close();
  });

  it('a fresh indexer catching up a repository with only bad refs marks it indexed and holds nothing', async () => {
    const index = await SqlNotesIndex.open(await open());
    const indexer = new NotesIndexer(index);
    const repo = { id: 'r2', dir: gitDir };
    writeBadRefs();
    git(['update-ref', '-d', 'refs/notes/good']);
    await indexer.ensureCurrent(repo);
    expect(await indexer.isIndexed('r2')).toBe(true);
    expect((await index.tips('r2')).size).toBe(0);
    await indexer.close();
  });
});
