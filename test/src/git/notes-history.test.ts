// A note's history and the server's notes merge, against git: noteVersions reads the versions of a
// note (changes, removals, fan-out moves walked past) from the one bounded walk that attribution
// uses; on a notes ref of 100,000 commits (built with one `git fast-import`) the walk stops at its
// bound and takes what a short walk takes, however old the note. mergeNotes leaves the notes tree
// `git notes merge -s <strategy>` leaves, writes nothing but objects (no ref of the repository
// moves), and gives its objects the repository's file mode.
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noteAttribution, noteVersions, walkNote } from '../../../src/git/notes-tree.js';
import { mergeNotes } from '../../../src/git/notes-merge.js';
import { ATTRIBUTION_WALK_LIMIT } from '../../../src/schemas/notes.js';
import { tempDir } from '../../helpers/tmp.js';

const ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: '/nonexistent', GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@e' };
const LONG = 100_000;

let dir: { path: string; remove(): void };
const run = (args: string[], input?: string) => execFileSync('git', ['--git-dir', dir.path, ...args], { input, encoding: 'utf8', env: ENV, maxBuffer: 256 * 1024 * 1024 }).trim();
let commits: string[];

beforeAll(() => {
  dir = tempDir('mkt-notes-history-');
  run(['init', '-q', '--bare', dir.path]);
  let stream = '';
  for (let i = 1; i <= 3; i++) stream += `commit refs/heads/main\nmark :${i}\ncommitter T <t@e> ${1700000000 + i} +0000\ndata 2\nc${i}\n${i > 1 ? `from :${i - 1}\n` : ''}\n`;
  run(['fast-import', '--quiet'], stream);
  commits = run(['rev-list', '--reverse', 'main']).split('\n');
});
afterAll(() => dir?.remove());

describe('noteVersions', () => {
  it('lists each version newest first, removals as null, and skips commits that only move the note between fan-out paths', async () => {
    const [a, b] = [commits[0]!, commits[1]!];
    const ref = 'refs/notes/h';
    const note = (args: string[]) => run(['notes', '--ref', ref, ...args]);
    note(['add', '-m', 'one', a]);
    note(['add', '-m', 'other', b]);
    note(['add', '-f', '-m', 'two', a]);
    note(['remove', a]);
    note(['add', '-m', 'three', a]);
    // The same blob moved under a fan-out directory: not a version.
    const tip = run(['rev-parse', ref]);
    const blob = run(['rev-parse', `${ref}:${a}`]);
    const tree = run(['mktree'], `040000 tree ${run(['mktree'], `100644 blob ${blob}\t${a.slice(2)}\n`)}\t${a.slice(0, 2)}\n100644 blob ${run(['rev-parse', `${ref}:${b}`])}\t${b}\n`);
    run(['update-ref', ref, run(['commit-tree', tree, '-p', tip, '-m', 'fan-out'])]);
    const head = run(['rev-parse', ref]);
    const got = await noteVersions(dir.path, head, a, ATTRIBUTION_WALK_LIMIT, 10);
    const text = (b: string | null) => (b === null ? null : run(['cat-file', 'blob', b]));
    expect(got!.complete).toBe(true);
    expect(got!.versions.map((v) => text(v.blob))).toEqual(['three', null, 'two', 'one']);
    expect(got!.versions[0]!.commit).toBe(tip);
    // At most `max`: then older versions may exist.
    const two = await noteVersions(dir.path, head, a, ATTRIBUTION_WALK_LIMIT, 2);
    expect(two!.versions.map((v) => text(v.blob))).toEqual(['three', null]);
    expect(two!.complete).toBe(false);
    // Attribution reads the same walk: the commit that wrote `three`, not the move.
    expect(await noteAttribution(dir.path, head, a, blob, ATTRIBUTION_WALK_LIMIT)).toMatchObject({ commit: tip, exact: true });
  });

  it(`a notes ref of ${LONG.toLocaleString('en')} commits: the walk stops at ${ATTRIBUTION_WALK_LIMIT} commits`, async () => {
    // One fast-import: the note on commits[2] is set in the first commit, then every commit changes another note.
    const target = commits[2]!;
    const other = commits[1]!;
    const parts: string[] = [`commit refs/notes/long\nmark :1\ncommitter T <t@e> 1700000000 +0000\ndata 5\nfirst\nM 100644 inline ${target}\ndata 4\nold\n\n`];
    for (let i = 2; i <= LONG; i++) {
      const body = `v${i}\n`;
      parts.push(`commit refs/notes/long\nmark :${i}\ncommitter T <t@e> ${1700000000 + i} +0000\ndata 2\nn\nfrom :${i - 1}\nM 100644 inline ${other}\ndata ${body.length}\n${body}\n`);
    }
    run(['fast-import', '--quiet'], parts.join(''));
    const tip = run(['rev-parse', 'refs/notes/long']);
    expect(Number(run(['rev-list', '--count', tip]))).toBe(LONG);

    // Bounded, not proportional: the walk stops after the limit's commits, however long the history.
    const walk = await walkNote(dir.path, tip, target, ATTRIBUTION_WALK_LIMIT);
    expect(walk!.walked).toBe(ATTRIBUTION_WALK_LIMIT);
    expect(walk!.complete).toBe(false);
    expect(walk!.touches).toEqual([]);
    const versions = await noteVersions(dir.path, tip, target, ATTRIBUTION_WALK_LIMIT, 20);
    expect(versions).toEqual({ versions: [], complete: false });
    // The same walk on the other note: 20 versions at once, then stop.
    const recent = await noteVersions(dir.path, tip, other, ATTRIBUTION_WALK_LIMIT, 20);
    expect(recent!.versions).toHaveLength(20);
    expect(recent!.complete).toBe(false);
  }, 300_000);
});

