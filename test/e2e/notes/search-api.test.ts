// The notes search API of issue 36 on a small fixture, through real HTTP: every mode (words,
// literal, regex) with its hit fields, the filters (field, author, since/until, commits), cursor
// paging (every hit exactly once; a cursor of another search is a 400), count_by, the owner-wide
// search and its visibility (a private repository is invisible to others; 404 for an owner with
// nothing visible), and list_missing_notes. Both engines (MKT_TEST_ENGINE=postgres).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCall, startNotesServer, gitIn, gitUrl, localRepo, type NotesServer } from '../../helpers/notes-server.js';
import { tempDir } from '../../helpers/tmp.js';
import type { SearchHit } from '../../../src/schemas/notes.js';

type Hit = SearchHit;
interface Page {
  data: Hit[];
  next_cursor: string | null;
  total: number;
  indexed: boolean;
}

let s: NotesServer;
let work: { path: string; remove(): void };
let c: string[];
let bigToken: string;

/** The notes of ana/app in namespace `commits` (by commit index); `ci` holds three more. */
const NOTES = [
  'Reviewed-by: Alice <alice@example.com>\nCode-Review+2: looks good\ndeploy ok',
  'ci=passed\nurl=https://ci.example.com/build/42?x=1',
  '{"build": 42, "status": "green", "tags": ["a", "b"]}\nMessage-Id: <20261129.1234@lists.example.org>',
  'deploy to staging\nTODO: fix flaky test',
  'plain text note',
];

