// A note's history (issue 34) against a running marketplace: GET .../notes/{target}/history lists
// the versions newest first (removals as null content) with author and time, answers the 404s
// get_note answers (but a removed note keeps its history), caps `limit`; `mkt notes log` prints it
// and `mkt admin repo notes-merge` stores a namespace's strategy (list_namespaces shows it). Attack:
// on a notes ref of 100,000 commits the history answers at once with `complete: false` (the walk
// is bounded), however old the note.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../../commands/root/run.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { adminCli } from '../../helpers/admin-cli.js';
import { anaRepos, apiCall, startNotesServer, gitIn, GIT_ENV, type NotesServer } from '../../helpers/notes-server.js';
import { tempDir } from '../../helpers/tmp.js';
import { repoDir } from '../../../src/git/hosting.js';
import { HISTORY_MAX_LIMIT } from '../../../src/schemas/notes.js';

let s: NotesServer;
let work: { path: string; remove(): void };
let commits: string[];
let clone: string;

const call = (method: string, path: string, token?: string, body?: unknown) => apiCall(s.url, method, path, { token, body });
const history = (target: string, query = '', token?: string) => call('GET', `/api/git/ana/app/notes/${target}/history${query}`, token);

/**
 * `git fast-import` into `gitDir`, awaited rather than run synchronously: while a synchronous child
 * runs (tens of seconds on a loaded machine), this process cannot see the server close its idle
 * keep-alive connections, and the next request, sent on such a socket, fails with ECONNRESET.
 */
function fastImport(gitDir: string, input: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['--git-dir', gitDir, 'fast-import', '--quiet'], { env: { ...process.env, ...GIT_ENV }, stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`git fast-import exited ${code}: ${err}`))));
    child.stdin.end(input);
  });
}

async function mkt(args: string[], cwd: string): Promise<{ code: number; out: string; err: string }> {
  const env = { XDG_CONFIG_HOME: `${work.path}/config`, XDG_CACHE_HOME: `${work.path}/cache`, MKT_CREDENTIAL_STORE: 'file', MKT_MARKETPLACE_URL: s.url, MKT_MARKETPLACE_TOKEN: s.tokens.anaRead };
  const io = fakeIO({ env, cwd });
  const code = await run(['notes', ...args], io);
  return { code, out: io.out(), err: io.err() };
}

beforeAll(async () => {
  s = await startNotesServer();
  work = tempDir('mkt-notes-history-');
  ({ commits, dir: clone } = await anaRepos(s, work.path, 3));
  await gitIn(clone, ['remote', 'add', 'origin', `${s.url}/ana/app.git`]);
});

afterAll(async () => {
  await s?.close();
  work?.remove();
});

