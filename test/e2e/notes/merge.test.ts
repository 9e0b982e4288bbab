// Notes merge strategies on the server (issue 34), against stock git over smart HTTP, in SHA-1 and
// SHA-256 repositories. For each of git's four automatic strategies: a forced push that does not
// contain the server's notes is merged into them, and a put_note that finds its ref moved is
// merged into it, both exactly as `git notes merge -s <strategy>` run locally on the same two
// commits merges them (the same notes tree, so byte-identical note blobs), committed with both
// parents; `git fsck --strict` is clean after each. Under `manual` (the default) nothing is
// merged: git refuses the unforced push and a forced one replaces the ref, as before. A push
// racing put_notes loses neither side. A union that would make a note over the 1 MiB limit is
// refused (the push, and a put_note with 422), as every pushed or written note is held to it.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCall, readByNoteWriter, startNotesServer, gitIn, gitUrl, localRepo, GIT_ENV, type NotesServer } from '../../helpers/notes-server.js';
import { tempDir } from '../../helpers/tmp.js';
import { repoDir } from '../../../src/git/hosting.js';
import type { NotesMergeStrategy } from '../../../src/store/repos.js';

const REF = 'refs/notes/commits';
const STRATEGIES = ['ours', 'theirs', 'union', 'cat_sort_uniq'] as const;

/** git on a hosted repository's directory, synchronously (it never talks to the server). */
function onDisk(gitDir: string, args: string[]): string {
  return execFileSync('git', ['--git-dir', gitDir, ...args], { encoding: 'utf8', env: { ...process.env, ...GIT_ENV } }).trim();
}

/** The system time; while `armed`, the note writer's first read moves REF to `to` behind its back. */
class RacingClock {
  armed: { gitDir: string; to: string } | undefined;
  now(): number {
    const a = this.armed;
    if (a && readByNoteWriter()) {
      this.armed = undefined;
      onDisk(a.gitDir, ['update-ref', REF, a.to]);
    }
    return Date.now();
  }
}

const clock = new RacingClock();
let s: NotesServer;
let work: { path: string; remove(): void };

const put = (repo: string, target: string, content: string) =>
  apiCall(s.url, 'PUT', `/api/git/${repo}/notes/${target}`, { token: s.tokens.anaPush, body: { content } });

beforeAll(async () => {
  s = await startNotesServer({ clock });
  work = tempDir('mkt-notes-merge-');
});

afterAll(async () => {
  clock.armed = undefined;
  await s?.close();
  work?.remove();
});

/** A hosted repository with `n` commits pushed, a notes base pushed, and its local clone. */
async function setUp(name: string, format: 'sha1' | 'sha256', strategy: NotesMergeStrategy) {
  const { repo } = await s.admin.createRepo(`ana/${name}`, { private: false, objectFormat: format });
  if (strategy !== 'manual') await s.admin.repos.setNotesMergeStrategy(repo.id, 'commits', strategy);
  const local = await localRepo(work.path, name, 8, format);
  const url = gitUrl(s, `ana/${name}`, s.tokens.anaPush);
  const c = local.commits;
  const g = (args: string[], input?: string) => gitIn(local.dir, args, input);
  // The base both sides start from: notes on c0, c1 (two lines) and c2.
  await g(['notes', 'add', '-m', 'base zero', c[0]!]);
  await g(['notes', 'add', '-m', 'beta\nalpha', c[1]!]);
  await g(['notes', 'add', '-m', 'base two', c[2]!]);
  await g(['push', '-q', url, 'main', REF]);
  return { dir: local.dir, c, url, g, hosted: repoDir(s.dataDir, 'ana', name) };
}

/** What `git notes --ref R merge -s <strategy>` leaves, run locally with R at `ours` merging `theirs`. */
async function localMerge(g: (args: string[]) => Promise<string>, strategy: string, ours: string, theirs: string): Promise<string> {
  await g(['update-ref', 'refs/notes/cmp', ours]);
  await g(['update-ref', 'refs/notes/incoming', theirs]);
  await g(['notes', '--ref', 'refs/notes/cmp', 'merge', '-q', '-s', strategy, 'refs/notes/incoming']);
  return g(['rev-parse', 'refs/notes/cmp']);
}

