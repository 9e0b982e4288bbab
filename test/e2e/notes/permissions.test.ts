// Issue 28 (the note on private repositories): a hosted repository, and everything the
// marketplace and git put in it afterwards (pushed objects and refs, reflogs, API note writes, the
// hook), is created 0700 (directories) / 0600 (files) or tighter whatever the process umask, so a
// data directory an operator made 0755 does not leave a private repository world-readable; and a
// start makes `repos/` 0700 again for repositories an earlier version made with the umask.
import { chmodSync, lstatSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { apiCall, startNotesServer, gitIn, gitUrl, localRepo, type NotesServer } from '../../helpers/notes-server.js';
import { tempDir } from '../../helpers/tmp.js';
import { captureLog } from '../../helpers/log-capture.js';
import { repoDir, reposRoot } from '../../../src/git/hosting.js';
import { startService } from '../../../daemon/start.js';

let s: NotesServer;
let work: { path: string; remove(): void };
let umask: number;

/** Every path under `root` (and root itself) whose mode grants anything to group or others. */
function openToOthers(root: string): string[] {
  const out: string[] = [];
  const walk = (p: string) => {
    const st = lstatSync(p);
    if ((st.mode & 0o077) !== 0) out.push(`${(st.mode & 0o777).toString(8)} ${p.slice(root.length)}`);
    if (st.isDirectory()) for (const name of readdirSync(p)) walk(join(p, name));
  };
  walk(root);
  return out;
}

beforeAll(async () => {
  // The usual umask of a service account: new files 0644, new directories 0755.
  umask = process.umask(0o022);
  s = await startNotesServer();
  chmodSync(s.dataDir, 0o755);
  work = tempDir('mkt-notes-perm-');
});

afterAll(async () => {
  await s?.close();
  work?.remove();
  process.umask(umask);
});

it('a private repository created and pushed to under umask 022 holds nothing group- or world-readable', async () => {
  await s.admin.createRepo('ana/priv', { private: true, objectFormat: 'sha1' });
  const dir = repoDir(s.dataDir, 'ana', 'priv');
  expect(openToOthers(reposRoot(s.dataDir))).toEqual([]);

  // Pushed objects, refs and reflogs; a note written through the API (the server's own pack).
  const local = await localRepo(work.path, 'priv', 2);
  await gitIn(local.dir, ['notes', 'add', '-m', 'pushed note', local.commits[0]!]);
  await gitIn(local.dir, ['push', '-q', gitUrl(s, 'ana/priv', s.tokens.anaPush), 'main', 'refs/notes/commits']);
  const put = await apiCall(s.url, 'PUT', `/api/git/ana/priv/notes/${local.commits[1]!}?namespace=api/written`, { token: s.tokens.anaPush, body: { content: 'api note' } });
  expect(put.status).toBe(200);
  expect((await apiCall(s.url, 'GET', `/api/git/ana/priv/notes/${local.commits[0]!}`, { token: s.tokens.anaRead })).body.content).toBe('pushed note\n');
  expect(openToOthers(reposRoot(s.dataDir))).toEqual([]);
  // The hook still runs (its owner may execute it), and git kept the setting that holds later files.
  expect(statSync(join(dir, 'hooks', 'pre-receive')).mode & 0o700).toBe(0o700);
  expect(await gitIn(work.path, ['--git-dir', dir, 'config', 'core.sharedRepository'])).toBe('0600');
});

it('a start makes `repos/` 0700 again, hiding repositories an earlier version made with the umask', async () => {
  chmodSync(reposRoot(s.dataDir), 0o755);
  const { logger } = captureLog('debug');
  const second = await startService('marketplace', { host: '127.0.0.1', port: 0, dataDir: s.dataDir, options: s.databaseUrl ? { databaseUrl: s.databaseUrl } : {}, env: {}, logger, out: { write: () => true } as unknown as NodeJS.WritableStream });
  try {
    expect(statSync(reposRoot(s.dataDir)).mode & 0o777).toBe(0o700);
  } finally {
    await second.close();
  }
});
