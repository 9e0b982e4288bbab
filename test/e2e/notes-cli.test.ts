// `mkt notes` through the built binary (bin/mkt -> dist) against a real marketplace in a temp
// data dir: a real clone pushed over smart HTTP, OWNER/REPO from its origin URL, HEAD and tags
// resolved locally; notes set by mkt are fetched by stock git and the other way round.
// Needs `npm run build`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { tempDir } from '../helpers/tmp.js';
import { gitEnvAsAna } from '../helpers/notes-server.js';
import { marketplaceEnvFor } from '../helpers/pg.js';

const execFileAsync = promisify(execFile);
const mkt = join(import.meta.dirname, '../../bin/mkt');
const home = tempDir('mkt-notes-e2e-');
const dataDir = join(home.path, 'data');
const clone = join(home.path, 'widgets');
let url = '';
let token = '';
let readToken = '';
let close: () => Promise<void> = async () => undefined;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function runMkt(args: string[], opts: { env?: NodeJS.ProcessEnv; stdin?: string; cwd?: string } = {}): Promise<Result> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [mkt, ...args],
      {
        cwd: opts.cwd ?? clone,
        env: { PATH: process.env.PATH, HOME: home.path, XDG_CONFIG_HOME: join(home.path, 'config'), XDG_CACHE_HOME: join(home.path, 'cache'), MKT_CREDENTIAL_STORE: 'file', MKT_MARKETPLACE_URL: url, ...opts.env },
      },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(opts.stdin ?? '');
  });
}

async function admin(...args: string[]): Promise<string> {
  const r = await runMkt(['admin', '--data-dir', dataDir, ...args], { cwd: home.path, env: await marketplaceEnvFor(dataDir) });
  if (r.code !== 0) throw new Error(`mkt admin ${args.join(' ')}: exit ${r.code}: ${r.stderr}`);
  return r.stdout;
}

/**
 * git in the clone, pushing and fetching with the token as HTTP Basic password (kept out of
 * argv). Asynchronous: the marketplace runs in this process and must answer while git waits.
 */
async function git(...args: string[]): Promise<string> {
  const { stdout } = await execFileAsync('git', args, { cwd: clone, encoding: 'utf8', env: { ...process.env, ...gitEnvAsAna(home.path, token) } });
  return stdout.trim();
}

beforeAll(async () => {
  mkdirSync(dataDir);
  await admin('user', 'add', 'ana', '--email', 'ana@example.com');
  token = /\bmkt_[A-Za-z0-9_-]+/.exec(await admin('token', 'create', 'ana', '--scope', 'push'))![0];
  readToken = /\bmkt_[A-Za-z0-9_-]+/.exec(await admin('token', 'create', 'ana', '--scope', 'read'))![0];
  await admin('repo', 'create', 'ana/widgets');

  const { startService } = await import('../../daemon/start.js');
  const { createLogger } = await import('../../daemon/logger.js');
  const logger = createLogger({ level: 'silent', pretty: false, stream: new Writable({ write: (_c, _e, cb) => cb() }) });
  const svc = await startService('marketplace', { host: '127.0.0.1', port: 0, dataDir, options: { databaseUrl: (await marketplaceEnvFor(dataDir)).MKT_DATABASE_URL }, env: {}, logger, out: { write: () => true } as unknown as NodeJS.WritableStream });
  url = svc.url;
  close = () => svc.close();

  execFileSync('git', ['init', '-q', '-b', 'main', clone]);
  await git('commit', '-q', '--allow-empty', '-m', 'first');
  await git('tag', '-a', '-m', 'release 1', 'v1');
  await git('commit', '-q', '--allow-empty', '-m', 'second');
  await git('remote', 'add', 'origin', `${url}/ana/widgets.git`);
  await git('push', '-q', 'origin', 'main', 'v1');
});
afterAll(async () => {
  await close();
  home.remove();
});

