// Crash safety of notes (issue 11, regression): notes written concurrently through the API, the
// marketplace SIGKILLed mid-write and restarted on the same data dir: every acknowledged note reads
// back, and `git fsck` finds the repository whole.
import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { AccountsAdmin } from '../../../daemon/services/marketplace/accounts/admin.js';
import { fastCommits, fsck, gitIn } from '../../helpers/git.js';
import { tempDir } from '../../helpers/tmp.js';
import { send, serve, writeUntilKilled } from './harness.js';
import { marketplaceEnvFor } from '../../helpers/pg.js';

const COMMITS = 60;
const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((c) => c()));

describe('notes survive SIGKILL', () => {
  it('every note answered 200 before the kill reads back after a restart, and git fsck is clean', async () => {
    const dir = tempDir('mkt-crash-notes-');
    const work = tempDir('mkt-crash-notes-work-');
    cleanups.push(() => dir.remove(), () => work.remove());
    const admin = await AccountsAdmin.open({ dataDir: dir.path, databaseUrl: (await marketplaceEnvFor(dir.path)).MKT_DATABASE_URL });
    await admin.addUser({ name: 'ana', email: 'ana@example.com' });
    const token = (await admin.createToken('ana', 'push')).token;
    await admin.createRepo('ana/app', { private: false, objectFormat: 'sha1' });
    await admin.close();
    const ids = await fastCommits(work.path, COMMITS);

    const first = await serve('marketplace', dir.path);
    cleanups.push(() => first.child.kill('SIGKILL'));
    const remote = new URL(`${first.url}/ana/app.git`);
    remote.username = 'x';
    remote.password = token;
    await gitIn(work.path, ['push', '-q', remote.toString(), 'main']);

    // Each worker writes namespaces of its own (their own notes refs), each commit once in each: an
    // acknowledged note is never overwritten by a later one, so it must read back exactly. A worker
    // that has annotated every commit goes on in its next namespace, so writes are in flight at the
    // kill however fast the machine is (a worker that stopped at the last commit would wait for
    // ever, and a fast machine wrote all 4 x 60 notes before the kill's first second was out).
    const auth = { authorization: `Bearer ${token}` };
    const run = await writeUntilKilled(first, {
      workers: 4,
      minAcks: 20,
      minMs: 1_000,
      write: async (w, i) => {
        const round = Math.floor(i / COMMITS);
        const note = { namespace: `crash/w${w}r${round}`, commit: ids[i % COMMITS]!, content: `worker ${w} note ${i}\n` };
        const r = await send(`${first.url}/api/git/ana/app/notes/${note.commit}?namespace=${note.namespace}`, 'PUT', { content: note.content }, auth);
        return r.status === 200 ? note : undefined;
      },
    });
    expect(run.acknowledged.length).toBeGreaterThanOrEqual(20);
    expect(run.cutOff).toBeGreaterThan(0);

    const second = await serve('marketplace', dir.path);
    cleanups.push(() => second.child.kill('SIGKILL'));
    for (const n of run.acknowledged) {
      const got = await send(`${second.url}/api/git/ana/app/notes/${n.commit}?namespace=${n.namespace}`, 'GET', undefined);
      expect(got.status, `${n.namespace} ${n.commit}`).toBe(200);
      expect(got.body.content).toBe(n.content);
    }
    const checked = await fsck(join(dir.path, 'repos', 'ana', 'app.git'));
    expect(checked, checked.out).toMatchObject({ code: 0 });
    expect(checked.out).not.toMatch(/error|missing|broken|corrupt/i);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });
});
