// Contention on a notes ref from outside the server: another writer moves the ref between the
// server's read of the tip and its compare-and-swap, attempt after attempt (many more than the
// five a write used to get); put_note keeps retrying with backoff and lands on top of every
// racing commit once the ref holds still. (Giving up after the time budget: test/src/notes/writer.test.ts.)
// The race is made deterministic by a clock the note writer reads just before it writes.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readByNoteWriter, startNotesServer, gitIn, gitUrl, localRepo, GIT_ENV, type NotesServer } from '../../helpers/notes-server.js';
import { tempDir } from '../../helpers/tmp.js';
import { repoDir } from '../../../src/git/hosting.js';

const REF = 'refs/notes/commits';

/** git on the hosted repository, synchronously: it touches only the disk, never the server. */
function git(gitDir: string, args: string[]): string {
  return execFileSync('git', ['--git-dir', gitDir, ...args], { encoding: 'utf8', env: { ...process.env, ...GIT_ENV } }).trim();
}

/** The system time, and while races are left, a racing commit on REF every time the time is read. */
class RacingClock {
  gitDir = '';
  left = 0;
  races = 0;
  now(): number {
    if (this.left > 0 && readByNoteWriter()) {
      this.left--;
      // Synchronous on purpose: the move lands between the server's read and its write.
      const tip = git(this.gitDir, ['rev-parse', REF]);
      const moved = git(this.gitDir, ['commit-tree', `${tip}^{tree}`, '-p', tip, '-m', `race ${++this.races}`]);
      git(this.gitDir, ['update-ref', REF, moved, tip]);
    }
    return Date.now();
  }
}

const clock = new RacingClock();
let s: NotesServer;
let work: { path: string; remove(): void };
let commits: string[];

async function put(target: string, content: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${s.url}/api/git/ana/race/notes/${target}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${s.tokens.anaPush}`, 'content-type': 'application/json' },
    body: JSON.stringify({ content }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  s = await startNotesServer({ clock });
  work = tempDir('mkt-notes-race-');
  await s.admin.createRepo('ana/race', { private: false, objectFormat: 'sha1' });
  const local = await localRepo(work.path, 'race', 2);
  commits = local.commits;
  await gitIn(local.dir, ['push', '-q', gitUrl(s, 'ana/race', s.tokens.anaPush), 'main']);
  clock.gitDir = repoDir(s.dataDir, 'ana', 'race');
});

afterAll(async () => {
  clock.left = 0;
  await s?.close();
  work?.remove();
});

describe('put_note under contention from outside the server', () => {
  it('keeps retrying while the ref moves (well past five attempts) and lands on top of every racing commit', async () => {
    const [first, second] = [commits[0]!, commits[1]!];
    expect((await put(first, 'before the race')).status).toBe(200);

    const RACES = 15;
    const racesBefore = clock.races;
    clock.left = RACES;
    const won = await put(second, 'written during the race');
    expect(won.status).toBe(200);
    expect(clock.races - racesBefore).toBe(RACES);
    const hosted = (args: string[]) => git(clock.gitDir, args);
    expect(hosted(['log', '-1', '--format=%s', REF])).toMatch(/^Notes: add note on/);
    expect(hosted(['log', '--format=%s', `${REF}^`, `-${RACES}`]).split('\n')).toEqual(Array.from({ length: RACES }, (_, i) => `race ${clock.races - i}`));
    expect(hosted(['notes', 'show', first])).toBe('before the race');
    expect(hosted(['notes', 'show', second])).toBe('written during the race');
    expect(won.body.commit).toBe(hosted(['rev-parse', REF]));
  });
});