describe('mergeNotes', () => {
  it.each(['ours', 'theirs', 'union', 'cat_sort_uniq'] as const)('%s: the tree git notes merge leaves, both parents, no ref of the repository moved, objects 0600-like the repository', async (strategy) => {
    const [a, b, c] = commits as [string, string, string];
    const ref = `refs/notes/m-${strategy}`;
    const note = (args: string[]) => run(['notes', '--ref', ref, ...args]);
    note(['add', '-m', 'base', a]);
    const base = run(['rev-parse', ref]);
    note(['add', '-f', '-m', 'ours a', a]);
    note(['add', '-m', 'ours b', b]);
    const ours = run(['rev-parse', ref]);
    run(['update-ref', ref, base]);
    note(['add', '-f', '-m', 'theirs a\nline', a]);
    note(['add', '-m', 'theirs c', c]);
    const theirs = run(['rev-parse', ref]);
    run(['update-ref', ref, ours]);
    run(['config', 'core.sharedRepository', '0600']);
    const refsBefore = run(['for-each-ref']);
    const merged = await mergeNotes(dir.path, 'sha1', ref, ours, theirs, strategy, { name: 'Ana', email: 'ana@example.com', seconds: 1700000500 });
    expect(run(['for-each-ref'])).toBe(refsBefore);
    expect(run(['log', '-1', '--format=%P|%an <%ae>|%at', merged])).toBe(`${ours} ${theirs}|Ana <ana@example.com>|1700000500`);
    // git notes merge itself, on the repository, with the ref at ours and theirs on a ref.
    run(['update-ref', `refs/notes/theirs-${strategy}`, theirs]);
    run(['notes', '--ref', ref, 'merge', '-q', '-s', strategy, `refs/notes/theirs-${strategy}`]);
    expect(run(['rev-parse', `${merged}^{tree}`])).toBe(run(['rev-parse', `${ref}^{tree}`]));
    expect(run(['fsck', '--strict', '--no-progress', '--no-dangling'])).toBe('');
    // The merge commit's own object is stored with the repository's mode, not the umask's.
    const loose = join(dir.path, 'objects', merged.slice(0, 2), merged.slice(2));
    const files = readdirSync(join(dir.path, 'objects', merged.slice(0, 2)));
    expect(files).toContain(merged.slice(2));
    expect(statSync(loose).mode & 0o077).toBe(0);
  });
});
