// Issue 36, search across an owner's repositories (`GET /api/git/{owner}/notes/search`, `mkt
// notes search --owner`), against the spec's 404 rules: a private repository of ana is invisible
// to bo and to anonymous callers and visible to ana (and to bo once granted); an owner with no
// repository the caller can see answers 404 with the same error as an unknown repository. Hits
// name their repository, repositories come in name order, and a cursor crosses from one to the next.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNotesServer, type NotesServer } from '../../helpers/notes-server.js';
import { tempDir } from '../../helpers/tmp.js';
import {
  buildNotesFixture,
  fixtureGit,
  getJson,
  hostFixture,
  hasField,
  runMkt,
  searchAll,
  type ApiHit,
  type NotesFixture,
  type Params,
  type SearchPage,
} from '../../helpers/notes-fixture.js';

let s: NotesServer;
let work: { path: string; remove(): void };
/** repo -> its fixture. */
const repos = new Map<string, NotesFixture>();
const SECRET_ID = '<secret.4711@mail.example.org>';

const keyOf = (repo: string, namespace: string, object: string): string => `${repo} ${namespace} ${object}`;
const hitKeys = (hits: ApiHit[]): string[] => hits.map((h) => keyOf(h.repo, h.namespace, h.object)).sort();
function refKeys(names: string[], keep: (fields: { key: string; value: string }[]) => boolean = () => true): string[] {
  return names.flatMap((r) => repos.get(r)!.commits.filter((c) => keep(c.note.fields)).map((c) => keyOf(r, c.note.namespace, c.sha))).sort();
}
const ownerAll = (owner: string, params: Params, token?: string) => searchAll(s.url, `/api/git/${owner}/notes/search`, params, { token });
const ownerOne = (owner: string, params: Params, token?: string) => getJson<SearchPage & { error?: string; groups?: { key: string; count: number }[] }>(`${s.url}/api/git/${owner}/notes/search?${new URLSearchParams(params).toString()}`, token);

beforeAll(async () => {
  s = await startNotesServer();
  work = tempDir('mkt-notes-owner-');
  const layout: [string, boolean, number][] = [
    ['ana/alpha', false, 90],
    ['ana/beta', false, 40],
    ['ana/granted', true, 30],
    ['ana/secret', true, 50],
    ['bo/hidden', true, 20],
  ];
  for (const [full, priv, n] of layout) {
    const fx = await buildNotesFixture(work.path, { commits: n, seed: n, name: full.replace('/', '-') });
    const owner = full.startsWith('bo/') ? s.tokens.boPush : s.tokens.anaPush;
    if (full === 'ana/secret') {
      // A message id only the private repository holds.
      const sha = fx.commits[3]!.sha;
      await fixtureGit(fx.dir, ['notes', '--ref', 'review', 'add', '-f', '-m', `${fx.commits[3]!.note.text}Message-Id: ${SECRET_ID}\n`, sha]);
      fx.commits[3]!.note.text += `Message-Id: ${SECRET_ID}\n`;
      fx.commits[3]!.note.fields.push({ key: 'Message-Id', value: SECRET_ID });
    }
    await hostFixture(s, full, fx, { private: priv, token: owner });
    repos.set(full, fx);
  }
  await s.admin.grant('ana/granted', 'bo', 'read');
});

afterAll(async () => {
  await s?.close();
  work?.remove();
});

