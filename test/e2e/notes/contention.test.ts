// Sustained contention on a notes ref: another writer moves the ref between the server's read
// of the tip and its compare-and-swap on every attempt, so put_note gives up with 422 and
// changes nothing; once the ref holds still the write goes through on top of every racing
// commit. The race is made deterministic by a clock the note writer reads just before it writes.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNotesServer, gitIn, gitUrl, localRepo, GIT_ENV, type NotesServer } from '../../helpers/notes-server.js';
import { tempDir } from '../../helpers/tmp.js';
import { repoDir } from '../../../src/git/hosting.js';
import { WRITE_ATTEMPTS } from '../../../src/notes/writer.js';

const REF = 'refs/notes/commits';

/** git on the hosted repository, synchronously: it touches only the disk, never the server. */
function git(gitDir: string, args: string[]): string {
  return execFileSync('git', ['--git-dir', gitDir, ...args], { encoding: 'utf8', env: { ...process.env, ...GIT_ENV } }).trim();
}

/** The system time, and while armed, a racing commit on REF every time the time is read. */
class RacingClock {
  gitDir = '';
  armed = false;
  races = 0;
  now(): number {
    if (this.armed) {
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
  clock.armed = false;
  await s?.close();
  work?.remove();
});

describe('put_note under sustained contention', () => {
  it(`answers 422 after ${WRITE_ATTEMPTS} attempts and writes nothing; once the ref holds still the write lands on top of the racers`, async () => {
    const [first, second] = [commits[0]!, commits[1]!];
    expect((await put(first, 'before the race')).status).toBe(200);

    clock.armed = true;
    const racesBefore = clock.races;
    const lost = await put(second, 'written during the race');
    clock.armed = false;
    expect(lost.status).toBe(422);
    expect(lost.body.error).toMatch(`kept moving during ${WRITE_ATTEMPTS} attempts`);
    expect(clock.races - racesBefore).toBeGreaterThanOrEqual(WRITE_ATTEMPTS);
    const hosted = (args: string[]) => git(clock.gitDir, args);
    const racedTip = hosted(['rev-parse', REF]);
    expect(hosted(['log', '-1', '--format=%s', REF])).toMatch(/^race \d+$/); // the server's write did not land
    expect(hosted(['notes', 'list'])).not.toContain(second);
    expect((await fetch(`${s.url}/api/git/ana/race/notes/${second}`)).status).toBe(404);

    const won = await put(second, 'written after the race');
    expect(won.status).toBe(200);
    expect(hosted(['rev-parse', `${REF}^`])).toBe(racedTip); // on top of the racing commits, none lost
    expect(hosted(['notes', 'show', first])).toBe('before the race');
    expect(hosted(['notes', 'show', second])).toBe('written after the race');
  });
});
