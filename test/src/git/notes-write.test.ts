// Note writes by tree surgery, checked against git itself: hundreds of notes (so the fan-out
// grows), replacing and removing notes that git wrote at its own fan-out, and the compare-and-swap.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeNote, RefMovedError, FANOUT_THRESHOLD } from '../../../src/git/notes-write.js';
import { listNotes } from '../../../src/git/notes-tree.js';
import { tempDir } from '../../helpers/tmp.js';

const N = 270;
let dir: { path: string; remove(): void };
let commits: string[];
const who = { name: 'Ana', email: 'ana@example.com' };
const run = (args: string[], input?: string) => execFileSync('git', ['--git-dir', dir.path, ...args], { input, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: '/nonexistent' } }).trim();

beforeAll(() => {
  dir = tempDir('mkt-notes-write-');
  run(['init', '-q', '--bare', dir.path]);
  // N commits and, on refs/notes/git, a note on each written by git fast-import (git's own fan-out).
  let stream = '';
  for (let i = 1; i <= N; i++) stream += `commit refs/heads/main\nmark :${i}\ncommitter T <t@e> ${1700000000 + i} +0000\ndata 4\nc${String(i).padStart(3, '0')}\n${i > 1 ? `from :${i - 1}\n` : ''}\n`;
  stream += `commit refs/notes/git\ncommitter T <t@e> 1700001000 +0000\ndata 5\nnotes\n`;
  for (let i = 1; i <= N; i++) stream += `N inline :${i}\ndata 7\ngit-${String(i).padStart(3, '0')}\n`;
  run(['fast-import', '--quiet'], stream + '\n');
  commits = run(['rev-list', '--reverse', 'main']).split('\n');
});
afterAll(() => dir?.remove());

describe('writeNote', () => {
  it(`writes ${N} notes one by one; git reads every one and the trees stay bounded`, async () => {
    let tip: string | null = null;
    for (const [i, c] of commits.entries()) tip = await writeNote(dir.path, { ref: 'refs/notes/api', target: c, content: `api ${i}`, expectedTip: tip, author: who, message: `n${i}`, nowSeconds: 1700000000 });
    expect(run(['notes', '--ref=api', 'list']).split('\n')).toHaveLength(N);
    for (const i of [0, 150, N - 1]) expect(run(['notes', '--ref=api', 'show', commits[i]!])).toBe(`api ${i}`);
    const root = run(['ls-tree', 'refs/notes/api']).split('\n');
    expect(root.length).toBeLessThanOrEqual(FANOUT_THRESHOLD + 256);
    expect(root.some((l) => l.includes(' tree '))).toBe(true);
    expect(run(['log', '-1', '--format=%an <%ae>', 'refs/notes/api'])).toBe('Ana <ana@example.com>');
    expect((await listNotes(dir.path, 'refs/notes/api')).length).toBe(N);
  }, 240_000); // two git processes a write (writeNote alone starts its own): about 10 s here, more on a loaded machine

  it("replaces and removes notes git wrote at its own fan-out, without duplicates", async () => {
    const tip = run(['rev-parse', 'refs/notes/git']);
    const replaced = await writeNote(dir.path, { ref: 'refs/notes/git', target: commits[7]!, content: 'replaced', expectedTip: tip, author: who, message: 'r', nowSeconds: 1700000000 });
    expect(run(['notes', '--ref=git', 'show', commits[7]!])).toBe('replaced');
    const removed = await writeNote(dir.path, { ref: 'refs/notes/git', target: commits[8]!, content: null, expectedTip: replaced, author: who, message: 'd', nowSeconds: 1700000000 });
    expect(removed).toHaveLength(40);
    expect(() => run(['notes', '--ref=git', 'show', commits[8]!])).toThrow();
    const all = await listNotes(dir.path, 'refs/notes/git');
    expect(all).toHaveLength(N - 1);
    expect(new Set(all.map((n) => n.target)).size).toBe(N - 1);
  });

  it('refuses to move a ref that is no longer at the expected tip, and to create one that exists', async () => {
    const tip = run(['rev-parse', 'refs/notes/git']);
    const stale = run(['rev-parse', `${tip}~1`]);
    await expect(writeNote(dir.path, { ref: 'refs/notes/git', target: commits[1]!, content: 'x', expectedTip: stale, author: who, message: 'm', nowSeconds: 1 })).rejects.toBeInstanceOf(RefMovedError);
    await expect(writeNote(dir.path, { ref: 'refs/notes/git', target: commits[1]!, content: 'x', expectedTip: null, author: who, message: 'm', nowSeconds: 1 })).rejects.toBeInstanceOf(RefMovedError);
    expect(run(['rev-parse', 'refs/notes/git'])).toBe(tip);
  });
});

describe('a long-lived repository writer', () => {
  it('keeps only the current path of trees in memory, and no entry bytes in a shared pool slab', async () => {
    const { RepoGit } = await import('../../../src/git/repo-git.js');
    const { writeNoteCommits } = await import('../../../src/git/notes-write.js');
    const repo = new RepoGit(dir.path, 'sha1', 'test');
    try {
      let tip: string | null = null;
      const after: number[] = [];
      // Each write supersedes the trees on its path; without forgetting them the memory grows by a path a write.
      for (const [i, c] of commits.entries()) {
        const [commit]: string[] = await writeNoteCommits(repo, tip, [{ target: c, content: `kept ${i}`, author: who, message: `k${i}`, nowSeconds: 1700000000 }]);
        await repo.updateRef('refs/notes/kept', commit!, tip);
        tip = commit!;
        after.push(repo.remembered.trees);
      }
      // The current tree only: its root and the subtrees writes went into, whatever the number of
      // writes (each write supersedes a root, and one subtree once the fan-out grew).
      const root = await repo.readTree(await repo.commitTree(tip!));
      const subtrees = root.filter((e) => e.mode === '40000').length;
      expect(subtrees).toBeGreaterThan(0);
      expect(repo.remembered.trees).toBeLessThanOrEqual(1 + subtrees);
      expect(Math.max(...after)).toBeLessThanOrEqual(1 + subtrees);
      expect(run(['notes', '--ref=kept', 'show', commits[N - 1]!])).toBe(`kept ${N - 1}`);
      // Entry bytes of the trees it made have memory of their own (a pool slice pins an 8 KiB slab).
      for (const e of root) if (e.raw && e.raw.buffer.byteLength !== e.raw.length) expect(e.raw.buffer.byteLength).toBeLessThan(8192);
    } finally {
      // A background repack of the small packs may run: the directory is removed after this.
      repo.close();
      await repo.settled();
    }
  }, 240_000);
});