describe('note history', () => {
  it('lists the versions newest first, a removal as null, each with its commit, author and time', async () => {
    const c = commits[0]!;
    const w1 = await call('PUT', `/api/git/ana/app/notes/${c}`, s.tokens.anaPush, { content: 'first\n' });
    const w2 = await call('PUT', `/api/git/ana/app/notes/${c}`, s.tokens.boPush, { content: 'second\n' }).catch(() => undefined);
    // bo cannot push to ana/app: only ana's writes land.
    expect(w2?.status).toBe(403);
    await call('PUT', `/api/git/ana/app/notes/${commits[1]!}`, s.tokens.anaPush, { content: 'elsewhere\n' });
    expect((await call('DELETE', `/api/git/ana/app/notes/${c}`, s.tokens.anaPush)).status).toBe(204);
    const w3 = await call('PUT', `/api/git/ana/app/notes/${c}`, s.tokens.anaPush, { content: 'third\n' });
    const h = await history(c);
    expect(h.status).toBe(200);
    const data = h.body.data as { content: string | null; commit: string; name: string; email: string; at: string }[];
    expect(data.map((v) => v.content)).toEqual(['third\n', null, 'first\n']);
    expect(data[0]).toMatchObject({ commit: w3.body.commit, name: 'ana', email: 'ana@example.com' });
    expect(data[2]!.commit).toBe(w1.body.commit);
    expect(data[0]!.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(h.body).toMatchObject({ target: c, namespace: 'commits', git_ref: 'refs/notes/commits', complete: true });
    // limit: at most that many, and then older versions may exist.
    const one = await history(c, '?limit=1');
    expect((one.body.data as unknown[]).length).toBe(1);
    expect(one.body.complete).toBe(false);
    expect((await history(c, `?limit=${HISTORY_MAX_LIMIT * 10}`)).status).toBe(200);
    expect((await history(c, '?limit=0')).status).toBe(400);
  });

  it('answers the 404s of get_note; a removed note keeps its history', async () => {
    const c = commits[2]!;
    expect((await history(c)).status).toBe(404); // never had a note
    await call('PUT', `/api/git/ana/app/notes/${c}`, s.tokens.anaPush, { content: 'gone soon\n' });
    await call('DELETE', `/api/git/ana/app/notes/${c}`, s.tokens.anaPush);
    expect((await call('GET', `/api/git/ana/app/notes/${c}`)).status).toBe(404);
    const h = await history(c);
    expect(h.status).toBe(200);
    expect((h.body.data as { content: string | null }[]).map((v) => v.content)).toEqual([null, 'gone soon\n']);
    expect((await history(c, '?namespace=nothing-here')).status).toBe(404);
    expect((await call('GET', `/api/git/ana/nope/notes/${c}/history`)).status).toBe(404);
    // A private repository is invisible to anonymous callers and to users without access.
    await call('PUT', `/api/git/ana/secret/notes/${c}`, s.tokens.anaPush, { content: 'secret\n' });
    expect((await call('GET', `/api/git/ana/secret/notes/${c}/history`)).status).toBe(404);
    expect((await call('GET', `/api/git/ana/secret/notes/${c}/history`, s.tokens.boRead)).status).toBe(404);
    expect((await call('GET', `/api/git/ana/secret/notes/${c}/history`, s.tokens.anaRead)).status).toBe(200);
    const bad = await call('GET', `/api/git/ana/app/notes/xyz/history`);
    expect(bad.status).toBeGreaterThanOrEqual(400);
    expect(bad.body.error).toEqual(expect.any(String));
  });

  it('mkt notes log prints the versions as git log prints commits; --json the answer; a missing note exits 1', async () => {
    const log = await mkt(['log', commits[0]!], clone);
    expect(log.code, log.err).toBe(0);
    expect(log.out).toMatch(/^commit [0-9a-f]{40}\nAuthor: ana <ana@example.com>\nDate: {3}\S+\n\n {4}third\n\ncommit [0-9a-f]{40}\n.*\n.*\n\n {4}\(note removed\)\n\ncommit [0-9a-f]{40}\n.*\n.*\n\n {4}first\n$/);
    const json = await mkt(['log', 'HEAD~2', '--json', '--limit', '2'], clone);
    expect(json.code, json.err).toBe(0);
    expect(JSON.parse(json.out)).toMatchObject({ complete: false, data: [{ content: 'third\n' }, { content: null }] });
    const short = await mkt(['log', 'HEAD~2', '--limit', '1'], clone);
    expect(short.out).toMatch(/^commit [0-9a-f]{40}\n(.*\n){3} {4}third\n$/);
    expect(short.err).toMatch(/older versions may exist/);
    const missing = await mkt(['log', 'HEAD~1', '--namespace', 'nothing-here'], clone);
    expect(missing.code).toBe(1);
    expect((await mkt(['log', '--limit', 'x'], clone)).code).toBe(2);
  });

  it('mkt admin repo notes-merge stores the strategy; list_namespaces shows it; manual removes it', async () => {
    const admin = adminCli(work.path, s.dataDir, { databaseUrl: s.databaseUrl });
    const set = await admin(['repo', 'notes-merge', 'ana/app', '--strategy', 'cat_sort_uniq']);
    expect(set.code, set.err).toBe(0);
    expect(set.out).toBe('ana/app refs/notes/commits: pushes and racing writes merged with cat_sort_uniq\n');
    const list = await call('GET', '/api/git/ana/app/notes');
    expect(list.body.data).toEqual([expect.objectContaining({ name: 'commits', merge_strategy: 'cat_sort_uniq' })]);
    const json = await admin(['repo', 'notes-merge', 'ana/app', '--namespace', 'reviews', '--strategy', 'union', '--json']);
    expect(JSON.parse(json.out)).toEqual({ repository: 'ana/app', namespace: 'reviews', git_ref: 'refs/notes/reviews', merge_strategy: 'union' });
    expect((await admin(['repo', 'notes-merge', 'ana/app', '--strategy', 'manual'])).code).toBe(0);
    expect(((await call('GET', '/api/git/ana/app/notes')).body.data as { merge_strategy: string }[])[0]!.merge_strategy).toBe('manual');
    const missing = await admin(['repo', 'notes-merge', 'ana/nope', '--strategy', 'ours']);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/no repository ana\/nope/);
    const badNs = await admin(['repo', 'notes-merge', 'ana/app', '--namespace', 'a..b', '--strategy', 'ours']);
    expect(badNs.code).toBe(2);
  });

  it('attack: on a notes ref of 100,000 commits the history of the oldest note stops where the walk is bounded (complete false)', async () => {
    const dir = repoDir(s.dataDir, 'ana', 'app');
    const target = commits[1]!;
    const other = commits[2]!;
    const N = 100_000;
    const parts = [`commit refs/notes/long\nmark :1\ncommitter T <t@e> 1700000000 +0000\ndata 5\nfirst\nM 100644 inline ${target}\ndata 4\nold\n\n`];
    for (let i = 2; i <= N; i++) parts.push(`commit refs/notes/long\nmark :${i}\ncommitter T <t@e> ${1700000000 + i} +0000\ndata 2\nn\nfrom :${i - 1}\nM 100644 inline ${other}\ndata ${String(i).length + 1}\n${i}\n\n`);
    await fastImport(dir, parts.join(''));
    const h = await history(target, '?namespace=long');
    expect(h.status).toBe(200);
    // The walk stopped at its bound: an unbounded one would reach the first commit and its version "old".
    expect(h.body).toMatchObject({ data: [], complete: false });
    const recent = await history(other, '?namespace=long&limit=3');
    expect((recent.body.data as { content: string }[]).map((v) => v.content)).toEqual([`${N}\n`, `${N - 1}\n`, `${N - 2}\n`]);
  }, 300_000);
});