describe('mkt notes (built binary, real clone, real marketplace)', () => {
  it('set on HEAD from -m, then show; OWNER/REPO comes from the origin URL', async () => {
    const set = await runMkt(['notes', 'set', '-m', 'Reviewed-by: Ana', '-m', 'flaky on arm64', '--json'], { env: { MKT_MARKETPLACE_TOKEN: token } });
    expect(set.code, set.stderr).toBe(0);
    const head = await git('rev-parse', 'HEAD');
    expect(JSON.parse(set.stdout)).toMatchObject({ target: head, namespace: 'commits', git_ref: 'refs/notes/commits', action: 'added' });
    const show = await runMkt(['notes', 'show']);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toBe('Reviewed-by: Ana\n\nflaky on arm64\n');
  });

  it('a note written by mkt is fetched and shown by stock git, and one pushed by git is shown by mkt', async () => {
    await git('fetch', '-q', 'origin', 'refs/notes/*:refs/notes/*');
    expect(await git('notes', 'show', 'HEAD')).toBe('Reviewed-by: Ana\n\nflaky on arm64');
    await git('notes', '--ref', 'reviews/security', 'add', '-m', 'no secrets in logs', 'v1^{commit}');
    await git('push', '-q', 'origin', 'refs/notes/reviews/security');
    const first = await git('rev-parse', 'v1^{commit}');
    const show = await runMkt(['notes', 'show', 'v1', '--namespace', 'reviews/security', '--json']);
    expect(show.code, show.stderr).toBe(0);
    expect(JSON.parse(show.stdout)).toMatchObject({ target: first, content: 'no secrets in logs\n', namespace: 'reviews/security' });
  });

  it('ls lists both namespaces; search prints one TSV hit a line with the full id', async () => {
    const ls = await runMkt(['notes', 'ls']);
    expect(ls.code, ls.stderr).toBe(0);
    expect(ls.stdout).toMatch(/^commits\t1\trefs\/notes\/commits\t[0-9a-f]{40}\tmanual$/m);
    expect(ls.stdout).toMatch(/^reviews\/security\t1\trefs\/notes\/reviews\/security\t[0-9a-f]{40}\tmanual$/m);
    const search = await runMkt(['notes', 'search', 'flaky', 'arm64']);
    expect(search.code, search.stderr).toBe(0);
    const lines = search.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const [ns, target, snippet] = lines[0]!.split('\t');
    expect(ns).toBe('commits');
    expect(target).toBe(await git('rev-parse', 'HEAD'));
    expect(snippet).toMatch(/\[flaky\]/);
    const secrets = await runMkt(['notes', 'search', '"no secrets"', '--namespace', 'reviews/security', '--json']);
    expect(JSON.parse(secrets.stdout)).toMatchObject({ total: 1, data: [{ target: await git('rev-parse', 'v1^{commit}') }] });
  });

  it('show --attribution names the token user', async () => {
    const r = await runMkt(['notes', 'show', 'HEAD', '--attribution']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Notes-Commit: [0-9a-f]{40}\nAuthor: ana <[^>]*>\nDate: +\S+\n\nReviewed-by: Ana\n/);
  });

  it('writes: no token exits 4 with a login hint, a read-only token exits 4, content from stdin works', async () => {
    const none = await runMkt(['notes', 'set', 'HEAD~1'], { stdin: 'from stdin\n' });
    expect(none.code).toBe(4);
    expect(none.stderr).toMatch(/hint: run `mkt auth login marketplace/);
    const ro = await runMkt(['notes', 'set', 'HEAD~1'], { stdin: 'from stdin\n', env: { MKT_MARKETPLACE_TOKEN: readToken } });
    expect(ro.code).toBe(4);
    expect(ro.stderr).not.toContain(readToken);
    const ok = await runMkt(['notes', 'set', 'HEAD~1'], { stdin: 'from stdin\n', env: { MKT_MARKETPLACE_TOKEN: token } });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^action\tadded$/m);
  });

  it('rm removes the note; show then exits 1 (not found); unknown repository exits 1', async () => {
    const rm = await runMkt(['notes', 'rm', 'HEAD'], { env: { MKT_MARKETPLACE_TOKEN: token } });
    expect(rm.code, rm.stderr).toBe(0);
    const gone = await runMkt(['notes', 'show', 'HEAD']);
    expect(gone.code).toBe(1);
    expect(gone.stdout).toBe('');
    expect((await runMkt(['notes', 'ls', '--repo', 'ana/nothing'])).code).toBe(1);
  });
});