describe('owner-wide search', () => {
  it('anonymous, bo and ana each see the repositories they may read, in name order, every hit once across cursors', async () => {
    const cases: [string, string | undefined, string[]][] = [
      ['anonymous', undefined, ['ana/alpha', 'ana/beta']],
      ['bo', s.tokens.boRead, ['ana/alpha', 'ana/beta', 'ana/granted']],
      ['ana', s.tokens.anaRead, ['ana/alpha', 'ana/beta', 'ana/granted', 'ana/secret']],
    ];
    for (const [who, token, visible] of cases) {
      // 7 a page: pages end inside repositories and cross from one to the next.
      const { hits, pages } = await ownerAll('ana', [['limit', '7']], token);
      expect(hitKeys(hits), who).toEqual(refKeys(visible));
      expect(pages.every((p) => p.data.length <= 7 && p.indexed)).toBe(true);
      const order = hits.map((h) => h.repo);
      expect(order, who).toEqual([...order].sort());
    }
  });

  it('filters apply across repositories; a literal held only by a private repository is found by its owner alone', async () => {
    const alice = await ownerAll('ana', [['field', 'Reviewed-by~alice'], ['limit', '200']], s.tokens.boRead);
    expect(hitKeys(alice.hits)).toEqual(refKeys(['ana/alpha', 'ana/beta', 'ana/granted'], (f) => hasField(f, 'Reviewed-by', '~', 'alice')));
    const lit: Params = [['mode', 'literal'], ['q', SECRET_ID]];
    expect((await ownerAll('ana', lit)).hits).toEqual([]);
    expect((await ownerAll('ana', lit, s.tokens.boRead)).hits).toEqual([]);
    const mine = await ownerAll('ana', lit, s.tokens.anaRead);
    expect(hitKeys(mine.hits)).toEqual([keyOf('ana/secret', 'review', repos.get('ana/secret')!.commits[3]!.sha)]);
    const counts = await ownerOne('ana', [['count_by', 'namespace']]);
    expect(counts.status).toBe(200);
    const visibleNotes = (['ana/alpha', 'ana/beta'] as const).flatMap((r) => repos.get(r)!.commits.map((c) => c.note.namespace));
    const want = new Map<string, number>();
    for (const ns of visibleNotes) want.set(ns, (want.get(ns) ?? 0) + 1);
    expect(new Map(counts.body.groups!.map((g) => [g.key, g.count]))).toEqual(want);
  });

  it('404 alike for an owner whose repositories the caller cannot see and for an unknown owner; 200 for the one who can', async () => {
    // The text names what was asked (an owner, not a repository): what must not differ is the
    // answer for an owner whose repositories are hidden and for an owner that does not exist.
    const unknown = await ownerOne('nobody', []);
    expect(unknown.status).toBe(404);
    expect(typeof unknown.body.error).toBe('string');
    const sameAsUnknown = (owner: string, body: unknown) => expect(JSON.stringify(body).replaceAll(owner, 'nobody')).toBe(JSON.stringify(unknown.body));
    for (const [owner, token] of [
      ['bo', undefined],
      ['bo', s.tokens.anaRead],
      ['nobody', undefined],
      ['nobody', s.tokens.anaRead],
    ] as const) {
      const r = await ownerOne(owner, [], token);
      expect(r.status, `${owner} as ${token ? 'ana' : 'anonymous'}`).toBe(404);
      sameAsUnknown(owner, r.body);
      // The same for counts and every mode: nothing says the private repository exists.
      const counted = await ownerOne(owner, [['count_by', 'namespace']], token);
      expect(counted.status).toBe(404);
      sameAsUnknown(owner, counted.body);
      const literal = await ownerOne(owner, [['mode', 'literal'], ['q', 'Reviewed-by']], token);
      expect(literal.status).toBe(404);
      sameAsUnknown(owner, literal.body);
    }
    const bo = await ownerAll('bo', [['limit', '200']], s.tokens.boRead);
    expect(hitKeys(bo.hits)).toEqual(refKeys(['bo/hidden']));
    // A private repository is as missing through the per-repository search.
    expect((await getJson(`${s.url}/api/git/ana/secret/notes/search`, s.tokens.boRead)).status).toBe(404);
    expect((await getJson(`${s.url}/api/git/ana/secret/notes/search`)).status).toBe(404);
  });

  it('`mkt notes search --owner` streams what the caller may see, and fails for an owner it cannot', async () => {
    const run = (args: string[], token?: string) => runMkt(args, { cwd: work.path, home: work.path, url: s.url, env: token ? { MKT_MARKETPLACE_TOKEN: token } : {} });
    const asBo = await run(['notes', 'search', '--owner', 'ana', '--all', '--format', 'ndjson'], s.tokens.boRead);
    expect(asBo.code, asBo.stderr).toBe(0);
    const hits = asBo.stdout.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as ApiHit);
    expect(hitKeys(hits)).toEqual(refKeys(['ana/alpha', 'ana/beta', 'ana/granted']));
    const anon = await run(['notes', 'search', '--owner', 'ana', '--all', '--format', 'ndjson', '--namespace', 'ci']);
    expect(anon.code, anon.stderr).toBe(0);
    expect(anon.stdout.split('\n').filter((l) => l !== '')).toHaveLength(refKeys(['ana/alpha', 'ana/beta'], (f) => f.some((x) => x.key === 'build')).length);
    const none = await run(['notes', 'search', '--owner', 'bo', '--all', '--format', 'ndjson']);
    expect(none.code).not.toBe(0);
    expect(none.stdout).toBe('');
  });
});
