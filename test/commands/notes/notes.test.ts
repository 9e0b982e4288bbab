// `mkt notes ls|search|show|set|rm` at the run level (fake streams, real git clone, real
// marketplace): OWNER/REPO and revisions from the clone, content sources, output for scripts
// and people, and honest exit codes (issue 4 "Client"; ARCHITECTURE exit codes).
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../../commands/root/run.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { tempDir } from '../../helpers/tmp.js';
import { startService } from '../../../daemon/start.js';
import { createLogger } from '../../../daemon/logger.js';
import { MAX_NOTE_BYTES } from '../../../src/schemas/notes.js';
import { marketplaceEnvFor } from '../../helpers/pg.js';

const home = tempDir('mkt-notes-cli-');
const clone = join(home.path, 'clone');
let env: NodeJS.ProcessEnv;

function git(...args: string[]): string {
  return execFileSync('git', args, { cwd: clone, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 'Ana', GIT_AUTHOR_EMAIL: 'ana@example.com', GIT_COMMITTER_NAME: 'Ana', GIT_COMMITTER_EMAIL: 'ana@example.com' } }).trim();
}

async function mkt(args: string[], opts: { stdin?: string; env?: NodeJS.ProcessEnv; cwd?: string; tty?: boolean } = {}): Promise<{ code: number; out: string; err: string }> {
  const io = fakeIO({ env: { ...env, ...opts.env }, stdin: opts.stdin, cwd: opts.cwd ?? clone, tty: opts.tty });
  const code = await run(['notes', ...args], io);
  return { code, out: io.out(), err: io.err() };
}

beforeAll(() => {
  execFileSync('git', ['init', '-q', '-b', 'main', clone]);
  git('commit', '-q', '--allow-empty', '-m', 'first');
  env = { XDG_CONFIG_HOME: join(home.path, 'config'), XDG_CACHE_HOME: join(home.path, 'cache'), MKT_CREDENTIAL_STORE: 'file', MKT_MARKETPLACE_URL: 'http://127.0.0.1:9' };
});
afterAll(() => home.remove());

describe('mkt notes: usage errors exit 2 before any request', () => {
  it('no --repo and no origin remote', async () => {
    const r = await mkt(['ls']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/no repository given and the clone has no remote/);
    expect(r.err).toMatch(/hint: pass --repo OWNER\/REPO/);
  });

  it('no --repo outside a clone', async () => {
    const r = await mkt(['search', 'flaky'], { cwd: home.path });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/not inside a git clone/);
  });

  it('a revision the clone does not know, or a short sha outside a clone', async () => {
    expect((await mkt(['show', 'no-such-tag', '--repo', 'ana/widgets'])).err).toMatch(/unknown revision "no-such-tag"/);
    const outside = await mkt(['show', 'abc1234', '--repo', 'ana/widgets'], { cwd: home.path });
    expect(outside.code).toBe(2);
    expect(outside.err).toMatch(/full 40- or 64-hex object id/);
  });

  it('an empty note, both -m and -F, an unreadable -F, a bad --limit, an empty query', async () => {
    const empty = await mkt(['set', '--repo', 'ana/widgets', '-m', '  \n'], {});
    expect(empty.code).toBe(2);
    expect(empty.err).toMatch(/the note is empty/);
    const file = join(home.path, 'note.txt');
    writeFileSync(file, 'from a file\n');
    expect((await mkt(['set', '--repo', 'ana/widgets', '-m', 'x', '-F', file])).err).toMatch(/not both/);
    expect((await mkt(['set', '--repo', 'ana/widgets', '-F', join(home.path, 'missing.txt')])).err).toMatch(/cannot read -F .*ENOENT/);
    expect((await mkt(['search', 'x', '--limit', '0', '--repo', 'ana/widgets'])).code).toBe(2);
    expect((await mkt(['search', ' ', '--repo', 'ana/widgets'])).code).toBe(2);
    expect((await mkt(['ls', '--repo', 'widgets'])).err).toMatch(/--repo must be OWNER\/REPO/);
  });
});

describe('mkt notes: an unreachable server exits 3', () => {
  it('ls and set against a dead port', async () => {
    const r = await mkt(['ls', '--repo', 'ana/widgets']);
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/cannot reach http:\/\/127\.0\.0\.1:9/);
    expect((await mkt(['set', 'HEAD', '--repo', 'ana/widgets'], { stdin: 'a note\n' })).code).toBe(3);
  });
});

