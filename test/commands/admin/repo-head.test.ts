// A hosted repository's HEAD (issue 30 item 3): `mkt admin repo create` names `main` (or
// --default-branch NAME); while that branch does not exist, the first branch pushed becomes HEAD
// (as Gitea does; `main` wins when one push brings several). Proved with stock git pushing to and
// cloning from a real marketplace over smart HTTP: the clone checks the branch out, no warning.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCli, type AdminCli } from '../../helpers/admin-cli.js';
import { gitEnvAsAna } from '../../helpers/notes-server.js';
import { marketplaceDatabaseUrl } from '../../helpers/pg.js';
import { tempDir } from '../../helpers/tmp.js';

const execFileAsync = promisify(execFile);
const dir = tempDir('mkt-repo-head-');
const data = join(dir.path, 'data');
let url = '';
let token = '';
let mkt: AdminCli;
let close: () => Promise<void> = async () => undefined;

/** Stock git in `cwd`, the push token as HTTP Basic password (kept out of argv and URLs). */
async function git(cwd: string, ...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return execFileAsync('git', args, { cwd, encoding: 'utf8', env: { PATH: process.env.PATH, ...gitEnvAsAna(dir.path, token) } });
}

/** A work tree with one commit on `branch` (`master` unless said), its origin the hosted repository. */
async function workTree(name: string, repo: string, branch = 'master'): Promise<string> {
  const wt = join(dir.path, name);
  mkdirSync(wt);
  await git(wt, 'init', '-q', '-b', branch);
  await git(wt, 'commit', '-q', '--allow-empty', '-m', `first on ${branch}`);
  await git(wt, 'remote', 'add', 'origin', `${url}/ana/${repo}.git`);
  return wt;
}

/** Clones the hosted repository; the branch checked out and git's stderr. */
async function cloneOf(repo: string, name: string): Promise<{ branch: string; stderr: string }> {
  const r = await git(dir.path, 'clone', `${url}/ana/${repo}.git`, name);
  const branch = (await git(join(dir.path, name), 'symbolic-ref', '--short', 'HEAD')).stdout.trim();
  // A clone of a HEAD that names nothing has no commit checked out.
  await git(join(dir.path, name), 'rev-parse', '--verify', 'HEAD');
  return { branch, stderr: r.stderr };
}

const headOf = (repo: string): string => readFileSync(join(data, 'repos', 'ana', `${repo}.git`, 'HEAD'), 'utf8').trim();

beforeAll(async () => {
  const databaseUrl = await marketplaceDatabaseUrl();
  mkt = adminCli(dir.path, data, { databaseUrl });
  expect((await mkt(['user', 'add', 'ana', '--email', 'ana@example.com'])).code).toBe(0);
  token = (await mkt(['token', 'create', 'ana', '--scope', 'push'])).out.trim();
  const { startService } = await import('../../../daemon/start.js');
  const { createLogger } = await import('../../../daemon/logger.js');
  const logger = createLogger({ level: 'silent', pretty: false, stream: new Writable({ write: (_c, _e, cb) => cb() }) });
  const svc = await startService('marketplace', { host: '127.0.0.1', port: 0, dataDir: data, options: databaseUrl ? { databaseUrl } : {}, env: {}, logger, out: { write: () => true } as unknown as NodeJS.WritableStream });
  url = svc.url;
  close = () => svc.close();
});
afterAll(async () => {
  await close();
  dir.remove();
});

describe('hosted repository HEAD', () => {
  it("the README's flow: repo create, push HEAD:main from a master work tree, clone checks out main with no warning", async () => {
    const r = await mkt(['repo', 'create', 'ana/app', '--json']);
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ default_branch: 'main' });
    expect(headOf('app')).toBe('ref: refs/heads/main');
    const wt = await workTree('app-wt', 'app');
    await git(wt, 'push', '-q', 'origin', 'HEAD:main');
    const c = await cloneOf('app', 'app-clone');
    expect(c.branch).toBe('main');
    expect(c.stderr).not.toMatch(/warning|nonexistent ref|empty repository/i);
  });

  it('HEAD follows the first branch pushed when its own branch is missing, and stays once it exists', async () => {
    expect((await mkt(['repo', 'create', 'ana/lib'])).code).toBe(0);
    const wt = await workTree('lib-wt', 'lib', 'master');
    await git(wt, 'push', '-q', 'origin', 'master');
    expect(headOf('lib')).toBe('ref: refs/heads/master');
    expect((await cloneOf('lib', 'lib-clone')).branch).toBe('master');
    // A later branch, even `main`, does not move a HEAD whose branch exists.
    await git(wt, 'push', '-q', 'origin', 'master:main', 'master:feature');
    expect(headOf('lib')).toBe('ref: refs/heads/master');
  });

  it('one push bringing several branches: main wins', async () => {
    expect((await mkt(['repo', 'create', 'ana/multi', '--default-branch', 'trunk'])).code).toBe(0);
    const wt = await workTree('multi-wt', 'multi', 'work');
    await git(wt, 'push', '-q', 'origin', 'work:alpha', 'work:main', 'work:zeta');
    expect(headOf('multi')).toBe('ref: refs/heads/main');
    expect((await cloneOf('multi', 'multi-clone')).branch).toBe('main');
  });

  it('--default-branch NAME names HEAD, and a push of that branch clones with it checked out', async () => {
    const r = await mkt(['repo', 'create', 'ana/tools', '--default-branch', 'trunk']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/\(default branch trunk\)\n$/);
    expect(headOf('tools')).toBe('ref: refs/heads/trunk');
    const wt = await workTree('tools-wt', 'tools', 'trunk');
    // A notes ref alone is no branch: HEAD waits.
    await git(wt, 'notes', 'add', '-m', 'a note', 'HEAD');
    await git(wt, 'push', '-q', 'origin', 'refs/notes/commits', 'trunk:other', 'trunk');
    expect(headOf('tools')).toBe('ref: refs/heads/trunk');
    expect((await cloneOf('tools', 'tools-clone')).branch).toBe('trunk');
  });

  it('a --default-branch git would not take is a usage error, and nothing is created', async () => {
    for (const bad of ['a..b', 'has space', '@{-1}', '-x', 'ends.lock', 'x/']) {
      const r = await mkt(['repo', 'create', 'ana/bad', `--default-branch=${bad}`]);
      expect(r.code, bad).toBe(2);
      expect(r.err, bad).toMatch(/^mkt: --default-branch: not a valid branch name: /);
    }
    expect(JSON.parse((await mkt(['repo', 'list', '--json'])).out).map((x: { name: string }) => x.name)).not.toContain('bad');
  });
});
