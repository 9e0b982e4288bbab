// get_note taken before fastify (daemon/services/marketplace/notes/get-lane.ts), on a real
// marketplace listening on 127.0.0.1 with real hosted repositories: each read sent over HTTP,
// where the lane can take it, and the same read through inject(), which never reaches a lane (the
// route answers it). Both must be the same status, headers, bytes and request line; a spy on the
// server's DirectRoutes tells whether the lane answered. Reads the lane must leave to the route
// (a credential, another query, another spelling of the id) are answered by fastify, as before.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { anaRepos, apiCall, startNotesServer, type NotesServer } from '../../../helpers/notes-server.js';
import { lastReqId, linesOf, whoAnswers } from '../../../helpers/lane-spy.js';
import { tempDir } from '../../../helpers/tmp.js';
import { noteGetParts } from '../../../../daemon/services/marketplace/notes/get-lane.js';
import { NotesApi } from '../../../../daemon/services/marketplace/notes/notes.js';
import { SqlRepoStore } from '../../../../src/store/repos-sql.js';

let s: NotesServer;
let work: { path: string; remove(): void };
let commits: string[];

interface Answer {
  status: number;
  headers: Record<string, string | undefined>;
  body: string;
}

/** The headers a route's answer carries, without those of the connection or the clock. */
function kept(h: Record<string, unknown>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const k of Object.keys(h).sort()) if (!['date', 'connection', 'keep-alive'].includes(k)) out[k] = String(h[k]);
  return out;
}