describe('mkt notes against a real marketplace', () => {
  const dataDir = join(home.path, 'data');
  const hosted = join(home.path, 'hosted');
  let url = '';
  let push = '';
  let read = '';
  let head = '';
  let first = '';
  let close: () => Promise<void> = async () => undefined;
  const execFileAsync = promisify(execFile);
  // Asynchronous: the marketplace runs in this process and must answer while git pushes.
  const hgit = async (...args: string[]): Promise<string> =>
    (await execFileAsync('git', args, { cwd: hosted, env: { ...process.env, GIT_AUTHOR_NAME: 'Bo', GIT_AUTHOR_EMAIL: 'bo@example.com', GIT_COMMITTER_NAME: 'Bo', GIT_COMMITTER_EMAIL: 'bo@example.com', GIT_TERMINAL_PROMPT: '0' } })).stdout.trim();
  async function admin(...args: string[]): Promise<string> {
    const io = fakeIO({ env: await marketplaceEnvFor(dataDir) });
    const code = await run(['admin', '--data-dir', dataDir, ...args], io);
    if (code !== 0) throw new Error(`mkt admin ${args.join(' ')}: ${io.err()}`);
    return io.out();
  }
  const tokenIn = (out: string): string => /\bmkt_[A-Za-z0-9_-]+/.exec(out)![0];
  const anon = (): NodeJS.ProcessEnv => ({ MKT_MARKETPLACE_URL: url });
  const as = (token: string): NodeJS.ProcessEnv => ({ MKT_MARKETPLACE_URL: url, MKT_MARKETPLACE_TOKEN: token });

  beforeAll(async () => {
    mkdirSync(dataDir);
    await admin('user', 'add', 'bo', '--email', 'bo@example.com');
    push = tokenIn(await admin('token', 'create', 'bo', '--scope', 'push'));
    read = tokenIn(await admin('token', 'create', 'bo', '--scope', 'read'));
    await admin('repo', 'create', 'bo/gadgets');
    const logger = createLogger({ level: 'silent', pretty: false });
    const svc = await startService('marketplace', { host: '127.0.0.1', port: 0, dataDir, options: { databaseUrl: (await marketplaceEnvFor(dataDir)).MKT_DATABASE_URL }, env: {}, logger, out: { write: () => true } as unknown as NodeJS.WritableStream });
    url = svc.url;
    close = () => svc.close();
    execFileSync('git', ['init', '-q', '-b', 'main', hosted]);
    await hgit('commit', '-q', '--allow-empty', '-m', 'one');
    first = await hgit('rev-parse', 'HEAD');
    await hgit('commit', '-q', '--allow-empty', '-m', 'two');
    head = await hgit('rev-parse', 'HEAD');
    await hgit('remote', 'add', 'origin', `${url}/bo/gadgets.git`);
    const basic = Buffer.from(`bo:${push}`).toString('base64');
    await hgit('-c', `http.extraHeader=Authorization: Basic ${basic}`, 'push', '-q', 'origin', 'main');
  });
  afterAll(() => close());

  it('set from -F FILE into a namespace, then show --json with attribution', async () => {
    const file = join(home.path, 'review.txt');
    writeFileSync(file, 'Security review: token handling ok\n\n\n');
    const set = await mkt(['set', 'HEAD~1', '-F', file, '--namespace', 'reviews/security', '--commit-message', 'after audit'], { cwd: hosted, env: as(push) });
    expect(set.code, set.err).toBe(0);
    expect(set.out).toMatch(new RegExp(`^action\tadded\ntarget\t${first}\nnamespace\treviews/security\ncommit\t[0-9a-f]{40}\n$`));
    const show = await mkt(['show', first.slice(0, 8), '--namespace', 'reviews/security', '--attribution', '--json'], { cwd: hosted, env: as(read) });
    expect(show.code, show.err).toBe(0);
    expect(JSON.parse(show.out)).toMatchObject({ target: first, namespace: 'reviews/security', content: 'Security review: token handling ok\n', attribution: { name: 'bo', email: 'bo@example.com', exact: true } });
  });

  it('setting the same content again answers unchanged; --repo works from outside any clone', async () => {
    const again = await mkt(['set', first, '--repo', 'bo/gadgets', '--namespace', 'reviews/security', '--json'], { cwd: home.path, env: as(push), stdin: 'Security review: token handling ok\n' });
    expect(again.code, again.err).toBe(0);
    expect(JSON.parse(again.out)).toMatchObject({ action: 'unchanged', target: first });
  });

  it('search: TSV hits in pipes, a table with a header and short ids on a terminal, no hits is exit 0', async () => {
    await mkt(['set', '-m', 'token rotation pending'], { cwd: hosted, env: as(push) });
    const tsv = await mkt(['search', 'token'], { cwd: hosted, env: anon() });
    expect(tsv.code, tsv.err).toBe(0);
    const rows = tsv.out.trim().split('\n').map((l) => l.split('\t'));
    expect(rows.map((r) => `${r[0]} ${r[1]}`).sort()).toEqual([`commits ${head}`, `reviews/security ${first}`].sort());
    expect(rows.every((r) => r.length === 3 && /\[token\]/.test(r[2]!))).toBe(true);
    const table = await mkt(['search', 'token', '--commits-only', '--limit', '1'], { cwd: hosted, env: { ...anon(), NO_COLOR: '1' }, tty: true });
    expect(table.out.split('\n')[0]).toMatch(/^NAMESPACE +TARGET +SNIPPET$/);
    expect(table.out.split('\n')).toHaveLength(3);
    expect(table.out).toMatch(new RegExp(`^\\S+ +${head.slice(0, 12)}  `, 'm'));
    const none = await mkt(['search', 'nonexistentword'], { cwd: hosted, env: anon() });
    expect(none.code).toBe(0);
    expect(none.out).toBe('');
  });

  it('ls in pipes: namespace, count, ref, tip, merge strategy', async () => {
    const ls = await mkt(['ls'], { cwd: hosted, env: anon() });
    expect(ls.code, ls.err).toBe(0);
    expect(ls.out).toMatch(/^commits\t1\trefs\/notes\/commits\t[0-9a-f]{40}\tmanual\nreviews\/security\t1\trefs\/notes\/reviews\/security\t[0-9a-f]{40}\tmanual\n$/);
  });

  it('exit codes: 403 (read-only token) is 4 with a push hint; 404 (no note, commit unknown to the server, no repository) is 1; oversized (422, input the server refuses) is 2', async () => {
    const ro = await mkt(['set', '-m', 'nope'], { cwd: hosted, env: as(read) });
    expect(ro.code).toBe(4);
    expect(ro.err).toMatch(/HTTP 403/);
    expect(ro.err).toMatch(/hint: writing notes needs a push-scope token of an account that can push to bo\/gadgets/);
    const missing = await mkt(['show', 'HEAD~1'], { cwd: hosted, env: anon() });
    expect(missing.code).toBe(1);
    expect(missing.out).toBe('');
    const unknown = await mkt(['set', 'c'.repeat(40), '-m', 'x'], { cwd: hosted, env: as(push) });
    expect(unknown.code).toBe(1);
    expect((await mkt(['ls', '--repo', 'bo/nothing'], { cwd: hosted, env: anon() })).code).toBe(1);
    const big = join(home.path, 'big.txt');
    writeFileSync(big, 'x'.repeat(MAX_NOTE_BYTES + 1));
    const over = await mkt(['set', '-F', big], { cwd: hosted, env: as(push) });
    expect(over.code).toBe(2);
    expect(over.err).toMatch(/^mkt: content is larger than the maximum note size/);
    // A refused field is named by its flag: the body's `message` is --commit-message, not -m (issue 30, item 7).
    const long = await mkt(['set', '-m', 'x', '--commit-message', 'c'.repeat(2001)], { cwd: hosted, env: as(push) });
    expect(long.code).toBe(2);
    expect(long.err).toBe('mkt: --commit-message must not have more than 2000 characters\n');
  });

  it('a SHA-256 repository: HEAD resolves to a 64-hex id and the note round-trips', async () => {
    await admin('repo', 'create', 'bo/sha', '--object-format', 'sha256');
    const dir = join(home.path, 'sha');
    execFileSync('git', ['init', '-q', '--object-format=sha256', '-b', 'main', dir]);
    const sgit = async (...args: string[]): Promise<string> =>
      (await execFileAsync('git', args, { cwd: dir, env: { ...process.env, GIT_AUTHOR_NAME: 'Bo', GIT_AUTHOR_EMAIL: 'bo@example.com', GIT_COMMITTER_NAME: 'Bo', GIT_COMMITTER_EMAIL: 'bo@example.com', GIT_TERMINAL_PROMPT: '0' } })).stdout.trim();
    await sgit('commit', '-q', '--allow-empty', '-m', 'one');
    await sgit('remote', 'add', 'origin', `${url}/bo/sha.git`);
    await sgit('-c', `http.extraHeader=Authorization: Basic ${Buffer.from(`bo:${push}`).toString('base64')}`, 'push', '-q', 'origin', 'main');
    const id = await sgit('rev-parse', 'HEAD');
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    const set = await mkt(['set', id.slice(0, 10), '-m', 'sha-256 note', '--json'], { cwd: dir, env: as(push) });
    expect(set.code, set.err).toBe(0);
    expect(JSON.parse(set.out)).toMatchObject({ target: id, action: 'added' });
    expect((await mkt(['show'], { cwd: dir, env: anon() })).out).toBe('sha-256 note\n');
  });

  it('rm in a namespace, twice (204 both times); the note is gone', async () => {
    for (let i = 0; i < 2; i++) {
      const rm = await mkt(['rm', 'HEAD~1', '--namespace', 'reviews/security', '--json'], { cwd: hosted, env: as(push) });
      expect(rm.code, rm.err).toBe(0);
      expect(JSON.parse(rm.out)).toEqual({ target: first, namespace: 'reviews/security', removed: true });
    }
    expect((await mkt(['show', 'HEAD~1', '--namespace', 'reviews/security'], { cwd: hosted, env: anon() })).code).toBe(1);
  });

  it('for scripts (issue 36): fields, --range, --all --format ndjson, --literal, --count-by, --owner, missing and export against the real server', async () => {
    // Three more commits; notes in the `review` namespace on two of them, one with a message id.
    for (const m of ['three', 'four', 'five']) await hgit('commit', '-q', '--allow-empty', '-m', m);
    await hgit('-c', `http.extraHeader=Authorization: Basic ${Buffer.from(`bo:${push}`).toString('base64')}`, 'push', '-q', 'origin', 'main');
    const ids = (await hgit('rev-list', '--reverse', 'HEAD~3..HEAD')).split('\n');
    const w1 = await mkt(['set', ids[0]!, '--namespace', 'review', '-m', 'Code-Review+2: Alice <alice@example.org>\nReviewed-by: Alice <alice@example.org>\nLink: <20261129.1234-1-ana@example.org>'], { cwd: hosted, env: as(push) });
    expect(w1.code, w1.err).toBe(0);
    const w2 = await mkt(['set', ids[2]!, '--namespace', 'review', '-m', 'Code-Review-1: Bo <bo@example.com>\ncloses-issues=12,14'], { cwd: hosted, env: as(push) });
    expect(w2.code, w2.err).toBe(0);

    const ndjson = await mkt(['search', '--namespace', 'review', '--field', 'Reviewed-by~alice', '--range', 'HEAD~3..HEAD', '--all', '--format', 'ndjson'], { cwd: hosted, env: anon() });
    expect(ndjson.code, ndjson.err).toBe(0);
    const hits = ndjson.out.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({ repo: 'bo/gadgets', namespace: 'review', object: ids[0], object_type: 'commit', commit_subject: 'three', fields: { 'Code-Review': ['+2 Alice <alice@example.org>'], 'Reviewed-by': ['Alice <alice@example.org>'] } });

    const literal = await mkt(['search', '--literal', '20261129.1234-1-ana@example.org', '--namespace', 'review', '--format', 'tsv'], { cwd: hosted, env: anon() });
    expect(literal.code, literal.err).toBe(0);
    expect(literal.out.split('\t').slice(0, 3)).toEqual(['bo/gadgets', 'review', ids[0]]);

    const counts = await mkt(['search', '--namespace', 'review', '--count-by', 'field:Code-Review'], { cwd: hosted, env: anon() });
    expect(counts.out).toBe('+2 Alice <alice@example.org>\t1\n-1 Bo <bo@example.com>\t1\n');

    const owner = await mkt(['search', '--owner', 'bo', '--field', 'closes-issues~14', '--format', 'json', '--all'], { cwd: home.path, env: anon() });
    expect(owner.code, owner.err).toBe(0);
    expect((JSON.parse(owner.out) as { object: string }[]).map((h) => h.object)).toEqual([ids[2]]);

    const missing = await mkt(['missing', 'HEAD~3..HEAD', '--namespace', 'review'], { cwd: hosted, env: anon() });
    expect(missing.code, missing.err).toBe(0);
    expect(missing.out).toBe(`${ids[1]}\n`);

    const csv = await mkt(['export', '--namespace', 'review', '--format', 'csv'], { cwd: hosted, env: anon() });
    expect(csv.code, csv.err).toBe(0);
    const records = csv.out.split('\r\n');
    expect(records[0]).toBe('repo,namespace,object,object_type,note_author,note_email,note_at,commit_subject,commit_author,fields,content');
    expect(records).toHaveLength(4);
    expect(csv.out).toContain(`bo/gadgets,review,${ids[2]},commit,`);
    expect(csv.out).toContain('"Code-Review-1: Bo <bo@example.com>\ncloses-issues=12,14\n"\r\n');
  });
});
