// Issue 11 on the notes service, against a running marketplace and the system git: the note size
// limit on `git push`, hostile input answering 4xx (NUL in a commit message, notes commits dated
// outside what a date-time can say), anonymous git HTTP answering alike for private and missing
// repositories, and namespaces whose refs collide answering 422 at once.
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anaRepos, apiCall, startNotesServer, gitIn, gitUrl, localRepo, GIT_ENV, type NotesServer, type ApiCallOptions } from '../../helpers/notes-server.js';
import { tempDir } from '../../helpers/tmp.js';
import { captureLog } from '../../helpers/log-capture.js';
import { repoDir } from '../../../src/git/hosting.js';
import { MAX_NOTE_BYTES } from '../../../src/schemas/notes.js';
import { startService } from '../../../daemon/start.js';

let s: NotesServer;
let work: { path: string; remove(): void };
let commits: string[];
let clone: string;

/** git on a hosted repository, behind the server's back (touches only the disk). */
function hostedGit(repo: string, args: string[], input?: string): string {
  const [owner, name] = repo.split('/') as [string, string];
  return execFileSync('git', ['--git-dir', repoDir(s.dataDir, owner, name), ...args], { input, encoding: 'utf8', env: { ...process.env, ...GIT_ENV } }).trim();
}

const call = (method: string, path: string, opts?: ApiCallOptions): ReturnType<typeof apiCall> => apiCall(s.url, method, path, opts);

beforeAll(async () => {
  s = await startNotesServer();
  work = tempDir('mkt-notes-hard-');
  ({ commits, dir: clone } = await anaRepos(s, work.path, 4, { secretEmpty: true }));
});

afterAll(async () => {
  await s?.close();
  work?.remove();
});

describe('note size limit on git push (defect 7)', () => {
  it('refuses a pushed notes ref carrying a note over 1 MiB, git prints why, and the ref stays where it was', async () => {
    await gitIn(clone, ['notes', '--ref=size', 'add', '-m', 'small and fine', commits[0]!]);
    await gitIn(clone, ['push', '-q', gitUrl(s, 'ana/app', s.tokens.anaPush), 'refs/notes/size']);
    const before = hostedGit('ana/app', ['rev-parse', 'refs/notes/size']);
    const big = join(work.path, 'big.txt');
    writeFileSync(big, 'x'.repeat(MAX_NOTE_BYTES + 1));
    await gitIn(clone, ['notes', '--ref=size', 'add', '-F', big, commits[1]!]);
    await expect(gitIn(clone, ['push', gitUrl(s, 'ana/app', s.tokens.anaPush), 'refs/notes/size'])).rejects.toThrow(
      new RegExp(`refusing refs/notes/size: notes are limited to ${MAX_NOTE_BYTES} bytes[\\s\\S]*pre-receive hook declined`),
    );
    expect(hostedGit('ana/app', ['rev-parse', 'refs/notes/size'])).toBe(before);
    expect((await call('GET', `/api/git/ana/app/notes/${commits[1]!}?namespace=size`)).status).toBe(404);
    // A new notes ref is judged too, and a note of exactly the limit is accepted.
    await expect(gitIn(clone, ['push', gitUrl(s, 'ana/app', s.tokens.anaPush), 'refs/notes/size:refs/notes/other'])).rejects.toThrow(/refusing refs\/notes\/other/);
    expect(hostedGit('ana/app', ['for-each-ref', 'refs/notes/other'])).toBe('');
    // The refused commit stays in the local history (and would be pushed again): drop it.
    await gitIn(clone, ['update-ref', 'refs/notes/size', before]);
    writeFileSync(big, 'y'.repeat(MAX_NOTE_BYTES));
    const exact = await gitIn(clone, ['hash-object', '-w', big]);
    await gitIn(clone, ['notes', '--ref=size', 'add', '-f', '-C', exact, commits[1]!]);
    await gitIn(clone, ['push', '-q', gitUrl(s, 'ana/app', s.tokens.anaPush), 'refs/notes/size']);
    const got = await call('GET', `/api/git/ana/app/notes/${commits[1]!}?namespace=size`);
    expect(got.status).toBe(200);
    expect((got.body.content as string).length).toBe(MAX_NOTE_BYTES);
  });

  it('leaves branches alone: a file over 1 MiB on a branch is pushed', async () => {
    writeFileSync(join(clone, 'asset.bin'), 'z'.repeat(2 * MAX_NOTE_BYTES));
    await gitIn(clone, ['add', 'asset.bin']);
    await gitIn(clone, ['commit', '-q', '-m', 'a large asset']);
    await gitIn(clone, ['push', '-q', gitUrl(s, 'ana/app', s.tokens.anaPush), 'main']);
    expect(hostedGit('ana/app', ['rev-parse', 'refs/heads/main'])).toBe(await gitIn(clone, ['rev-parse', 'HEAD']));
  });

  it('a repository created before the hook existed gets it at start', async () => {
    await s.admin.createRepo('ana/old', { private: false, objectFormat: 'sha1' });
    const hook = join(repoDir(s.dataDir, 'ana', 'old'), 'hooks', 'pre-receive');
    expect(existsSync(hook)).toBe(true);
    rmSync(hook);
    const { logger } = captureLog('debug');
    const second = await startService('marketplace', { host: '127.0.0.1', port: 0, dataDir: s.dataDir, options: s.databaseUrl ? { databaseUrl: s.databaseUrl } : {}, env: {}, logger, out: { write: () => true } as unknown as NodeJS.WritableStream });
    try {
      expect(existsSync(hook)).toBe(true);
      const local = await localRepo(work.path, 'old', 1);
      writeFileSync(join(work.path, 'big2.txt'), 'x'.repeat(MAX_NOTE_BYTES + 10));
      await gitIn(local.dir, ['notes', 'add', '-F', join(work.path, 'big2.txt'), local.commits[0]!]);
      const url = new URL(`${second.url}/ana/old.git`);
      url.username = 'x';
      url.password = s.tokens.anaPush;
      await expect(gitIn(local.dir, ['push', url.toString(), 'main', 'refs/notes/commits'])).rejects.toThrow(/refusing refs\/notes\/commits/);
      expect(hostedGit('ana/old', ['for-each-ref', 'refs/notes/'])).toBe('');
    } finally {
      await second.close();
    }
  });
});