function overHttp(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${s.url}${path}`, { method, headers, agent: false }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, headers: kept(res.headers), body: text }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function injected(path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await s.app.inject({ method: 'GET', url: path, headers });
  return { status: res.statusCode, headers: kept(res.headers), body: res.body };
}

/** Reads `path` over HTTP (expecting the lane) and through inject, and holds the two equal. */
async function sameAsRoute(path: string, status: number): Promise<Answer> {
  const { answer, by } = await whoAnswers(s.app.directRoutes, () => overHttp(path));
  const laneId = lastReqId(s.log());
  expect(by, path).toBe('lane');
  expect(answer.status, `${path}: ${answer.body}`).toBe(status);
  const viaRoute = await injected(path);
  const routeId = lastReqId(s.log());
  expect(answer, path).toEqual(viaRoute);
  const lines = linesOf(s.log(), laneId);
  expect(lines, path).toEqual(linesOf(s.log(), routeId));
  expect(lines.some((l) => l.includes('"route":"/api/git/:owner/:repo/notes/:target"') && l.includes(`"status":${status}`)), path).toBe(true);
  return answer;
}

beforeAll(async () => {
  s = await startNotesServer();
  work = tempDir('mkt-note-lane-');
  commits = (await anaRepos(s, work.path, 3)).commits;
  for (const [repo, ns, text] of [['app', undefined, 'Reviewed: yes\n'], ['app', 'ci/build', 'status=passed "quoted" \u00e9\n'], ['secret', undefined, 'hidden\n']] as const) {
    const q = ns ? `?namespace=${ns}` : '';
    const put = await apiCall(s.url, 'PUT', `/api/git/ana/${repo}/notes/${commits[0]!}${q}`, { token: s.tokens.anaPush, body: { content: text } });
    expect(put.status).toBe(200);
  }
});

afterAll(async () => {
  await s?.close();
  work?.remove();
});

describe('get_note before fastify', () => {
  it('answers a note, in the default namespace and a named one, as the route does, and reads a changed note afresh', async () => {
    const first = await sameAsRoute(`/api/git/ana/app/notes/${commits[0]!}`, 200);
    expect(JSON.parse(first.body)).toMatchObject({ target: commits[0], namespace: 'commits', content: 'Reviewed: yes\n' });
    const named = await sameAsRoute(`/api/git/ana/app/notes/${commits[0]!}?namespace=ci/build`, 200);
    expect(JSON.parse(named.body)).toMatchObject({ namespace: 'ci/build', git_ref: 'refs/notes/ci/build', content: 'status=passed "quoted" \u00e9\n' });
    const put = await apiCall(s.url, 'PUT', `/api/git/ana/app/notes/${commits[0]!}`, { token: s.tokens.anaPush, body: { content: 'Reviewed: again\n' } });
    expect(put.status).toBe(200);
    expect(JSON.parse((await sameAsRoute(`/api/git/ana/app/notes/${commits[0]!}`, 200)).body).content).toBe('Reviewed: again\n');
  });

  /**
   * Runs `fn` with the clock the server's lookups are trusted by (the repository lookup's and the
   * ref read's 100 ms) held still, after a jump that makes everything remembered stale: the first
   * read then looks everything up, and what it found stays trusted while `fn` runs, however slowly
   * the machine runs it. The server lives in this process.
   */
  async function clockHeld(fn: () => Promise<void>): Promise<void> {
    const at = performance.now() + 60_000;
    const clock = vi.spyOn(performance, 'now').mockImplementation(() => at);
    try {
      await fn();
    } finally {
      clock.mockRestore();
    }
  }

  it('answers a note read before from memory (no await), the same bytes as the route, and a note written since afresh', async () => {
    const path = `/api/git/ana/app/notes/${commits[2]!}?namespace=ci/build`;
    const put = (content: string) => apiCall(s.url, 'PUT', path, { token: s.tokens.anaPush, body: { content } });
    const cached = vi.spyOn(NotesApi.prototype, 'cachedAnonymousGet');
    /** Reads until one is answered from memory (on PostgreSQL, a write's own notification may still drop what the read before remembered). */
    const fromMemory = async (): Promise<Answer> => {
      let got: Answer | undefined;
      await expect
        .poll(async () => {
          cached.mockClear();
          got = await overHttp(path);
          return cached.mock.results.some((r) => r.value !== undefined);
        })
        .toBe(true);
      return got!;
    };
    try {
      await clockHeld(async () => {
        expect((await put('first\n')).status).toBe(200);
        const first = await fromMemory();
        expect(first).toEqual(await injected(path));
        expect(JSON.parse(first.body).content).toBe('first\n');
        // A write forgets what the reads remembered: the next read finds the new note.
        expect((await put('second\n')).status).toBe(200);
        expect(JSON.parse((await overHttp(path)).body).content).toBe('second\n');
        const second = await fromMemory();
        expect(second).toEqual(await injected(path));
        expect(JSON.parse(second.body).content).toBe('second\n');
      });
    } finally {
      cached.mockRestore();
    }
  });

  it("never answers a private repository's note from memory to an anonymous read, however recently its owner read it", async () => {
    const path = `/api/git/ana/secret/notes/${commits[0]!}`;
    const lookups = vi.spyOn(SqlRepoStore.prototype, 'cachedRepo');
    try {
      await clockHeld(async () => {
        // Until an anonymous read found the private repository itself in memory, its owner's
        // read having put it and its note there.
        await expect
          .poll(async () => {
            expect((await overHttp(path, { authorization: `Bearer ${s.tokens.anaRead}` })).status).toBe(200);
            lookups.mockClear();
            const anonymous = await overHttp(path);
            expect(anonymous.status).toBe(404);
            expect(anonymous).toEqual(await injected(path));
            return lookups.mock.results.some((r) => r.value !== undefined);
          })
          .toBe(true);
      });
    } finally {
      lookups.mockRestore();
    }
  });

  it("answers the route's refusals with its status and text: no note, no namespace, a private or unknown repository, a SHA-256 id in a SHA-1 repository", async () => {
    const cases: [string, number, string][] = [
      [`/api/git/ana/app/notes/${commits[1]!}`, 404, `no note on ${commits[1]!} in namespace commits`],
      [`/api/git/ana/app/notes/${commits[0]!}?namespace=nowhere`, 404, 'namespace nowhere not found in ana/app'],
      [`/api/git/ana/secret/notes/${commits[0]!}`, 404, 'repository ana/secret not found'],
      [`/api/git/ana/none/notes/${commits[0]!}`, 404, 'repository ana/none not found'],
      [`/api/git/ana/app/notes/${'a'.repeat(64)}`, 404, `no object ${'a'.repeat(64)} in ana/app (a sha1 repository uses 40-digit ids)`],
      [`/api/git/ana/app/notes/${commits[0]!}?namespace=tmp/x/`, 404, ''],
    ];
    for (const [path, status, error] of cases) {
      const a = await sameAsRoute(path, status);
      if (error) expect(JSON.parse(a.body), path).toEqual({ error });
    }
  });

  it('leaves to the route a credential, a cookie, another query, another spelling, HEAD and a body', async () => {
    const c = commits[0]!;
    const declined: [string, Record<string, string>, string?][] = [
      [`/api/git/ana/secret/notes/${c}`, { authorization: `Bearer ${s.tokens.anaRead}` }],
      [`/api/git/ana/secret/notes/${c}`, { cookie: `mkt_session=${s.anaSession}` }],
      [`/api/git/ana/app/notes/${c}`, { authorization: 'Bearer mkt_wrong' }],
      [`/api/git/ana/app/notes/${c}?attribution=true`, {}],
      [`/api/git/ana/app/notes/${c}?namespace=ci%2Fbuild`, {}],
      [`/api/git/ana/app/notes/${c}?namespace=ci/build&namespace=x`, {}],
      [`/api/git/ana/app/notes/${c.toUpperCase()}`, {}],
      [`/api/git/ana/app/notes/${c}/`, {}],
      [`/api/git/ana/app/notes/${c}/history`, {}],
      ['/api/git/ana/app/notes/search?q=Reviewed', {}],
      ['/api/git/ana/app/notes', {}],
      [`/api/git/ana/app/notes/${c}`, {}, 'HEAD'],
      [`/api/git/ana/app/notes/${c}`, { 'content-length': '0' }],
    ];
    const statuses: number[] = [];
    for (const [path, headers, method] of declined) {
      const { answer, by } = await whoAnswers(s.app.directRoutes, () => overHttp(path, headers, method));
      expect(by, `${method ?? 'GET'} ${path} ${JSON.stringify(headers)}`).toBe('fastify');
      statuses.push(answer.status);
    }
    // What the route answers them: a credential that widens, one that is refused, a query the lane does not
    // read, an id in capitals (the route reads it in lower case), a trailing slash (not its route).
    expect(statuses).toEqual([200, 200, 401, 200, 200, 400, 200, 404, 200, 200, 200, 200, 200]);
  });

  it('takes only URLs whose every part is plain', () => {
    const id = 'b'.repeat(40);
    expect(noteGetParts(`/api/git/o/r/notes/${id}`)).toEqual({ owner: 'o', repo: 'r', target: id, namespace: undefined });
    expect(noteGetParts(`/api/git/o/r/notes/${id}?namespace=a/b.c_d-e`)).toEqual({ owner: 'o', repo: 'r', target: id, namespace: 'a/b.c_d-e' });
    for (const url of [
      `/api/git/o/r/notes/${id}?namespace=`,
      `/api/git/o/r/notes/${id}?namespace=a+b`,
      `/api/git/o/r/notes/${id}?`,
      `/api/git/o/r/notes/${id}?x=1`,
      `/api/git/o%20/r/notes/${id}`,
      `/api/git/${'o'.repeat(101)}/r/notes/${id}`,
      `/api/git//r/notes/${id}`,
      `/api/git/o/r/note/${id}`,
      `/api/git/o/r/notes/${id.slice(1)}`,
      `/api/git/o/r/x/notes/${id}`,
      '/api/git/o/r/notes/missing',
    ])
      expect(noteGetParts(url), url).toBeUndefined();
  });
});