async function put(repo: string, commit: string, content: string, namespace = 'commits', token = s.tokens.anaPush): Promise<void> {
  const r = await apiCall(s.url, 'PUT', `/api/git/${repo}/notes/${commit}?namespace=${namespace}`, { token, body: { content } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

async function get(path: string, token?: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return apiCall(s.url, 'GET', path, { token });
}

async function page(path: string, token?: string): Promise<Page> {
  const r = await get(path, token);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as unknown as Page;
}

/** Every hit of a search, following next_cursor; no page may be empty except by a regex scan. */
async function all(path: string, token?: string): Promise<Hit[]> {
  const out: Hit[] = [];
  let cursor: string | null = null;
  for (let n = 0; n < 1000; n++) {
    const p: Page = await page(cursor === null ? path : `${path}&cursor=${encodeURIComponent(cursor)}`, token);
    out.push(...p.data);
    if (p.next_cursor === null) return out;
    cursor = p.next_cursor;
  }
  throw new Error('the cursor never ended');
}

const idx = (hits: Hit[]) => hits.map((h) => c.indexOf(h.object));
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);

beforeAll(async () => {
  s = await startNotesServer();
  work = tempDir('mkt-notes-search-api-');
  await s.admin.addUser({ name: 'cy', email: 'cy@example.com' });
  bigToken = (await s.admin.createToken('cy', 'push')).token;
  for (const [full, priv] of [['ana/app', false], ['ana/secret', true], ['ana/zeta', false], ['bo/hidden', true], ['cy/big', false], ['cy/notes', false]] as const) {
    await s.admin.createRepo(full, { private: priv, objectFormat: 'sha1' });
  }
  const local = await localRepo(work.path, 'app', 6);
  c = local.commits;
  for (const [full, token] of [['ana/app', s.tokens.anaPush], ['ana/secret', s.tokens.anaPush], ['ana/zeta', s.tokens.anaPush], ['bo/hidden', s.tokens.boPush], ['cy/big', bigToken], ['cy/notes', bigToken]] as const) {
    await gitIn(local.dir, ['push', '-q', gitUrl(s, full, token), 'main']);
  }
  for (const [i, text] of NOTES.entries()) await put('ana/app', c[i]!, text);
  for (const i of [0, 1, 2]) await put('ana/app', c[i]!, `ci: run ${i}\nstatus=${i === 1 ? 'red' : 'green'}`, 'ci');
  await put('ana/secret', c[0]!, 'secret deploy plan');
  await put('ana/zeta', c[4]!, 'deploy from zeta');
  await put('ana/zeta', c[5]!, 'zeta note two');
  await put('bo/hidden', c[0]!, 'hidden deploy', 'commits', s.tokens.boPush);
  // One long line: a regex that tries up to 100 characters at every position runs over its budget.
  await put('cy/big', c[0]!, `${'a'.repeat(200_000)}\nneedle`, 'commits', bigToken);
  await put('cy/notes', c[1]!, 'a repository named notes', 'commits', bigToken);
});

afterAll(async () => {
  await s?.close();
  work?.remove();
});

describe('modes and hits', () => {
  it('words: ranked hits carry the repository, the note metadata, matched lines and fields', async () => {
    const p = await page('/api/git/ana/app/notes/search?q=deploy');
    expect(sorted(idx(p.data))).toEqual([0, 3]);
    expect(p.next_cursor).toBeNull();
    const h = p.data.find((x) => x.object === c[0])!;
    expect(h).toMatchObject({ repo: 'ana/app', namespace: 'commits', git_ref: 'refs/notes/commits', target: c[0], object_type: 'commit', note_author: 'ana', note_email: 'ana@example.com', commit_subject: 'commit 0' });
    expect(h.commit_author).toMatch(/^T/);
    expect(Date.parse(h.note_at!)).toBeGreaterThan(Date.parse('2020-01-01'));
    expect(h.note_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    expect(h.score).toBeGreaterThan(0);
    expect(h.snippet).toContain('[deploy]');
    expect(h.lines).toEqual([{ n: 3, text: 'deploy ok' }]);
    expect(h.fields['Reviewed-by']).toEqual(['Alice <alice@example.com>']);
    expect(h.fields['Code-Review']?.[0]).toMatch(/^\+2/);
    expect(h.content).toBeUndefined();
    const withText = await page('/api/git/ana/app/notes/search?q=plain&content=true');
    expect(withText.data[0]!.content).toBe(NOTES[4]);
  });

  it('words without q: every note in index order, score 0, no lines, the first line as snippet', async () => {
    const p = await page('/api/git/ana/app/notes/search?namespace=commits');
    expect(idx(p.data)).toEqual([0, 1, 2, 3, 4]);
    expect(p.data.every((h) => h.score === 0 && h.lines.length === 0)).toBe(true);
    expect(p.data[4]!.snippet).toBe('plain text note');
  });

  it('literal: an exact, case-sensitive substring (message ids, URLs) and the lines holding it', async () => {
    const id = await page(`/api/git/ana/app/notes/search?mode=literal&q=${encodeURIComponent('<20261129.1234@lists.example.org>')}`);
    expect(idx(id.data)).toEqual([2]);
    expect(id.data[0]!.lines).toEqual([{ n: 2, text: 'Message-Id: <20261129.1234@lists.example.org>' }]);
    expect(id.data[0]!.snippet).toBe('Message-Id: <20261129.1234@lists.example.org>');
    expect(id.data[0]!.score).toBe(0);
    const url = await page(`/api/git/ana/app/notes/search?mode=literal&q=${encodeURIComponent('https://ci.example.com/build/42?x=1')}`);
    expect(idx(url.data)).toEqual([1]);
    expect((await page('/api/git/ana/app/notes/search?mode=literal&q=DEPLOY')).data).toEqual([]);
    expect(idx((await page('/api/git/ana/app/notes/search?mode=literal&q=ok')).data)).toEqual([0]);
  });

  it('regex: per line, (?i) ignores case, refusals and the budget are 400s', async () => {
    const todo = await page(`/api/git/ana/app/notes/search?mode=regex&q=${encodeURIComponent('^TODO: fix')}`);
    expect(idx(todo.data)).toEqual([3]);
    expect(todo.data[0]!.lines).toEqual([{ n: 2, text: 'TODO: fix flaky test' }]);
    const ci = await page(`/api/git/ana/app/notes/search?mode=regex&q=${encodeURIComponent('(?i)^DEPLOY')}`);
    expect(idx(ci.data)).toEqual([0, 3]);
    expect(idx((await page(`/api/git/ana/app/notes/search?mode=regex&q=${encodeURIComponent('build/\\d+\\?')}`)).data)).toEqual([1]);
    const backref = await get(`/api/git/ana/app/notes/search?mode=regex&q=${encodeURIComponent('(a)\\1')}`);
    expect(backref.status).toBe(400);
    expect(backref.body.error).toMatch(/^regex: /);
    const slow = await get(`/api/git/cy/big/notes/search?mode=regex&q=${encodeURIComponent('[a-z]{1,100}x')}`);
    expect(slow).toEqual({ status: 400, body: { error: expect.stringMatching(/ran over its budget of 50000000 steps; narrow the search/) } });
    expect(idx((await page(`/api/git/cy/big/notes/search?mode=regex&q=${encodeURIComponent('^needle$')}`)).data)).toEqual([0]);
  });

  it('clear 400s for malformed parameters', async () => {
    const cases: [string, RegExp][] = [
      ['mode=fuzzy', /mode/],
      ['mode=literal', /needs a non-empty q/],
      ['mode=regex&q=', /needs a non-empty q/],
      ['field=nokey', /KEY~text/],
      [Array.from({ length: 21 }, (_, i) => `field=k${i}=v`).join('&'), /at most 20 field filters/],
      ['since=2026-02-30', /since must be an RFC 3339 time/],
      ['until=tomorrow', /until must be/],
      ['commits=abc', /not a full object id/],
      ['count_by=colour', /count_by must be/],
      ['cursor=!!!', /not a valid cursor/],
      ['namespace=bad..name', /^namespace: /],
    ];
    for (const [qs, text] of cases) {
      const r = await get(`/api/git/ana/app/notes/search?${qs}`);
      expect(r.status, qs).toBe(400);
      expect(r.body.error, qs).toMatch(text);
    }
  });
});

describe('filters', () => {
  const q = async (qs: string) => sorted(idx((await page(`/api/git/ana/app/notes/search?namespace=commits&${qs}`)).data));

  it('field filters: contains (any case) or equals, keys in any case, repeated filters all hold', async () => {
    expect(await q('field=reviewed-by~ALICE')).toEqual([0]);
    expect(await q('field=ci=passed')).toEqual([1]);
    expect(await q('field=ci=PASSED')).toEqual([]);
    expect(await q('field=build=42')).toEqual([2]);
    expect(await q('field=tags=b')).toEqual([2]);
    expect(await q(`field=${encodeURIComponent('url~example.com/build')}`)).toEqual([1]);
    expect(await q('field=status=green&field=build=42')).toEqual([2]);
    expect(await q('field=status=green&field=build=43')).toEqual([]);
    expect(await q('field=nosuchkey~')).toEqual([]);
  });

  it('author, since/until (since <= note_at < until), commits, commits_only', async () => {
    expect(await q('author=ANA@example.com')).toEqual([0, 1, 2, 3, 4]);
    expect(await q('author=Ana')).toEqual([0, 1, 2, 3, 4]);
    expect(await q('author=bo')).toEqual([]);
    expect(await q('since=2000-01-01')).toEqual([0, 1, 2, 3, 4]);
    expect(await q('until=2000-01-01')).toEqual([]);
    const at = (await page('/api/git/ana/app/notes/search?namespace=commits&q=plain')).data[0]!.note_at!;
    expect(await q(`since=${encodeURIComponent(at)}&q=plain`)).toEqual([4]);
    expect(await q(`until=${encodeURIComponent(at)}&q=plain`)).toEqual([]);
    expect(await q(`commits=${c[0]},${c[3]!.toUpperCase()}`)).toEqual([0, 3]);
    expect(await q('commits=')).toEqual([]);
    expect(await q('commits_only=true')).toEqual([0, 1, 2, 3, 4]);
  });
});

describe('paging', () => {
  it('every hit exactly once through next_cursor, in every mode', async () => {
    const everything = await all('/api/git/ana/app/notes/search?limit=2');
    expect(everything).toHaveLength(8);
    expect(new Set(everything.map((h) => `${h.namespace} ${h.object}`)).size).toBe(8);
    const first = await page('/api/git/ana/app/notes/search?limit=8');
    expect(first.next_cursor).toBeNull();
    expect(everything.map((h) => `${h.namespace} ${h.object}`)).toEqual(first.data.map((h) => `${h.namespace} ${h.object}`));

    const ranked = await page('/api/git/ana/app/notes/search?q=deploy+or+ci+or+green&limit=50');
    const pagedRanked = await all('/api/git/ana/app/notes/search?q=deploy+or+ci+or+green&limit=1');
    expect(pagedRanked.map((h) => `${h.namespace} ${h.object}`)).toEqual(ranked.data.map((h) => `${h.namespace} ${h.object}`));
    expect(ranked.data.length).toBeGreaterThan(2);

    const lit = await all('/api/git/ana/app/notes/search?mode=literal&q=e&limit=1');
    expect(lit.length).toBe((await page('/api/git/ana/app/notes/search?mode=literal&q=e&limit=50')).total);
    const rx = await all(`/api/git/ana/app/notes/search?mode=regex&q=${encodeURIComponent('[a-z]+')}&limit=3`);
    expect(rx).toHaveLength(8);
  });

  it('the last full page says null at once; a cursor of another search or a forged one is a 400', async () => {
    const two = await page('/api/git/ana/app/notes/search?q=deploy&limit=2');
    expect(two.next_cursor).toBeNull();
    const p = await page('/api/git/ana/app/notes/search?limit=1');
    const cur = encodeURIComponent(p.next_cursor!);
    // The limit is not part of the search: a cursor goes on with another page size.
    expect((await page(`/api/git/ana/app/notes/search?limit=3&cursor=${cur}`)).total).toBe(3);
    for (const other of [`q=deploy&cursor=${cur}`, `namespace=ci&cursor=${cur}`, `mode=literal&q=e&cursor=${cur}`]) {
      expect(await get(`/api/git/ana/app/notes/search?${other}`)).toEqual({ status: 400, body: { error: 'the cursor does not belong to this search' } });
    }
    expect((await get(`/api/git/ana/zeta/notes/search?cursor=${cur}`)).body).toEqual({ error: 'the cursor does not belong to this search' });
    expect((await get(`/api/git/ana/notes/search?cursor=${cur}`)).status).toBe(400);
    const forged = Buffer.from(JSON.stringify({ v: 1, h: '0123456789abcdef', i: 1 })).toString('base64url');
    expect((await get(`/api/git/ana/app/notes/search?cursor=${forged}`)).body).toEqual({ error: 'the cursor does not belong to this search' });
    expect((await get('/api/git/ana/app/notes/search?cursor=eyJ2IjoyfQ')).body).toEqual({ error: 'the cursor is not a valid cursor' });
  });
});

describe('count_by', () => {
  it('groups by namespace, note author or a field, largest first', async () => {
    const ns = await get('/api/git/ana/app/notes/search?count_by=namespace');
    expect(ns).toEqual({ status: 200, body: { groups: [{ key: 'commits', count: 5 }, { key: 'ci', count: 3 }], indexed: true, truncated: false } });
    expect((await get('/api/git/ana/app/notes/search?count_by=note_author')).body.groups).toEqual([{ key: 'ana', count: 8 }]);
    expect((await get('/api/git/ana/app/notes/search?count_by=field:STATUS')).body.groups).toEqual([
      { key: 'green', count: 3 },
      { key: 'red', count: 1 },
    ]);
    expect((await get('/api/git/ana/app/notes/search?q=deploy&count_by=namespace')).body.groups).toEqual([{ key: 'commits', count: 2 }]);
    expect((await get(`/api/git/ana/app/notes/search?mode=regex&q=${encodeURIComponent('^status=')}&count_by=field:status`)).body.groups).toEqual([
      { key: 'green', count: 2 },
      { key: 'red', count: 1 },
    ]);
    expect((await get('/api/git/ana/notes/search?q=deploy&count_by=namespace')).body.groups).toEqual([{ key: 'commits', count: 3 }]);
  });
});

describe('owner-wide search', () => {
  const repos = (hits: Hit[]) => [...new Set(hits.map((h) => h.repo))];

  it('searches the repositories the caller can see, in name order, each hit naming its repository', async () => {
    const anon = await all('/api/git/ana/notes/search?q=deploy&limit=1');
    expect(repos(anon)).toEqual(['ana/app', 'ana/zeta']);
    expect(anon).toHaveLength(3);
    expect(repos(await all('/api/git/ana/notes/search?q=deploy', s.tokens.boRead))).toEqual(['ana/app', 'ana/zeta']);
    const owner = await all('/api/git/ANA/notes/search?q=deploy&limit=2', s.tokens.anaRead);
    expect(repos(owner)).toEqual(['ana/app', 'ana/secret', 'ana/zeta']);
    expect(owner).toHaveLength(4);
    // Every note of every visible repository exactly once, one hit per page.
    const everything = await all('/api/git/ana/notes/search?limit=1');
    expect(everything.map((h) => `${h.repo} ${h.namespace} ${c.indexOf(h.object)}`)).toEqual([
      ...(await page('/api/git/ana/app/notes/search?limit=50')).data.map((h) => `ana/app ${h.namespace} ${c.indexOf(h.object)}`),
      'ana/zeta commits 4',
      'ana/zeta commits 5',
    ]);
    expect(await all(`/api/git/ana/notes/search?mode=regex&q=${encodeURIComponent('^zeta')}&limit=1`)).toHaveLength(1);
  });

  it('404 when the owner has nothing the caller can see, the same for an unknown owner', async () => {
    expect(await get('/api/git/bo/notes/search?q=deploy')).toEqual({ status: 404, body: { error: 'no repositories of bo found' } });
    expect((await get('/api/git/bo/notes/search?q=deploy', s.tokens.anaRead)).status).toBe(404);
    expect(await get('/api/git/nobody/notes/search')).toEqual({ status: 404, body: { error: 'no repositories of nobody found' } });
    expect(repos((await page('/api/git/bo/notes/search?q=deploy', s.tokens.boRead)).data)).toEqual(['bo/hidden']);
    // A grant makes a private repository visible to its grantee.
    await s.admin.grant('ana/secret', 'bo', 'read');
    expect(repos(await all('/api/git/ana/notes/search?q=deploy', s.tokens.boRead))).toEqual(['ana/app', 'ana/secret', 'ana/zeta']);
    expect(repos(await all('/api/git/ana/notes/search?q=deploy'))).toEqual(['ana/app', 'ana/zeta']);
  });

  it('a repository named `notes` keeps its own routes beside the owner-wide one', async () => {
    expect(repos((await page('/api/git/cy/notes/search?q=named')).data)).toEqual(['cy/notes']);
    expect(repos((await page('/api/git/cy/notes/notes/search?q=named')).data)).toEqual(['cy/notes']);
    expect((await get('/api/git/cy/notes/notes')).body.data).toMatchObject([{ name: 'commits', notes: 1 }]);
    expect((await get(`/api/git/cy/notes/notes/missing?commits=${c[1]},${c[2]}`)).body.data).toEqual([{ object: c[2] }]);
  });
});

describe('list_missing_notes', () => {
  it('the commits given without a note in the namespace, in the order given', async () => {
    const order = [c[5]!, c[3]!, c[2]!, c[0]!, c[4]!];
    expect(await get(`/api/git/ana/app/notes/missing?commits=${order.join(',')}`)).toEqual({ status: 200, body: { data: [{ object: c[5] }], namespace: 'commits', indexed: true } });
    expect((await get(`/api/git/ana/app/notes/missing?namespace=ci&commits=${order.join(',')}`)).body.data).toEqual([{ object: c[5] }, { object: c[3] }, { object: c[4] }]);
    expect((await get(`/api/git/ana/app/notes/missing?namespace=never&commits=${c[0]}`)).body.data).toEqual([{ object: c[0] }]);
  });

  it('400 for a malformed list, 404 for a repository the caller cannot see; the static segment wins over a target', async () => {
    expect((await get('/api/git/ana/app/notes/missing')).body).toEqual({ error: 'querystring.commits is required' });
    expect((await get('/api/git/ana/app/notes/missing?commits=xyz')).status).toBe(400);
    expect((await get('/api/git/ana/app/notes/missing?commits=&namespace=a..b')).status).toBe(400);
    expect((await get(`/api/git/ana/secret/notes/missing?commits=${c[0]}`)).status).toBe(404);
    expect((await get(`/api/git/ana/secret/notes/missing?commits=${c[0]}`, s.tokens.anaRead)).body.data).toEqual([]);
    // get_note still answers its own path.
    expect((await get(`/api/git/ana/app/notes/${c[0]}`)).body.content).toBe(NOTES[0]);
  });
});