describe('a union that would make a note over the 1 MiB limit', () => {
  it('refuses the push (the ref stays) and a racing put_note (422); nothing is written over', async () => {
    const r = await setUp('too-big', 'sha1', 'union');
    const { c, g } = r;
    const big = (ch: string) => `${ch.repeat(600 * 1024)}\n`;
    expect((await put('ana/too-big', c[0]!, big('s'))).status).toBe(200);
    const serverTip = onDisk(r.hosted, ['rev-parse', REF]);
    await g(['notes', 'add', '-f', '-F', '-', c[0]!], big('p'));
    await expect(g(['push', '-q', '--force', r.url, REF])).rejects.toThrow(/merged notes over 1048576 bytes/);
    expect(onDisk(r.hosted, ['rev-parse', REF])).toBe(serverTip);
    // The same two notes met by a put_note that finds the ref moved: 422, and the ref is the mover's.
    const pushed = await g(['rev-parse', REF]);
    await g(['push', '-q', r.url, `${pushed}:refs/heads/big`]);
    clock.armed = { gitDir: r.hosted, to: pushed };
    const refused = await put('ana/too-big', c[0]!, big('a'));
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatch(/would make notes over 1048576 bytes/);
    expect(onDisk(r.hosted, ['rev-parse', REF])).toBe(pushed);
  });
});