describe('hostile input answers 4xx, never 5xx (defect 8)', () => {
  it('a NUL in the commit message is a 422 and writes nothing', async () => {
    const c = commits[2]!;
    const before = hostedGit('ana/app', ['for-each-ref', '--format=%(objectname)', 'refs/notes/commits']);
    const r = await call('PUT', `/api/git/ana/app/notes/${c}`, { token: s.tokens.anaPush, body: { content: 'fine', message: 'line one\u0000line two' } });
    expect(r.status).toBe(422);
    expect(r.body.error).toMatch(/NUL/);
    expect(hostedGit('ana/app', ['for-each-ref', '--format=%(objectname)', 'refs/notes/commits'])).toBe(before);
    expect((await call('GET', `/api/git/ana/app/notes/${c}`)).status).toBe(404);
  });

  it('attribution of notes commits dated past year 9999, before year 0 or unreadably answers 200 with a clamped date-time', async () => {
    const c = commits[3]!;
    const cases: [string, string][] = [
      ['99999999999999', '9999-12-31T23:59:59.000Z'], // year 3170843: a JS Date cannot print it
      ['999999999999999999999999', '9999-12-31T23:59:59.000Z'], // past what a JS Date holds
      ['253402300799', '9999-12-31T23:59:59.000Z'], // the last second RFC 3339 can write
      ['-99999999999999', '(before year 0)'],
      ['garbage', '1970-01-01T00:00:00.000Z'], // git reads an unparseable date as the epoch
    ];
    for (const [i, [when, expected]] of cases.entries()) {
      const ns = `dates/${i}`;
      // A notes commit written behind the server's back, with exactly this author date.
      const blob = hostedGit('ana/app', ['hash-object', '-w', '--stdin'], `dated ${when}\n`);
      const tree = hostedGit('ana/app', ['mktree'], `100644 blob ${blob}\t${c}\n`);
      const body = `tree ${tree}\nauthor Zed <zed@example.com> ${when} +0000\ncommitter Zed <zed@example.com> 1700000000 +0000\n\nnotes\n`;
      const commit = hostedGit('ana/app', ['hash-object', '-t', 'commit', '--literally', '-w', '--stdin'], body);
      hostedGit('ana/app', ['update-ref', `refs/notes/${ns}`, commit]);
      const r = await call('GET', `/api/git/ana/app/notes/${c}?namespace=${encodeURIComponent(ns)}&attribution=true`);
      expect(r.status, when).toBe(200);
      // Git 2.39 cannot read a negative date (the epoch); later versions can (clamped to year 0).
      const at = expected === '(before year 0)' ? expect.stringMatching(/^(0000-01-01T00:00:00|1970-01-01T00:00:00)\.000Z$/) : expected;
      expect(r.body.attribution, when).toMatchObject({ commit, name: 'Zed', email: 'zed@example.com', at, exact: true });
    }
  });

  it('NUL, control characters, huge strings and `..` in every part of every notes route answer 4xx with an error body', async () => {
    const c = commits[0]!;
    const huge = 'a'.repeat(1024 * 1024);
    const bad = ['%00', 'a%00b', '%01%1f%7f', '..', '..%2F..', '%2e%2e', 'a%0Ab', '%C0%AE', '%FF', huge.slice(0, 20_000)];
    const paths: string[] = [];
    for (const x of bad) {
      paths.push(`/api/git/${x}/app/notes`, `/api/git/ana/${x}/notes`, `/api/git/ana/app/notes/${x}`);
      paths.push(`/api/git/ana/app/notes/${c}?namespace=${x}`, `/api/git/ana/app/notes/search?q=${x}`, `/api/git/ana/app/notes/search?q=ok&namespace=${x}`);
      paths.push(`/${x}/app.git/info/refs?service=git-upload-pack`, `/ana/${x}.git/info/refs?service=git-upload-pack`);
    }
    for (const path of paths) {
      const res = await fetch(`${s.url}${path}`, { headers: { authorization: `Bearer ${s.tokens.anaPush}` } });
      const text = await res.text();
      expect(res.status, path.slice(0, 200)).toBeLessThan(500);
      if (res.status >= 400) expect(typeof (JSON.parse(text) as { error?: unknown }).error, path.slice(0, 200)).toBe('string');
    }
    const writes: { path: string; body: unknown }[] = [
      { path: `/api/git/ana/app/notes/${c}?namespace=%00`, body: { content: 'x' } },
      { path: `/api/git/ana/app/notes/${c}`, body: { content: 'x', namespace: 'a\u0000b' } },
      { path: `/api/git/ana/app/notes/${c}`, body: { content: 'x', namespace: huge } },
      { path: `/api/git/ana/app/notes/${c}`, body: { content: 'x', namespace: '../../heads/main' } },
      { path: `/api/git/ana/app/notes/${c}`, body: { content: 'x', message: huge } },
      { path: `/api/git/ana/app/notes/${c}`, body: { content: huge + huge } },
      { path: '/api/git/ana/app/notes/%00', body: { content: 'x' } },
    ];
    for (const w of writes) {
      const r = await call('PUT', w.path, { token: s.tokens.anaPush, body: w.body });
      expect(r.status, w.path).toBeGreaterThanOrEqual(400);
      expect(r.status, w.path).toBeLessThan(500);
      expect(typeof r.body.error).toBe('string');
    }
    expect(hostedGit('ana/app', ['rev-parse', 'refs/heads/main'])).toBe(await gitIn(clone, ['rev-parse', 'HEAD']));
  });

  it('a git POST whose body is not git\'s request type answers 415 (it used to hang unanswered)', async () => {
    const auth = { authorization: `Basic ${Buffer.from(`x:${s.tokens.anaPush}`).toString('base64')}` };
    for (const service of ['git-upload-pack', 'git-receive-pack']) {
      for (const [type, body] of [['application/json', '{"a":1}'], ['text/plain', 'hello'], ['application/x-git-upload-pack-result', '0000']]) {
        if (service === 'git-receive-pack' && type === 'application/x-git-upload-pack-result') continue;
        // The abort only turns a hang into a failure; nothing here measures time.
        const res = await fetch(`${s.url}/ana/app.git/${service}`, { method: 'POST', headers: { ...auth, 'content-type': type }, body, signal: AbortSignal.timeout(15_000) });
        expect(res.status, `${service} ${type}`).toBe(415);
        expect((await res.json()) as unknown).toEqual({ error: `${service} takes a body of type application/x-${service}-request` });
      }
    }
    expect(hostedGit('ana/app', ['rev-parse', 'refs/heads/main'])).toBe(await gitIn(clone, ['rev-parse', 'HEAD']));
  });

  it('content holding NUL, control characters or a lone surrogate is stored and read back as git holds it', async () => {
    const c = commits[1]!;
    for (const [content, stored] of [
      ['before\u0000after\u0001\u001f\u007f', 'before\u0000after\u0001\u001f\u007f'],
      ['lone \ud800 surrogate', 'lone \ufffd surrogate'], // UTF-8 has no lone surrogates: U+FFFD, as Node encodes it
    ]) {
      const put = await call('PUT', `/api/git/ana/app/notes/${c}?namespace=bytes`, { token: s.tokens.anaPush, body: { content } });
      expect(put.status).toBe(200);
      const got = await call('GET', `/api/git/ana/app/notes/${c}?namespace=bytes`);
      expect(got.body.content).toBe(stored);
      expect(hostedGit('ana/app', ['cat-file', 'blob', put.body.blob as string])).toBe(stored.trim());
      expect((await call('GET', '/api/git/ana/app/notes/search?q=after', {})).status).toBe(200);
    }
  });
});

