// Objects mkt writes without git (src/git/objects.ts, pack.ts, repo-git.ts), checked by git itself
// in SHA-1 and SHA-256 repositories: trees and commits byte for byte what `git mktree` and `git
// commit-tree` make of the same input (author names cleaned as git cleans them); notes written as
// packs (adds, replacements, removals, the fan-out growing past FANOUT_THRESHOLD) that `git fsck
// --strict` and `git verify-pack` find clean and `git notes` reads; and the small packs merged by
// `git repack --geometric` once there are many, losing no object.
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { encodeCommit, encodeTree, objectId, parseTree, withEntry, type ObjectFormat, type TreeEntry } from '../../../src/git/objects.js';
import { RepoGit } from '../../../src/git/repo-git.js';
import { FANOUT_THRESHOLD, writeNoteCommits, type NoteChange } from '../../../src/git/notes-write.js';
import { listNotes } from '../../../src/git/notes-tree.js';
import { tempDir } from '../../helpers/tmp.js';
import { GIT_ENV } from '../../helpers/notes-server.js';

const env = { ...process.env, ...GIT_ENV };
let dir: { path: string; remove(): void };
beforeEach(() => (dir = tempDir('mkt-git-objects-')));
afterEach(() => dir?.remove());

function repo(format: ObjectFormat): { gitDir: string; git: (args: string[], input?: string, extraEnv?: Record<string, string>) => string } {
  const gitDir = join(dir.path, `${format}.git`);
  execFileSync('git', ['init', '-q', '--bare', `--object-format=${format}`, gitDir], { env });
  return { gitDir, git: (args, input, extraEnv = {}) => execFileSync('git', ['--git-dir', gitDir, ...args], { input, encoding: 'utf8', env: { ...env, ...extraEnv } }).trim() };
}

/** `n` commits on main, made by git. */
function commitsIn(git: (args: string[], input?: string) => string, n: number): string[] {
  const tree = git(['mktree'], '');
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(git(['commit-tree', tree, ...(i ? ['-p', out[i - 1]!] : []), '-m', `c${i}`]));
  git(['update-ref', 'refs/heads/main', out[n - 1]!]);
  return out;
}

const packs = (gitDir: string) => readdirSync(join(gitDir, 'objects', 'pack')).filter((f) => f.endsWith('.pack'));

