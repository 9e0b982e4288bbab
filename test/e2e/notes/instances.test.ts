// Three marketplace instances on one PostgreSQL database and one repository volume (one data
// dir), as behind a load balancer: 36 concurrent note writes to one repository's one notes ref,
// sent round-robin to the instances, all land (no 422: writes from every instance queue on the
// ref's advisory lock), `git fsck` finds the repository clean, and every note is found by get
// and by search from every instance, whichever instance wrote it.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../../../daemon/start.js';
import { AccountsAdmin } from '../../../daemon/services/marketplace/accounts/admin.js';
import { repoDir } from '../../../src/git/hosting.js';
import { apiCall, gitIn, GIT_ENV, localRepo } from '../../helpers/notes-server.js';
import { captureLog } from '../../helpers/log-capture.js';
import { freshDatabaseUrl } from '../../helpers/pg.js';
import { tempDir } from '../../helpers/tmp.js';

const INSTANCES = 3;
const WRITES = 36;

let dataDir: { path: string; remove(): void };
let work: { path: string; remove(): void };
let instances: RunningService[] = [];
let admin: AccountsAdmin;
let token: string;
let commits: string[];

const git = (args: string[]) => execFileSync('git', ['--git-dir', repoDir(dataDir.path, 'ana', 'multi'), ...args], { encoding: 'utf8', env: { ...process.env, ...GIT_ENV } }).trim();

beforeAll(async () => {
  dataDir = tempDir('mkt-notes-instances-');
  work = tempDir('mkt-notes-instances-work-');
  const databaseUrl = await freshDatabaseUrl();
  for (let i = 0; i < INSTANCES; i++) {
    const { logger } = captureLog('debug');
    instances.push(await startService('marketplace', { host: '127.0.0.1', port: 0, dataDir: dataDir.path, options: { databaseUrl }, env: {}, logger, out: { write: () => true } as unknown as NodeJS.WritableStream }));
  }
  admin = await AccountsAdmin.open({ dataDir: dataDir.path, databaseUrl });
  await admin.addUser({ name: 'ana', email: 'ana@example.com' });
  token = (await admin.createToken('ana', 'push')).token;
  await admin.createRepo('ana/multi', { private: false, objectFormat: 'sha1' });
  const local = await localRepo(work.path, 'multi', WRITES);
  commits = local.commits;
  const url = new URL(`${instances[1]!.url}/ana/multi.git`);
  url.username = 'x';
  url.password = token;
  await gitIn(local.dir, ['push', '-q', url.toString(), 'main']);
}, 120_000);

afterAll(async () => {
  await admin?.close();
  for (const s of instances) await s.close();
  instances = [];
  dataDir?.remove();
  work?.remove();
});

const at = (i: number) => instances[i % INSTANCES]!.url;
const content = (i: number) => `multiinstance note ${i}: written through instance ${i % INSTANCES}, word${i}word`;

describe('notes writes through several instances on one database and one repository volume', () => {
  it(`${WRITES} concurrent writes to one ref, round-robin over ${INSTANCES} instances, all land; git fsck is clean`, async () => {
    const results = await Promise.all(
      commits.map((c, i) => apiCall(at(i), 'PUT', `/api/git/ana/multi/notes/${c}`, { token, body: { content: content(i) } })),
    );
    for (const [i, r] of results.entries()) expect(r.status, `write ${i}: ${JSON.stringify(r.body)}`).toBe(200);
    expect(results.every((r) => r.body.action === 'added')).toBe(true);
    // One linear history of notes commits, one per write.
    expect(Number(git(['rev-list', '--count', 'refs/notes/commits']))).toBe(WRITES);
    expect(git(['notes', 'list']).split('\n')).toHaveLength(WRITES);
    for (const [i, c] of commits.entries()) expect(git(['notes', 'show', c])).toBe(content(i));
    execFileSync('git', ['--git-dir', repoDir(dataDir.path, 'ana', 'multi'), 'fsck', '--full', '--strict', '--no-progress'], { env: { ...process.env, ...GIT_ENV }, stdio: ['ignore', 'ignore', 'pipe'] });
    // Writes queued on the ref's lock instead of racing: no compare-and-swap failed, so no
    // notes commit was made and then left behind unreachable.
    const unreachable = git(['fsck', '--unreachable', '--no-reflogs', '--no-progress']).split('\n').filter((l) => l.startsWith('unreachable commit'));
    expect(unreachable).toEqual([]);
  }, 120_000);

  it('every instance gets and finds every note, whichever instance wrote it', async () => {
    for (let k = 0; k < INSTANCES; k++) {
      for (const [i, c] of commits.entries()) {
        const r = await apiCall(instances[k]!.url, 'GET', `/api/git/ana/multi/notes/${c}`);
        expect(r.status, `instance ${k}, note ${i}`).toBe(200);
        expect(r.body.content).toBe(content(i));
      }
      const all = await apiCall(instances[k]!.url, 'GET', '/api/git/ana/multi/notes/search?q=multiinstance&limit=200');
      expect(all.status).toBe(200);
      expect((all.body.data as { target: string }[]).map((h) => h.target).sort()).toEqual([...commits].sort());
      for (const i of [0, 1, 2, WRITES - 1]) {
        const one = await apiCall(instances[k]!.url, 'GET', `/api/git/ana/multi/notes/search?q=word${i}word`);
        expect((one.body.data as { target: string }[]).map((h) => h.target)).toEqual([commits[i]]);
      }
      const ns = await apiCall(instances[k]!.url, 'GET', '/api/git/ana/multi/notes');
      expect(ns.body.data).toEqual([expect.objectContaining({ name: 'commits', notes: WRITES, tip: git(['rev-parse', 'refs/notes/commits']) })]);
    }
  });

  it('an update through one instance is read at once through the others', async () => {
    for (let round = 0; round < 6; round++) {
      const writer = round % INSTANCES;
      const text = `updated in round ${round} through instance ${writer}`;
      const put = await apiCall(at(writer), 'PUT', `/api/git/ana/multi/notes/${commits[0]}`, { token, body: { content: text } });
      expect(put.status).toBe(200);
      for (let k = 0; k < INSTANCES; k++) {
        // Within REF_READ_TTL_MS a reader may hold the old tip; the writer's notification drops it sooner.
        await expect.poll(async () => (await apiCall(instances[k]!.url, 'GET', `/api/git/ana/multi/notes/${commits[0]}`)).body.content, { timeout: 2_000, interval: 20 }).toBe(text);
        const hit = await apiCall(instances[k]!.url, 'GET', `/api/git/ana/multi/notes/search?q=${encodeURIComponent(`"round ${round}"`)}`);
        expect((hit.body.data as { target: string }[]).map((h) => h.target)).toEqual([commits[0]]);
      }
    }
  });
});
