// A burst of concurrent note writes through the API (grouped by the server into few ref updates)
// while real `git push`es land on the same notes ref in the middle of the server's writes: every
// pushed note and every API note survives, each API write is exactly one commit authored by its
// writer, removals stay removed, `git fsck` is clean, and get_note and search_notes find every
// written note and no removed one. The pushes are made deterministic by the clock the note writer
// reads while it builds its commits, after it has read the ref's tip and before it moves the ref.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readByNoteWriter, apiCall, gitIn, gitUrl, localRepo, GIT_ENV, startNotesServer, type NotesServer } from '../../helpers/notes-server.js';
import { tempDir } from '../../helpers/tmp.js';
import { repoDir } from '../../../src/git/hosting.js';

const REF = 'refs/notes/commits';
const git = (cwd: string, args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, ...GIT_ENV } }).trim();

/**
 * The system time; while pushes are armed, each read of it first pushes one new note from a clone
 * with plain git (fetch the ref, `git notes add`, push to the repository): synchronous, so it
 * lands between the writer's read of the tip and its compare-and-swap.
 */
class PushingClock {
  clone = '';
  bare = '';
  targets: string[] = [];
  pushed: string[] = [];
  now(): number {
    const target = readByNoteWriter() ? this.targets.shift() : undefined;
    if (target) {
      git(this.clone, ['fetch', '-q', this.bare, `+${REF}:${REF}`]);
      git(this.clone, ['notes', 'add', '-m', `pushed beside the burst ${target.slice(0, 8)} platypus`, target]);
      git(this.clone, ['push', '-q', this.bare, `${REF}:${REF}`]);
      this.pushed.push(target);
    }
    return Date.now();
  }
}

const clock = new PushingClock();
let s: NotesServer;
let work: { path: string; remove(): void };
let commits: string[];

beforeAll(async () => {
  s = await startNotesServer({ clock });
  work = tempDir('mkt-notes-groups-');
  await s.admin.createRepo('ana/burst', { private: false, objectFormat: 'sha1' });
  await s.admin.grant('ana/burst', 'bo', 'push');
  const local = await localRepo(work.path, 'burst', 30);
  commits = local.commits;
  await gitIn(local.dir, ['push', '-q', gitUrl(s, 'ana/burst', s.tokens.anaPush), 'main']);
  clock.clone = local.dir;
  clock.bare = repoDir(s.dataDir, 'ana', 'burst');
});

afterAll(async () => {
  clock.targets = [];
  await s?.close();
  work?.remove();
});

const word = (i: number) => `burstword${i}q`;

describe('a burst of API writes with git pushes landing in the middle', () => {
  it('loses neither the pushed notes nor the API ones; one commit per API note, by its writer; the index finds exactly what is there', async () => {
    const hosted = (args: string[]) => git(clock.bare, args);
    // Notes that the burst removes.
    for (const i of [20, 21, 22]) expect((await apiCall(s.url, 'PUT', `/api/git/ana/burst/notes/${commits[i]}`, { token: s.tokens.anaPush, body: { content: `doomed ${word(i)}` } })).status).toBe(200);
    const before = hosted(['rev-parse', REF]);

    clock.targets = [commits[25]!, commits[26]!, commits[27]!];
    const writers = Array.from({ length: 20 }, (_, i) => (i % 2 ? { token: s.tokens.boPush, who: 'bo <bo@example.com>' } : { token: s.tokens.anaPush, who: 'ana <ana@example.com>' }));
    const results = await Promise.all([
      ...writers.map((w, i) => apiCall(s.url, 'PUT', `/api/git/ana/burst/notes/${commits[i]}`, { token: w.token, body: { content: `api note ${i}: ${word(i)}` } })),
      ...[20, 21, 22].map((i) => apiCall(s.url, 'DELETE', `/api/git/ana/burst/notes/${commits[i]}`, { token: s.tokens.boPush })),
    ]);
    expect(results.map((r) => r.status)).toEqual([...Array<number>(20).fill(200), 204, 204, 204]);
    expect(clock.pushed).toEqual([commits[25], commits[26], commits[27]]);

    // Every pushed note and every API note is in the tree; the removed ones are not.
    for (const i of [25, 26, 27]) expect(hosted(['notes', 'show', commits[i]!])).toBe(`pushed beside the burst ${commits[i]!.slice(0, 8)} platypus`);
    for (let i = 0; i < 20; i++) expect(hosted(['notes', 'show', commits[i]!])).toBe(`api note ${i}: ${word(i)}`);
    for (const i of [20, 21, 22]) expect(() => hosted(['notes', 'show', commits[i]!])).toThrow();
    expect(hosted(['fsck', '--strict', '--no-dangling'])).toBe('');

    // One commit per API write, authored by its writer, on top of every pushed commit.
    const log = hosted(['log', '--first-parent', '--format=%s%x00%an <%ae>', `${before}..${REF}`]).split('\n').map((l) => l.split('\0') as [string, string]);
    expect(log).toHaveLength(20 + 3 + 3);
    for (let i = 0; i < 20; i++) {
      const mine = log.filter(([subject]) => subject === `Notes: add note on ${commits[i]}`);
      expect(mine).toEqual([[`Notes: add note on ${commits[i]}`, writers[i]!.who]]);
      expect(results[i]!.body.commit).toBe(hosted(['log', '-1', '--format=%H', `--grep=^Notes: add note on ${commits[i]}$`, REF]));
    }
    for (const i of [20, 21, 22]) expect(log.filter(([subject]) => subject === `Notes: remove note from ${commits[i]}`)).toEqual([[`Notes: remove note from ${commits[i]}`, 'bo <bo@example.com>']]);
    // The pushes landed during the first write, which failed its compare-and-swap each time and
    // was written again on top of them.
    expect(log.slice(-3).map(([subject]) => subject)).toEqual(Array(3).fill("Notes added by 'git notes add'"));

    // The index: get_note and search find each written and pushed note, and no removed one.
    for (let i = 0; i < 20; i++) {
      const got = await apiCall(s.url, 'GET', `/api/git/ana/burst/notes/${commits[i]}`);
      expect(got.body.content).toBe(`api note ${i}: ${word(i)}`);
      const found = await apiCall(s.url, 'GET', `/api/git/ana/burst/notes/search?q=${word(i)}`);
      expect((found.body.data as { target: string }[]).map((h) => h.target)).toEqual([commits[i]]);
    }
    for (const i of [20, 21, 22]) {
      expect((await apiCall(s.url, 'GET', `/api/git/ana/burst/notes/${commits[i]}`)).status).toBe(404);
      expect((await apiCall(s.url, 'GET', `/api/git/ana/burst/notes/search?q=${word(i)}`)).body.total).toBe(0);
    }
    const pushedFound = await apiCall(s.url, 'GET', `/api/git/ana/burst/notes/search?q=platypus`);
    expect((pushedFound.body.data as { target: string }[]).map((h) => h.target).sort()).toEqual([commits[25], commits[26], commits[27]].sort());
  });
});
