// A commit's subject and author read through the repository's long-lived cat-file
// (commitSummariesThrough, summaryOfCommit) against what `git log --format=%an%x00%s` prints for
// the same commits (commitSummaries): real commits with messages and idents git accepts but
// writes oddly (leading blank lines, a subject over several lines, trailing spaces and tabs, CR,
// non-ASCII, no message, a name with spaces before `<`, no name), raw commits with extra headers
// (a signature's continuation lines) and one in another encoding, which git log re-encodes and the
// reader leaves to it, as it leaves a commit too large to read whole.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { gitIn } from '../../helpers/git.js';
import { tempDir } from '../../helpers/tmp.js';
import { COMMIT_READ_MAX, commitSummaries, commitSummariesThrough, summaryOfCommit } from '../../../src/notes/note-meta.js';
import { RepoGit } from '../../../src/git/repo-git.js';

let dir: ReturnType<typeof tempDir>;
let tree: string;
const commits: string[] = [];

/** A commit made by `git hash-object` from its raw text (git checks it as fsck would not). */
async function raw(text: string): Promise<string> {
  return gitIn(dir.path, ['hash-object', '-t', 'commit', '-w', '--stdin', '--literally'], text);
}

beforeAll(async () => {
  dir = tempDir();
  await gitIn(dir.path, ['init', '-q', '--bare', '--object-format=sha1']);
  tree = await gitIn(dir.path, ['mktree'], '');
  const messages = [
    'One line',
    'Two lines\nof subject\n\nand a body',
    '\n\n  \nAfter blank lines\n\nbody',
    'Trailing spaces   \t\nnext line\t \n\nbody',
    'CR at ends\r\nsecond\r\n\r\nbody',
    'Ünïcödé 😀 — and \u2028 separator',
    'Tabs\tinside',
  ];
  for (const m of messages) commits.push(await gitIn(dir.path, ['commit-tree', tree, '-F', '-'], m));
  const ident = (name: string) => `${name}<t@example.com> 1700000000 +0000`;
  const head = (author: string) => `tree ${tree}\nauthor ${author}\ncommitter ${ident('C ')}\n`;
  commits.push(await raw(`${head(ident('Spaced Name   '))}\nSpaced author\n`));
  commits.push(await raw(`${head(ident(''))}\nNo name\n`));
  commits.push(await raw(`${head('no angle brackets at all')}\nNo email\n`));
  commits.push(await raw(`${head(ident('Ana '))}`));
  commits.push(await raw(`${head(ident('Ana '))}\n`));
  commits.push(await raw(`${head(ident('Ana '))}gpgsig -----BEGIN PGP SIGNATURE-----\n \n abc\n -----END PGP SIGNATURE-----\n\nSigned subject\n`));
  commits.push(await raw(`${head(ident('Ana '))}encoding UTF-8\n\nDeclared UTF-8\n`));
});

afterAll(() => dir?.remove());

describe('commit summaries through cat-file', () => {
  it('are what git log prints, commit for commit', async () => {
    const viaLog = await commitSummaries(dir.path, commits);
    const git = new RepoGit(dir.path, 'sha1', 'test');
    try {
      const through = await commitSummariesThrough(git, commits);
      expect(through.size).toBe(commits.length);
      for (const c of commits) expect(through.get(c), c).toEqual(viaLog.get(c));
      // Not vacuous: the cases differ from each other.
      expect(new Set([...through.values()].map((s) => s.subject)).size).toBeGreaterThan(10);
    } finally {
      git.close();
    }
  });

  it('leave a commit in another encoding to git log, which re-encodes it', async () => {
    const latin1 = Buffer.concat([Buffer.from(`tree ${tree}\nauthor Jos\xe9 <j@example.com> 1700000000 +0000\ncommitter C <c@example.com> 1700000000 +0000\nencoding ISO-8859-1\n\nCaf`, 'latin1'), Buffer.from([0xe9]), Buffer.from(' ouvert\n')]);
    expect(summaryOfCommit(latin1)).toBeUndefined();
    const id = await new Promise<string>((resolve, reject) => {
      import('node:child_process').then(({ execFile }) => {
        const child = execFile('git', ['hash-object', '-t', 'commit', '-w', '--stdin', '--literally'], { cwd: dir.path }, (err, out) => (err ? reject(err) : resolve(out.trim())));
        child.stdin!.end(latin1);
      }, reject);
    });
    const git = new RepoGit(dir.path, 'sha1', 'test');
    try {
      const through = await commitSummariesThrough(git, [id]);
      expect(through.get(id)).toEqual({ author: 'José', subject: 'Café ouvert' });
      expect(through.get(id)).toEqual((await commitSummaries(dir.path, [id])).get(id));
    } finally {
      git.close();
    }
  });

  it('leave a commit over COMMIT_READ_MAX to git log: a pushed message of any length is never read whole into memory', async () => {
    const huge = await gitIn(dir.path, ['commit-tree', tree, '-F', '-'], `Huge commit\n\n${'x'.repeat(COMMIT_READ_MAX)}\n`);
    const git = new RepoGit(dir.path, 'sha1', 'test');
    const read = vi.spyOn(git, 'readCommits');
    try {
      const through = await commitSummariesThrough(git, [huge, commits[0]!]);
      expect(through.get(huge)).toEqual({ author: 'T', subject: 'Huge commit' });
      expect(through.get(commits[0]!)).toEqual((await commitSummaries(dir.path, [commits[0]!])).get(commits[0]!));
      expect(read.mock.calls.flatMap((c) => [...c[0]])).toEqual([commits[0]]);
    } finally {
      git.close();
    }
  });

  it('leave out what is missing or not a commit, as git log does', async () => {
    const git = new RepoGit(dir.path, 'sha1', 'test');
    try {
      const through = await commitSummariesThrough(git, ['0'.repeat(40), tree, commits[0]!]);
      expect([...through.keys()]).toEqual([commits[0]]);
    } finally {
      git.close();
    }
  });
});