describe('anonymous git HTTP answers alike for private and missing repositories (defect 9)', () => {
  it('401 with the Basic challenge for both; an authenticated stranger gets 404 for both; the owner still clones', async () => {
    const anonymous: { status: number; challenge: string | null; body: string }[] = [];
    for (const repo of ['ana/secret', 'ana/never-created', 'nobody/nothing']) {
      for (const path of ['info/refs?service=git-upload-pack', 'info/refs?service=git-receive-pack']) {
        const res = await fetch(`${s.url}/${repo}.git/${path}`);
        anonymous.push({ status: res.status, challenge: res.headers.get('www-authenticate'), body: await res.text() });
      }
      const post = await fetch(`${s.url}/${repo}.git/git-upload-pack`, { method: 'POST', headers: { 'content-type': 'application/x-git-upload-pack-request' }, body: '0000' });
      anonymous.push({ status: post.status, challenge: post.headers.get('www-authenticate'), body: await post.text() });
    }
    for (const a of anonymous) {
      expect(a).toMatchObject({ status: 401, challenge: expect.stringMatching(/^Basic realm="mkt"/) });
      expect(a.body).toBe(anonymous[0]!.body);
    }
    const stranger = { authorization: `Basic ${Buffer.from(`bo:${s.tokens.boRead}`).toString('base64')}` };
    for (const repo of ['ana/secret', 'ana/never-created']) {
      expect((await fetch(`${s.url}/${repo}.git/info/refs?service=git-upload-pack`, { headers: stranger })).status).toBe(404);
    }
    // Stock git: asks for credentials for both (and, with prompts off, fails the same way); the owner clones.
    await expect(gitIn(work.path, ['ls-remote', gitUrl(s, 'ana/never-created')])).rejects.toThrow(/could not read Username/);
    await expect(gitIn(work.path, ['ls-remote', gitUrl(s, 'ana/secret')])).rejects.toThrow(/could not read Username/);
    await gitIn(clone, ['push', '-q', gitUrl(s, 'ana/secret', s.tokens.anaPush), 'main']);
    const fresh = tempDir('mkt-notes-hard-clone-');
    try {
      await gitIn(fresh.path, ['clone', '-q', gitUrl(s, 'ana/secret', s.tokens.anaRead), 'c']);
      expect(await gitIn(join(fresh.path, 'c'), ['rev-parse', 'origin/main'])).toBe(await gitIn(clone, ['rev-parse', 'HEAD']));
    } finally {
      fresh.remove();
    }
  });
});

