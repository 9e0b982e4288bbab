// Issue 28, finding 5, against a running marketplace and the system git: a notes ref that is not a
// commit of a notes tree (a blob, a tree, a tag, a commit of files, of non-hex names, of a fan-out
// deeper than an object id) is refused at push time with a message saying why, and one written
// into the bare repository behind the server's back is skipped and logged once by the indexer, so
// list, search and put_note keep answering 200 for the good refs (they answered 500 for everyone).
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCall, startNotesServer, gitIn, gitUrl, localRepo, GIT_ENV, type NotesServer, type ApiCallOptions } from '../../helpers/notes-server.js';
import { tempDir } from '../../helpers/tmp.js';
import { repoDir } from '../../../src/git/hosting.js';

let s: NotesServer;
let work: { path: string; remove(): void };
let commits: string[];
let clone: string;
let push: string;

/** git on a hosted repository, behind the server's back (touches only the disk). */
function hostedGit(args: string[], input?: string): string {
  return execFileSync('git', ['--git-dir', repoDir(s.dataDir, 'ana', 'app'), ...args], { input, encoding: 'utf8', env: { ...process.env, ...GIT_ENV } }).trim();
}

const call = (method: string, path: string, opts?: ApiCallOptions): ReturnType<typeof apiCall> => apiCall(s.url, method, path, opts);

/** Objects made in the local clone: a blob, a tree of these `mktree` lines, a commit of a tree. */
const blob = (text: string) => gitIn(clone, ['hash-object', '-w', '--stdin'], text);
const tree = (lines: string[]) => gitIn(clone, ['mktree', '--missing'], lines.map((l) => `${l}\n`).join(''));
const commitOf = (t: string, parent?: string) => gitIn(clone, ['commit-tree', t, ...(parent ? ['-p', parent] : []), '-m', 'notes']);

/** Every API answer the issue saw turn 500: list, search, and put_note and get_note on a good namespace. */
async function apiStillAnswers(note: string): Promise<void> {
  const list = await call('GET', '/api/git/ana/app/notes');
  expect(list.status, JSON.stringify(list.body)).toBe(200);
  const search = await call('GET', '/api/git/ana/app/notes/search?q=fine');
  expect(search.status, JSON.stringify(search.body)).toBe(200);
  const put = await call('PUT', `/api/git/ana/app/notes/${commits[0]!}`, { token: s.tokens.anaPush, body: { content: note } });
  expect(put.status, JSON.stringify(put.body)).toBe(200);
  const got = await call('GET', `/api/git/ana/app/notes/${commits[0]!}`);
  expect(got.body.content).toBe(note);
}

beforeAll(async () => {
  s = await startNotesServer();
  work = tempDir('mkt-notes-hostile-');
  await s.admin.createRepo('ana/app', { private: false, objectFormat: 'sha1' });
  const local = await localRepo(work.path, 'app', 3);
  commits = local.commits;
  clone = local.dir;
  push = gitUrl(s, 'ana/app', s.tokens.anaPush);
  await gitIn(clone, ['push', '-q', push, 'main']);
  await gitIn(clone, ['notes', 'add', '-m', 'fine note one', commits[1]!]);
  await gitIn(clone, ['push', '-q', push, 'refs/notes/commits']);
});

afterAll(async () => {
  await s?.close();
  work?.remove();
});

describe('a push to refs/notes/* must be a commit of a notes tree (issue 28, finding 5)', () => {
  it('refuses a blob, a tree, a tag and commits of trees that are not notes trees, saying why; no ref moves and the API keeps answering', async () => {
    const c = commits[2]!;
    const note = await blob('fine note two\n');
    const notesTip = await gitIn(clone, ['rev-parse', 'refs/notes/commits']);
    // Twenty two-digit levels: a path of 42 hex digits, longer than any object id.
    let deep = await tree([`100644 blob ${note}\tee`]);
    for (let i = 19; i >= 0; i--) deep = await tree([`040000 tree ${deep}\t${c.slice(2 * i, 2 * i + 2)}`]);
    await gitIn(clone, ['tag', '-a', '-m', 'a tag', 'notes-tag', notesTip]);
    const hostile: [string, string, RegExp][] = [
      ['evblob', note, /is a blob, not a commit/],
      ['evtree', await tree([`100644 blob ${note}\t${c}`]), /is a tree, not a commit/],
      ['evtag', await gitIn(clone, ['rev-parse', 'notes-tag']), /is a tag, not a commit/],
      ['evfiles', await commitOf(await tree([`100644 blob ${note}\tREADME`])), /README/],
      ['evupper', await commitOf(await tree([`100644 blob ${note}\t${c.toUpperCase()}`])), new RegExp(c.toUpperCase())],
      ['evshort', await commitOf(await tree([`100644 blob ${note}\t${c.slice(0, 39)}`])), new RegExp(c.slice(0, 39))],
      ['evdeep', await commitOf(deep), /ee/],
      ['evdir', await commitOf(await tree([`040000 tree ${await tree([`100644 blob ${note}\t${c.slice(3)}`])}\t${c.slice(0, 3)}`])), new RegExp(c.slice(0, 3))],
      ['evlink', await commitOf(await tree([`120000 blob ${note}\t${c}`])), /mode 120000/],
      ['evgitlink', await commitOf(await tree([`160000 commit ${c}\t${c}`])), /mode 160000/],
      // A good history with a file added on top: judged by what the push adds to the old tip.
      ['commits', await commitOf(await tree([`100644 blob ${note}\tREADME`, `100644 blob ${note}\t${commits[1]!}`]), notesTip), /README/],
    ];
    for (const [ns, oid, why] of hostile) {
      const err = await gitIn(clone, ['push', push, `${oid}:refs/notes/${ns}`]).then(
        () => undefined,
        (e: Error) => e.message,
      );
      expect(err, ns).toMatch(new RegExp(`mkt: refusing refs/notes/${ns}: `));
      expect(err, ns).toMatch(why);
      expect(err, ns).toMatch(/pre-receive hook declined/);
    }
    expect(hostedGit(['for-each-ref', '--format=%(refname) %(objectname)', 'refs/notes/'])).toBe(`refs/notes/commits ${notesTip}`);
    await apiStillAnswers('written after the refused pushes');
  });

  it('accepts notes at any two-digit fan-out, notes added on top of a good tip, and deleting a notes ref', async () => {
    const [a, b] = [commits[0]!, commits[2]!];
    const note = await blob('fine fanned out\n');
    const fanned = await tree([`040000 tree ${await tree([`040000 tree ${await tree([`100644 blob ${note}\t${a.slice(4)}`])}\t${a.slice(2, 4)}`])}\t${a.slice(0, 2)}`, `100644 blob ${note}\t${b}`]);
    const first = await commitOf(fanned);
    await gitIn(clone, ['push', '-q', push, `${first}:refs/notes/fanned`]);
    expect((await call('GET', `/api/git/ana/app/notes/${a}?namespace=fanned`)).body.content).toBe('fine fanned out\n');
    const second = await commitOf(await tree([`100644 blob ${await blob('fine again\n')}\t${a}`, `100644 blob ${note}\t${b}`]), first);
    await gitIn(clone, ['push', '-q', push, `${second}:refs/notes/fanned`]);
    expect((await call('GET', `/api/git/ana/app/notes/${a}?namespace=fanned`)).body.content).toBe('fine again\n');
    await gitIn(clone, ['push', '-q', push, ':refs/notes/fanned']);
    expect(hostedGit(['for-each-ref', 'refs/notes/fanned'])).toBe('');
    expect((await call('GET', `/api/git/ana/app/notes/${a}?namespace=fanned`)).status).toBe(404);
  });
});