describe.each(['sha1', 'sha256'] as const)('objects written by mkt in a %s repository', (format) => {
  it('trees and commits are byte for byte what git makes of the same input', () => {
    const { git } = repo(format);
    const blob = git(['hash-object', '-w', '--stdin'], 'x');
    const sub = git(['mktree'], `100644 blob ${blob}\tleaf\n`);
    // Names git sorts with a tree's name read as ending in "/": "a-", "a" (tree), "a0".
    const listing = [`100644 blob ${blob}\ta0`, `040000 tree ${sub}\ta`, `100644 blob ${blob}\ta-`, `100755 blob ${blob}\tzz`];
    const byGit = git(['mktree'], listing.join('\n') + '\n');
    let entries: TreeEntry[] = [];
    for (const [mode, name] of [['100644', 'a0'], ['40000', 'a'], ['100644', 'a-'], ['100755', 'zz']] as const) entries = withEntry(entries, name, { mode, name, oid: name === 'a' ? sub : blob });
    const body = encodeTree(entries, format);
    expect(objectId(format, 'tree', body)).toBe(byGit);
    expect(parseTree(body, format).map((e) => e.name)).toEqual(['a-', 'a', 'a0', 'zz']);

    for (const [name, email] of [['Ana', 'ana@example.com'], [' <Bo> ', '<bo@example.com>'], ['Cy, Jr', ' cy@example.com;'], ['Zoë "Z" Ng', 'z@example.com']]) {
      const message = `Notes: add note\n\nby ${name}\n`;
      const when = '@1700000000 +0000';
      const byGitCommit = git(['commit-tree', byGit, '-p', git(['commit-tree', byGit, '-m', 'root']), '-F', '-'], message, {
        GIT_AUTHOR_NAME: name.replace(/[<>]/g, ''),
        GIT_AUTHOR_EMAIL: email.replace(/[<>]/g, ''),
        GIT_AUTHOR_DATE: when,
        GIT_COMMITTER_NAME: name.replace(/[<>]/g, ''),
        GIT_COMMITTER_EMAIL: email.replace(/[<>]/g, ''),
        GIT_COMMITTER_DATE: when,
      });
      const parent = git(['rev-parse', `${byGitCommit}^`]);
      const ours = encodeCommit({ tree: byGit, parent, name, email, seconds: 1_700_000_000, message });
      expect(objectId(format, 'commit', ours)).toBe(byGitCommit);
    }
  });

  it(`notes written as packs (past the fan-out threshold, replaced, removed) are clean for git fsck and verify-pack, and git reads them`, async () => {
    const { gitDir, git } = repo(format);
    const n = FANOUT_THRESHOLD + 20;
    const targets = commitsIn(git, n);
    const r = new RepoGit(gitDir, format, 'test');
    try {
      const change = (target: string, content: string | null, i: number): NoteChange => ({ target, content, author: { name: `Writer ${i % 3}`, email: `w${i % 3}@example.com` }, message: `note ${i}\n`, nowSeconds: 1_700_000_000 + i });
      let tip: string | null = null;
      // Groups of 40: one pack each, one chain of commits each.
      for (let i = 0; i < n; i += 40) {
        const chain = await writeNoteCommits(r, tip, targets.slice(i, i + 40).map((t, j) => change(t, `note ${i + j} ✓`, i + j)));
        await r.updateRef('refs/notes/commits', chain[chain.length - 1]!, tip);
        tip = chain[chain.length - 1]!;
      }
      // A note larger than one stored zlib block (64 KiB).
      const big = 'large note line\n'.repeat(12_000);
      const more = await writeNoteCommits(r, tip, [change(targets[3]!, 'replaced', 1), change(targets[4]!, null, 2), change(targets[5]!, null, 3), change(targets[6]!, big, 4)]);
      await r.updateRef('refs/notes/commits', more[3]!, tip);

      expect(git(['fsck', '--strict', '--no-dangling'])).toBe('');
      for (const p of packs(gitDir)) git(['verify-pack', join(gitDir, 'objects', 'pack', p.replace(/\.pack$/, '.idx'))]);
      expect(git(['rev-list', '--count', 'refs/notes/commits'])).toBe(String(n + 4));
      expect(git(['notes', 'show', targets[6]!]) + '\n').toBe(big);
      expect(git(['notes', 'show', targets[200]!])).toBe('note 200 ✓');
      expect(git(['notes', 'show', targets[3]!])).toBe('replaced');
      expect(() => git(['notes', 'show', targets[4]!])).toThrow();
      expect(await listNotes(gitDir, 'refs/notes/commits')).toHaveLength(n - 2);
      // The root grew a fan-out level instead of holding every note.
      expect(git(['ls-tree', 'refs/notes/commits']).split('\n').length).toBeLessThanOrEqual(FANOUT_THRESHOLD + 256);
      expect(git(['ls-tree', 'refs/notes/commits'])).toContain(' tree ');
      expect(git(['log', '-1', '--format=%an <%ae> %at', 'refs/notes/commits'])).toBe('Writer 1 <w1@example.com> 1700000004');
    } finally {
      r.close();
      await r.settled(); // a background repack may still write into the repository
    }
  });

  it('merges the small packs once there are many, and every object stays', async () => {
    const { gitDir, git } = repo(format);
    const targets = commitsIn(git, 45);
    const r = new RepoGit(gitDir, format, 'test');
    try {
      let tip: string | null = null;
      for (const [i, t] of targets.entries()) {
        const [c] = await writeNoteCommits(r, tip, [{ target: t, content: `n${i}`, author: { name: 'A', email: 'a@e' }, message: 'm\n', nowSeconds: 1_700_000_000 }]);
        await r.updateRef('refs/notes/commits', c!, tip);
        tip = c!;
      }
      await r.settled();
      expect(packs(gitDir).length).toBeLessThan(20);
      expect(git(['fsck', '--strict', '--no-dangling'])).toBe('');
      expect(await listNotes(gitDir, 'refs/notes/commits')).toHaveLength(45);
    } finally {
      r.close();
      await r.settled(); // a background repack may still write into the repository
    }
  });
});