describe('namespaces whose refs collide (defect 11)', () => {
  it('`commits/x` beside `commits`, and `team` beside `team/a`, answer 422 at once saying why; nothing is written', async () => {
    const c = commits[0]!;
    expect((await call('PUT', `/api/git/ana/app/notes/${c}`, { token: s.tokens.anaPush, body: { content: 'on commits' } })).status).toBe(200);
    const below = await call('PUT', `/api/git/ana/app/notes/${c}?namespace=commits/x`, { token: s.tokens.anaPush, body: { content: 'below' } });
    expect(below.status).toBe(422);
    expect(below.body.error).toMatch(/"commits\/x" cannot be created beside the existing namespace "commits"/);
    expect((await call('PUT', `/api/git/ana/app/notes/${c}?namespace=team/a`, { token: s.tokens.anaPush, body: { content: 'team a' } })).status).toBe(200);
    const above = await call('PUT', `/api/git/ana/app/notes/${c}?namespace=team`, { token: s.tokens.anaPush, body: { content: 'above' } });
    expect(above.status).toBe(422);
    expect(above.body.error).toMatch(/"team" cannot be created beside the existing namespace "team\/a"/);
    expect(hostedGit('ana/app', ['for-each-ref', '--format=%(refname)', 'refs/notes/commits/', 'refs/notes/team'])).toBe('refs/notes/team/a');
    // Deleting from a namespace that cannot exist removes nothing and says so the usual way.
    expect((await call('DELETE', `/api/git/ana/app/notes/${c}?namespace=commits/x`, { token: s.tokens.anaPush })).status).toBe(204);
    expect((await call('GET', `/api/git/ana/app/notes/${c}`)).body.content).toBe('on commits');
  });
});