describe('a bad notes ref written behind the server\'s back is skipped and logged once (issue 28, finding 5)', () => {
  it('list, search and put_note answer 200 for the good refs; the bad namespace reads 404 and writes 422; one warning per bad tip', async () => {
    const c = commits[2]!;
    const b = hostedGit(['hash-object', '-w', '--stdin'], 'fine but not a notes commit\n');
    const t = hostedGit(['mktree'], `100644 blob ${b}\t${c}\n`);
    const tag = hostedGit(['mktag'], `object ${hostedGit(['rev-parse', 'refs/notes/commits'])}\ntype commit\ntag t\ntagger T <t@example.com> 1700000000 +0000\n\na tag\n`);
    // A commit whose tree the repository lacks: git reads the commit, not its notes.
    const missingTree = 'f'.repeat(40);
    const orphan = hostedGit(['hash-object', '-t', 'commit', '--literally', '-w', '--stdin'], `tree ${missingTree}\nauthor T <t@example.com> 1700000000 +0000\ncommitter T <t@example.com> 1700000000 +0000\n\nnotes\n`);
    const bad = { 'bad/blob': b, 'bad/tree': t, 'bad/tag': tag, 'bad/orphan': orphan };
    for (const [ns, oid] of Object.entries(bad)) hostedGit(['update-ref', `refs/notes/${ns}`, oid]);
    // A namespace the index knew, moved to a blob: it leaves the list instead of breaking it.
    expect((await call('PUT', `/api/git/ana/app/notes/${c}?namespace=was-good`, { token: s.tokens.anaPush, body: { content: 'fine, for now' } })).status).toBe(200);
    hostedGit(['update-ref', 'refs/notes/was-good', b]);

    for (let i = 0; i < 3; i++) await apiStillAnswers(`fine write ${i}`);
    const list = await call('GET', '/api/git/ana/app/notes');
    const names = (list.body.data as { name: string }[]).map((d) => d.name);
    expect(names).toContain('commits');
    for (const ns of [...Object.keys(bad), 'was-good']) {
      expect(names).not.toContain(ns);
      expect((await call('GET', `/api/git/ana/app/notes/${c}?namespace=${ns}`)).status, ns).toBe(404);
      const put = await call('PUT', `/api/git/ana/app/notes/${c}?namespace=${ns}`, { token: s.tokens.anaPush, body: { content: 'over a bad ref' } });
      expect(put.status, ns).toBe(422);
      expect(put.body.error, ns).toMatch(new RegExp(`refs/notes/${ns} .*not a notes commit`));
    }
    // Nothing was written over the bad refs.
    for (const [ns, oid] of Object.entries(bad)) expect(hostedGit(['rev-parse', `refs/notes/${ns}`])).toBe(oid);

    const warnings = s
      .log()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { level: number; ref?: string; msg: string })
      .filter((r) => r.level === 40 && r.ref?.startsWith('refs/notes/'));
    for (const ns of [...Object.keys(bad), 'was-good']) expect(warnings.filter((w) => w.ref === `refs/notes/${ns}`).length, ns).toBe(1);

    // Pointed back at a notes commit, the namespace is read again.
    const good = hostedGit(['commit-tree', t, '-m', 'notes']);
    hostedGit(['update-ref', 'refs/notes/bad/blob', good]);
    const back = await call('GET', `/api/git/ana/app/notes/${c}?namespace=bad/blob`);
    expect(back.status).toBe(200);
    expect(back.body.content).toBe('fine but not a notes commit\n');
  });
});
