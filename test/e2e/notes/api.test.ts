// The git-notes API against a running marketplace and the system git: every status code of the
// spec, notes interoperating with stock git over smart HTTP (both directions), SHA-256
// repositories, attribution, concurrent writers, and private repositories staying invisible.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anaRepos, apiCall, startNotesServer, gitIn, gitUrl, localRepo, type NotesServer, type ApiCallOptions } from '../../helpers/notes-server.js';
import { tempDir } from '../../helpers/tmp.js';

let s: NotesServer;
let work: { path: string; remove(): void };
let commits: string[];

const call = (method: string, path: string, opts?: ApiCallOptions): ReturnType<typeof apiCall> => apiCall(s.url, method, path, opts);

beforeAll(async () => {
  s = await startNotesServer();
  work = tempDir('mkt-notes-work-');
  ({ commits } = await anaRepos(s, work.path, 3));
});

afterAll(async () => {
  await s?.close();
  work?.remove();
});

describe('notes API', () => {
  it('writes, reads, lists and deletes a note; the write is a notes commit by the token user', async () => {
    const c = commits[0]!;
    const put = await call('PUT', `/api/git/ana/app/notes/${c}`, { token: s.tokens.anaPush, body: { content: 'Reviewed: looks good\n' } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ target: c, namespace: 'commits', git_ref: 'refs/notes/commits', action: 'added' });
    const got = await call('GET', `/api/git/ana/app/notes/${c}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ target: c, object_type: 'commit', content: 'Reviewed: looks good\n', blob: put.body.blob });
    const again = await call('PUT', `/api/git/ana/app/notes/${c}`, { token: s.tokens.anaPush, body: { content: 'Reviewed: looks good\n' } });
    expect(again.body.action).toBe('unchanged');
    const ns = await call('GET', '/api/git/ana/app/notes');
    expect(ns.body.data).toEqual([{ name: 'commits', git_ref: 'refs/notes/commits', tip: put.body.commit, notes: 1, merge_strategy: 'manual' }]);
    const attributed = await call('GET', `/api/git/ana/app/notes/${c}?attribution=true`);
    expect(attributed.body.attribution).toMatchObject({ commit: put.body.commit, name: 'ana', email: 'ana@example.com', exact: true });
    const del = await call('DELETE', `/api/git/ana/app/notes/${c}`, { token: s.tokens.anaPush });
    expect(del.status).toBe(204);
    expect((await call('GET', `/api/git/ana/app/notes/${c}`)).status).toBe(404);
    expect((await call('DELETE', `/api/git/ana/app/notes/${c}`, { token: s.tokens.anaPush })).status).toBe(204);
  });

  it('answers every status of the spec with an error body', async () => {
    const c = commits[1]!;
    const path = `/api/git/ana/app/notes/${c}`;
    // 401: no credential, and a wrong one.
    expect((await call('PUT', path, { body: { content: 'x' } })).status).toBe(401);
    expect((await call('DELETE', path)).status).toBe(401);
    expect((await call('PUT', path, { token: 'mkt_wrong', body: { content: 'x' } })).status).toBe(401);
    // 403: session cookie, read-only token, account that cannot push.
    expect((await call('PUT', path, { cookie: `mkt_session=${s.anaSession}`, body: { content: 'x' } })).status).toBe(403);
    expect((await call('PUT', path, { token: s.tokens.anaRead, body: { content: 'x' } })).status).toBe(403);
    const bo = await call('PUT', path, { token: s.tokens.boPush, body: { content: 'x' } });
    expect(bo.status).toBe(403);
    expect(bo.body.error).toMatch(/bo cannot push/);
    expect((await call('DELETE', path, { token: s.tokens.boPush })).status).toBe(403);
    // 404: repository, commit, namespace, note.
    expect((await call('PUT', `/api/git/ana/nope/notes/${c}`, { token: s.tokens.anaPush, body: { content: 'x' } })).status).toBe(404);
    expect((await call('PUT', `/api/git/ana/app/notes/${'e'.repeat(40)}`, { token: s.tokens.anaPush, body: { content: 'x' } })).status).toBe(404);
    expect((await call('DELETE', `/api/git/ana/app/notes/${'e'.repeat(40)}`, { token: s.tokens.anaPush })).status).toBe(404);
    expect((await call('GET', '/api/git/ana/nope/notes')).status).toBe(404);
    expect((await call('GET', '/api/git/ana/nope/notes/search?q=x')).status).toBe(404);
    expect((await call('GET', `${path}?namespace=never-written`)).status).toBe(404);
    // 422: reserved namespace, empty, oversized.
    const reserved = await call('PUT', `${path}?namespace=mkt/internal`, { token: s.tokens.anaPush, body: { content: 'x' } });
    expect(reserved.status).toBe(422);
    expect(reserved.body.error).toMatch(/reserved/);
    expect((await call('PUT', path, { token: s.tokens.anaPush, body: { content: '' } })).status).toBe(422);
    expect((await call('PUT', path, { token: s.tokens.anaPush, body: { content: 'x'.repeat(1024 * 1024 + 1) } })).status).toBe(422);
    expect((await call('PUT', path, { token: s.tokens.anaPush, body: { content: 'x', namespace: 'bad..name' } })).status).toBe(422);
    // 400: malformed target or body.
    expect((await call('GET', '/api/git/ana/app/notes/abc123')).status).toBe(400);
    const noBody = await call('PUT', path, { token: s.tokens.anaPush, body: { text: 'x' } });
    expect(noBody.status).toBe(400);
    expect(typeof noBody.body.error).toBe('string');
    // A push grant makes bo able to write; `token` scheme accepted too.
    await s.admin.grant('ana/app', 'bo', 'push');
    expect((await call('PUT', `${path}?namespace=reviews/bo`, { auth: `token ${s.tokens.boPush}`, body: { content: 'bo was here' } })).status).toBe(200);
    expect((await call('GET', `${path}?namespace=reviews/bo`)).body.content).toBe('bo was here');
  });

  it('keeps private repositories invisible (404) on every route, including git HTTP', async () => {
    const c = commits[0]!;
    for (const who of [{}, { token: s.tokens.boRead }, { token: s.tokens.boPush }]) {
      expect((await call('GET', '/api/git/ana/secret/notes', who)).status).toBe(404);
      expect((await call('GET', '/api/git/ana/secret/notes/search?q=x', who)).status).toBe(404);
      expect((await call('GET', `/api/git/ana/secret/notes/${c}`, who)).status).toBe(404);
    }
    expect((await call('PUT', `/api/git/ana/secret/notes/${c}`, { token: s.tokens.boPush, body: { content: 'x' } })).status).toBe(404);
    expect((await call('DELETE', `/api/git/ana/secret/notes/${c}`, { token: s.tokens.boPush })).status).toBe(404);
    // git: anonymous gets the 401 challenge, an authenticated stranger 404.
    const anon = await fetch(`${s.url}/ana/secret.git/info/refs?service=git-upload-pack`);
    expect(anon.status).toBe(401);
    expect(anon.headers.get('www-authenticate')).toMatch(/^Basic/);
    const stranger = await fetch(`${s.url}/ana/secret.git/info/refs?service=git-upload-pack`, { headers: { authorization: `Basic ${Buffer.from(`bo:${s.tokens.boRead}`).toString('base64')}` } });
    expect(stranger.status).toBe(404);
    await expect(gitIn(work.path, ['ls-remote', gitUrl(s, 'ana/secret', s.tokens.boRead)])).rejects.toThrow();
    expect(await gitIn(work.path, ['ls-remote', gitUrl(s, 'ana/secret', s.tokens.anaRead)])).toContain('refs/heads/main');
    // The owner's session cookie reads the private repository.
    expect((await call('GET', '/api/git/ana/secret/notes', { cookie: `mkt_session=${s.anaSession}` })).status).toBe(200);
    // A read grant makes it visible to bo.
    await s.admin.grant('ana/secret', 'bo', 'read');
    expect((await call('GET', '/api/git/ana/secret/notes', { token: s.tokens.boRead })).status).toBe(200);
  });

  it('notes written by the API are fetched and shown by stock git; notes pushed by git are served and searched', async () => {
    const c = commits[2]!;
    await call('PUT', `/api/git/ana/app/notes/${c}`, { token: s.tokens.anaPush, body: { content: 'Deployed to production by the release train\n' } });
    const fresh = tempDir('mkt-notes-clone-');
    try {
      await gitIn(fresh.path, ['clone', '-q', gitUrl(s, 'ana/app'), 'c']);
      const dir = `${fresh.path}/c`;
      await gitIn(dir, ['fetch', '-q', 'origin', 'refs/notes/*:refs/notes/*']);
      expect(await gitIn(dir, ['notes', 'show', c])).toBe('Deployed to production by the release train');
      // Now the other way: git notes add + push; the API serves it and search finds it.
      await gitIn(dir, ['notes', 'add', '-m', 'Flaky test quarantined in zebra suite', commits[0]!]);
      await gitIn(dir, ['push', '-q', gitUrl(s, 'ana/app', s.tokens.anaPush), 'refs/notes/commits']);
      const got = await call('GET', `/api/git/ana/app/notes/${commits[0]!}`);
      expect(got.body.content).toBe('Flaky test quarantined in zebra suite\n');
      const hit = await call('GET', '/api/git/ana/app/notes/search?q=zebra');
      expect(hit.body).toMatchObject({ indexed: true, total: 1 });
      expect((hit.body.data as { target: string; snippet: string }[])[0]).toMatchObject({ target: commits[0], snippet: expect.stringContaining('[zebra]') });
      const attr = await call('GET', `/api/git/ana/app/notes/${commits[0]!}?attribution=true`);
      expect(attr.body.attribution).toMatchObject({ name: 'T', email: 't@example.com', exact: true });
      // Pushing without push rights is refused.
      await gitIn(dir, ['notes', 'add', '-f', '-m', 'sneaky', commits[1]!]);
      await expect(gitIn(dir, ['push', '-q', gitUrl(s, 'ana/app', s.tokens.anaRead), 'refs/notes/commits'])).rejects.toThrow();
    } finally {
      fresh.remove();
    }
  });

  it('serves SHA-256 repositories', async () => {
    await s.admin.createRepo('ana/modern', { private: false, objectFormat: 'sha256' });
    const local = await localRepo(work.path, 'modern', 2, 'sha256');
    await gitIn(local.dir, ['push', '-q', gitUrl(s, 'ana/modern', s.tokens.anaPush), 'main']);
    const c = local.commits[1]!;
    expect(c).toHaveLength(64);
    const put = await call('PUT', `/api/git/ana/modern/notes/${c}`, { token: s.tokens.anaPush, body: { content: 'sha256 note' } });
    expect(put.status).toBe(200);
    expect(put.body.commit).toHaveLength(64);
    expect((await call('GET', `/api/git/ana/modern/notes/${c}`)).body.content).toBe('sha256 note');
    expect((await call('GET', `/api/git/ana/modern/notes/${commits[0]!}`)).status).toBe(404);
    await gitIn(local.dir, ['fetch', '-q', gitUrl(s, 'ana/modern'), 'refs/notes/commits:refs/notes/commits']);
    expect(await gitIn(local.dir, ['notes', 'show', c])).toBe('sha256 note');
  });

  it('loses no acknowledged write among concurrent writers to one namespace', async () => {
    await s.admin.createRepo('ana/busy', { private: false, objectFormat: 'sha1' });
    const local = await localRepo(work.path, 'busy', 20);
    await gitIn(local.dir, ['push', '-q', gitUrl(s, 'ana/busy', s.tokens.anaPush), 'main']);
    const results = await Promise.all(
      local.commits.map((c, i) => call('PUT', `/api/git/ana/busy/notes/${c}?namespace=ci`, { token: s.tokens.anaPush, body: { content: `build ${i} passed` } })),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    const dir = local.dir;
    await gitIn(dir, ['fetch', '-q', gitUrl(s, 'ana/busy'), 'refs/notes/ci:refs/notes/ci']);
    for (const [i, c] of local.commits.entries()) expect(await gitIn(dir, ['notes', '--ref=ci', 'show', c])).toBe(`build ${i} passed`);
    const ns = await call('GET', '/api/git/ana/busy/notes');
    expect(ns.body.data).toEqual([expect.objectContaining({ name: 'ci', notes: 20 })]);
  });
});