describe.each(['sha1', 'sha256'] as const)('notes merge strategies (%s)', (format) => {
  it.each(STRATEGIES)('%s: a forced push that does not contain the server notes is merged as git notes merge merges it', async (strategy) => {
    const r = await setUp(`push-${strategy}-${format}`, format, strategy);
    const { c, g } = r;
    // The server moves on through the API: c0 changed, c3 added, c1 gets another line.
    expect((await put(`ana/push-${strategy}-${format}`, c[0]!, 'server zero\n')).status).toBe(200);
    expect((await put(`ana/push-${strategy}-${format}`, c[3]!, 'server three\n')).status).toBe(200);
    expect((await put(`ana/push-${strategy}-${format}`, c[1]!, 'beta\ngamma\n')).status).toBe(200);
    const serverTip = onDisk(r.hosted, ['rev-parse', REF]);
    // The clone moves on from the base without fetching: c0 changed, c2 removed, c3 and c4 added.
    await g(['notes', 'add', '-f', '-m', 'local zero', c[0]!]);
    await g(['notes', 'remove', c[2]!]);
    await g(['notes', 'add', '-m', 'local three', c[3]!]);
    await g(['notes', 'add', '-m', 'local four', c[4]!]);
    const pushed = await g(['rev-parse', REF]);
    // git itself refuses the push unless forced; forced, the server merges instead of replacing.
    await expect(g(['push', '-q', r.url, REF])).rejects.toThrow(/rejected/);
    await g(['push', '-q', '--force', r.url, REF]);

    const merged = onDisk(r.hosted, ['rev-parse', REF]);
    expect(onDisk(r.hosted, ['log', '-1', '--format=%P', merged]).split(' ')).toEqual([serverTip, pushed]);
    expect(onDisk(r.hosted, ['log', '-1', '--format=%an <%ae>', merged])).toBe('ana <ana@example.com>');
    await g(['fetch', '-q', r.url, `+${REF}:refs/notes/server`]);
    const expected = await localMerge(g, strategy, serverTip, pushed);
    expect(onDisk(r.hosted, ['rev-parse', `${merged}^{tree}`])).toBe(await g(['rev-parse', `${expected}^{tree}`]));
    expect(onDisk(r.hosted, ['fsck', '--strict', '--no-progress'])).toBe('');
    // The API reads the merged notes (the index caught up before the push answered).
    const zero = await apiCall(s.url, 'GET', `/api/git/ana/push-${strategy}-${format}/notes/${c[0]!}`);
    expect(zero.body.content).toBe(await g(['notes', '--ref', 'refs/notes/cmp', 'show', c[0]!]).then((t) => `${t}\n`));
    const list = await apiCall(s.url, 'GET', `/api/git/ana/push-${strategy}-${format}/notes`);
    expect(list.body.data).toEqual([expect.objectContaining({ name: 'commits', tip: merged, merge_strategy: strategy })]);
  });

  it.each(STRATEGIES)('%s: a put_note that finds the ref moved is merged into it as git notes merge merges it', async (strategy) => {
    const name = `put-${strategy}-${format}`;
    const r = await setUp(name, format, strategy);
    const { c, g } = r;
    // The commit that moves the ref under the writer: made in the clone, its objects pushed to a branch.
    await g(['notes', 'add', '-f', '-m', 'racing zero', c[0]!]);
    await g(['notes', 'add', '-m', 'racing five', c[5]!]);
    const racing = await g(['rev-parse', REF]);
    await g(['push', '-q', r.url, `${racing}:refs/heads/racing`]);
    const base = onDisk(r.hosted, ['rev-parse', REF]);
    clock.armed = { gitDir: r.hosted, to: racing };
    const written = await put(`ana/${name}`, c[0]!, 'api zero\n');
    expect(clock.armed).toBeUndefined();
    expect(written.status, JSON.stringify(written.body)).toBe(200);
    const own = written.body.commit as string;
    // The write's own commit sits on the tip it read; the ref is the merge of the racing commit and it.
    expect(onDisk(r.hosted, ['log', '-1', '--format=%P', own])).toBe(base);
    const merged = onDisk(r.hosted, ['rev-parse', REF]);
    expect(onDisk(r.hosted, ['log', '-1', '--format=%P', merged]).split(' ')).toEqual([racing, own]);
    await g(['fetch', '-q', r.url, `+${REF}:refs/notes/server`]);
    const expected = await localMerge(g, strategy, racing, own);
    expect(onDisk(r.hosted, ['rev-parse', `${merged}^{tree}`])).toBe(await g(['rev-parse', `${expected}^{tree}`]));
    expect(onDisk(r.hosted, ['fsck', '--strict', '--no-progress'])).toBe('');
    const zero = await apiCall(s.url, 'GET', `/api/git/ana/${name}/notes/${c[0]!}`);
    expect(zero.body.content).toBe(await g(['notes', '--ref', 'refs/notes/cmp', 'show', c[0]!]).then((t) => `${t}\n`));
    expect((await apiCall(s.url, 'GET', `/api/git/ana/${name}/notes/${c[5]!}`)).body.content).toBe('racing five\n');
  });

  it('manual (the default): nothing is merged; git refuses the unforced push and a forced one replaces the ref, as before', async () => {
    const name = `manual-${format}`;
    const r = await setUp(name, format, 'manual');
    const { c, g } = r;
    expect((await put(`ana/${name}`, c[3]!, 'server three\n')).status).toBe(200);
    await g(['notes', 'add', '-m', 'local four', c[4]!]);
    const pushed = await g(['rev-parse', REF]);
    await expect(g(['push', '-q', r.url, REF])).rejects.toThrow(/rejected/);
    await g(['push', '-q', '--force', r.url, REF]);
    expect(onDisk(r.hosted, ['rev-parse', REF])).toBe(pushed);
    expect((await apiCall(s.url, 'GET', `/api/git/ana/${name}/notes/${c[3]!}`)).status).toBe(404);
    const list = await apiCall(s.url, 'GET', `/api/git/ana/${name}/notes`);
    expect(list.body.data).toEqual([expect.objectContaining({ name: 'commits', merge_strategy: 'manual' })]);
  });

  it('union: a forced push racing put_notes loses neither side (every note of both is there after), fsck clean', async () => {
    const name = `race-${format}`;
    const r = await setUp(name, format, 'union');
    const { c, g } = r;
    await g(['notes', 'add', '-f', '-m', 'pushed zero', c[0]!]);
    await g(['notes', 'add', '-m', 'pushed six', c[6]!]);
    const writes = [3, 4, 5, 7].map((i) => put(`ana/${name}`, c[i]!, `api ${i}\n`));
    const pushing = g(['push', '-q', '--force', r.url, REF]);
    const answers = await Promise.all(writes);
    await pushing;
    for (const a of answers) expect(a.status, JSON.stringify(a.body)).toBe(200);
    const show = (i: number) => onDisk(r.hosted, ['notes', 'show', c[i]!]);
    for (const i of [3, 4, 5, 7]) expect(show(i)).toBe(`api ${i}`);
    expect(show(0)).toBe('pushed zero');
    expect(show(6)).toBe('pushed six');
    expect(show(2)).toBe('base two');
    expect(onDisk(r.hosted, ['fsck', '--strict', '--no-progress'])).toBe('');
    // The index agrees with the ref.
    for (const i of [0, 3, 6]) expect((await apiCall(s.url, 'GET', `/api/git/ana/${name}/notes/${c[i]!}`)).body.content).toBe(`${show(i)}\n`);
  });
});
