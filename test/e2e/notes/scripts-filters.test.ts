// Issue 36, what a script filters by, through the API on a repository of 10,000 notes in three
// shapes: field filters (trailers, key=value, JSON keys; contains and equals; keys ignore case),
// the note's author and time, a list of commits, words with filters; literal search that keeps
// message ids and URLs whole (where words split them); regular expressions per line against a
// reference computed here with JavaScript's RegExp. Every reference comes from the fixture.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNotesServer, type NotesServer } from '../../helpers/notes-server.js';
import { tempDir } from '../../helpers/tmp.js';
import { MAX_COMMITS } from '../../../src/schemas/notes.js';
import {
  NOTES_BASE_TIME,
  buildNotesFixture,
  getJson,
  hostFixture,
  hasField,
  searchAll,
  type ApiHit,
  type FixtureCommit,
  type NotesFixture,
  type Params,
} from '../../helpers/notes-fixture.js';

const REPO = 'ana/filters';
const SEARCH = `/api/git/${REPO}/notes/search`;

let s: NotesServer;
let work: { path: string; remove(): void };
let fx: NotesFixture;

const keyOf = (namespace: string, object: string): string => `${namespace} ${object}`;
const refKeys = (keep: (c: FixtureCommit) => boolean): string[] => fx.commits.filter(keep).map((c) => keyOf(c.note.namespace, c.sha)).sort();
const hitKeys = (hits: ApiHit[]): string[] => hits.map((h) => keyOf(h.namespace, h.object)).sort();
const all = async (params: Params): Promise<ApiHit[]> => (await searchAll(s.url, SEARCH, [['limit', '200'], ...params])).hits;
const one = (qs: string) => getJson<{ data?: ApiHit[]; error?: string; next_cursor?: string | null }>(`${s.url}${SEARCH}?${qs}`);
/** The lines of a note as grep sees them (the text ends with a newline, which starts no line). */
const linesOf = (text: string): string[] => text.replace(/\n$/, '').split('\n');

beforeAll(async () => {
  s = await startNotesServer();
  work = tempDir('mkt-notes-filters-');
  fx = await buildNotesFixture(work.path, { seed: 7 });
  await hostFixture(s, REPO, fx);
});

afterAll(async () => {
  await s?.close();
  work?.remove();
});

describe('field filters', () => {
  it('a trailer contains (~), ignoring case in key and value', async () => {
    const want = refKeys((c) => hasField(c.note.fields, 'Reviewed-by', '~', 'alice'));
    expect(want.length).toBeGreaterThan(500);
    expect(hitKeys(await all([['field', 'Reviewed-by~alice']]))).toEqual(want);
    expect(hitKeys(await all([['field', 'reviewed-BY~ALICE']]))).toEqual(want);
  });

  it('a key=value field equals (=) or contains (~); a Gerrit vote is the value', async () => {
    const equal = refKeys((c) => hasField(c.note.fields, 'closes-issues', '=', '12,13'));
    expect(equal.length).toBeGreaterThan(5);
    expect(hitKeys(await all([['field', 'closes-issues=12,13']]))).toEqual(equal);
    const contains = refKeys((c) => hasField(c.note.fields, 'closes-issues', '~', '12'));
    expect(contains.length).toBeGreaterThan(equal.length);
    expect(hitKeys(await all([['field', 'closes-issues~12']]))).toEqual(contains);
    const plusTwo = refKeys((c) => hasField(c.note.fields, 'Code-Review', '~', '+2'));
    expect(hitKeys(await all([['field', 'Code-Review~+2']]))).toEqual(plusTwo);
  });

  it('JSON keys: scalars as JSON text, array elements one by one, nested objects and null skipped; filters AND', async () => {
    const both = refKeys((c) => hasField(c.note.fields, 'metric', '=', 'latency') && hasField(c.note.fields, 'run', '=', 'r-17'));
    expect(both.length).toBeGreaterThan(0);
    expect(hitKeys(await all([['field', 'metric=latency'], ['field', 'run=r-17']]))).toEqual(both);
    const nightlyFailed = refKeys((c) => hasField(c.note.fields, 'tags', '=', 'nightly') && hasField(c.note.fields, 'ok', '=', 'false'));
    expect(nightlyFailed.length).toBeGreaterThan(0);
    expect(hitKeys(await all([['field', 'tags=nightly'], ['field', 'ok=false']]))).toEqual(nightlyFailed);
    const value = fx.commits.find((c) => c.note.namespace === 'perf')!.note.fields.find((f) => f.key === 'value')!.value;
    expect(hitKeys(await all([['field', `value=${value}`]]))).toEqual(refKeys((c) => hasField(c.note.fields, 'value', '=', value)));
    expect(await all([['field', 'os=linux']])).toEqual([]);
    expect(await all([['field', 'comment~n']])).toEqual([]);
  });

  it('at most 20 field filters (400 beyond)', async () => {
    const twenty = Array.from({ length: 20 }, () => 'field=build~o').join('&');
    expect((await one(twenty)).status).toBe(200);
    const r = await one(`${twenty}&field=build~o`);
    expect(r.status).toBe(400);
    expect(typeof r.body.error).toBe('string');
  });
});

describe('author, time and commits', () => {
  it("author= matches the note's author name or email, ignoring case", async () => {
    const bot = refKeys((c) => c.note.author.name === 'ci-bot');
    expect(bot.length).toBeGreaterThan(1000);
    expect(hitKeys(await all([['author', 'ci-bot']]))).toEqual(bot);
    expect(hitKeys(await all([['author', 'PERF@BOTS.EXAMPLE']]))).toEqual(refKeys((c) => c.note.author.email === 'perf@bots.example'));
    expect(await all([['author', 'ci']])).toEqual([]);
  });

  it('since is inclusive, until exclusive; RFC 3339 or a date', async () => {
    const since = (NOTES_BASE_TIME + 3600 * 40) * 1000;
    const until = (NOTES_BASE_TIME + 3600 * 90) * 1000;
    const want = refKeys((c) => c.note.at >= since && c.note.at < until);
    expect(want.length).toBe(50 * 25);
    expect(hitKeys(await all([['since', new Date(since).toISOString()], ['until', new Date(until).toISOString()]]))).toEqual(want);
    const day = Date.UTC(2026, 1, 5);
    expect(hitKeys(await all([['since', '2026-02-05']]))).toEqual(refKeys((c) => c.note.at >= day));
    expect(hitKeys(await all([['until', '2026-02-05'], ['namespace', 'ci']]))).toEqual(refKeys((c) => c.note.at < day && c.note.namespace === 'ci'));
    expect((await one('since=yesterday')).status).toBe(400);
  });

  it('commits= restricts to the objects listed', async () => {
    const picked = fx.commits.filter((_, i) => i % 11 === 3).slice(0, 150);
    const set = new Set(picked.map((c) => c.sha));
    const got = await all([['commits', picked.map((c) => c.sha).join(',')], ['field', 'build=ok']]);
    expect(hitKeys(got)).toEqual(refKeys((c) => set.has(c.sha) && hasField(c.note.fields, 'build', '=', 'ok')));
  });

  it('commits= takes up to MAX_COMMITS ids in one request, 400 beyond', async () => {
    const picked = fx.commits.slice(2000, 2000 + MAX_COMMITS);
    const got = await all([['commits', picked.map((c) => c.sha).join(',')]]);
    expect(hitKeys(got)).toEqual(picked.map((c) => keyOf(c.note.namespace, c.sha)).sort());
    const tooMany = fx.commits.slice(0, MAX_COMMITS + 1).map((c) => c.sha).join(',');
    const r = await one(`commits=${tooMany}`);
    expect(r.status).toBe(400);
    expect(typeof r.body.error).toBe('string');
  });

  it('words with filters: ranked best first across pages, each hit naming the lines that hold the words', async () => {
    const { hits, pages } = await searchAll(s.url, SEARCH, [['q', 'merging'], ['field', 'Code-Review~+2'], ['limit', '100']]);
    expect(hitKeys(hits)).toEqual(refKeys((c) => c.note.namespace === 'review' && hasField(c.note.fields, 'Code-Review', '~', '+2')));
    expect(pages.length).toBeGreaterThan(1);
    for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
    const bySha = new Map(fx.commits.map((c) => [c.sha, c]));
    for (const h of hits.slice(0, 50)) expect(h.lines).toEqual([{ n: 1, text: linesOf(bySha.get(h.object)!.note.text)[0] }]);
  });
});

describe('literal', () => {
  it('finds message ids and URLs whole: exactly their note, with the line that holds them', async () => {
    const withId = fx.commits.filter((c) => c.note.messageId).filter((_, i) => i % 97 === 1).slice(0, 6);
    const withUrl = fx.commits.filter((c) => c.note.url).filter((_, i) => i % 101 === 5).slice(0, 6);
    expect(new Set(withId.map((c) => c.note.namespace))).toEqual(new Set(['review', 'perf']));
    expect(new Set(withUrl.map((c) => c.note.namespace))).toEqual(new Set(['review', 'ci']));
    for (const [c, text] of [...withId.map((c) => [c, c.note.messageId!] as const), ...withUrl.map((c) => [c, c.note.url!] as const)]) {
      const hits = await all([['mode', 'literal'], ['q', text]]);
      expect(hitKeys(hits), text).toEqual([keyOf(c.note.namespace, c.sha)]);
      const lines = linesOf(c.note.text);
      const n = lines.findIndex((l) => l.includes(text)) + 1;
      expect(hits[0]!.lines).toEqual([{ n, text: lines[n - 1]!.slice(0, 500) }]);
      expect(hits[0]!.snippet).toBe(lines[n - 1]!.slice(0, 200));
      expect(hits[0]!.score).toBe(0);
    }
  });

  it('a piece of a URL across token boundaries: literal finds it where words search does not', async () => {
    const piece = 'example.com/app/runs/0001';
    const want = refKeys((c) => c.note.text.includes(piece));
    expect(want.length).toBeGreaterThanOrEqual(2);
    expect(hitKeys(await all([['mode', 'literal'], ['q', piece]]))).toEqual(want);
    const words = await one(`q=${encodeURIComponent(piece)}&limit=200`);
    expect(words.status).toBe(200);
    expect(hitKeys(words.body.data!)).not.toEqual(want);
  });

  it('is case-sensitive, takes short texts, and reads % and _ as themselves', async () => {
    expect(await all([['mode', 'literal'], ['q', 'EXAMPLE.COM/app']])).toEqual([]);
    expect(hitKeys(await all([['mode', 'literal'], ['q', '=f']]))).toEqual(refKeys((c) => c.note.text.includes('=f')));
    expect(hitKeys(await all([['mode', 'literal'], ['q', '"run":"r-9"']]))).toEqual(refKeys((c) => c.note.text.includes('"run":"r-9"')));
    // As LIKE patterns these would match r-17 and any "=1…": as literals they match nothing.
    expect(await all([['mode', 'literal'], ['q', 'r_17']])).toEqual([]);
    expect(await all([['mode', 'literal'], ['q', '=1%']])).toEqual([]);
    expect((await one('mode=literal')).status).toBe(400);
    expect((await one('mode=literal&q=')).status).toBe(400);
  });
});

describe('regex', () => {
  /** The notes with a line matching `re` (grep semantics), by JavaScript's engine. */
  const grep = (re: RegExp) => refKeys((c) => linesOf(c.note.text).some((l) => re.test(l)));

  it('matches per line like JavaScript RegExp on the fixture (anchors, groups, classes, counts, (?i))', async () => {
    const cases: [string, RegExp][] = [
      ['^Code-Review\\+2: (Alice|Bob)', /^Code-Review\+2: (Alice|Bob)/],
      ['(?i)^reviewed-by: .*@EXAMPLE\\.NET>$', /^reviewed-by: .*@EXAMPLE\.NET>$/i],
      ['"value":\\d{3}\\.\\d,', /"value":\d{3}\.\d,/],
      ['^closes-issues=(1|2)\\d?,', /^closes-issues=(1|2)\d?,/],
      ['^duration_ms=[89]\\d{3}$', /^duration_ms=[89]\d{3}$/],
      ['"tags":\\["[a-z]+64"', /"tags":\["[a-z]+64"/],
    ];
    for (const [pattern, re] of cases) {
      const want = grep(re);
      expect(want.length, pattern).toBeGreaterThan(0);
      expect(hitKeys(await all([['mode', 'regex'], ['q', pattern]])), pattern).toEqual(want);
    }
  });

  it('names the matching lines, pages by cursor (a page may hold fewer hits than asked), and filters apply', async () => {
    const re = /^Signed-off-by: (Carol|Erin) /;
    const { hits, pages } = await searchAll(s.url, SEARCH, [['mode', 'regex'], ['q', '^Signed-off-by: (Carol|Erin) '], ['limit', '50']]);
    expect(hitKeys(hits)).toEqual(grep(re));
    expect(pages.every((p) => p.data.length <= 50)).toBe(true);
    const bySha = new Map(fx.commits.map((c) => [c.sha, c]));
    for (const h of hits) {
      const lines = linesOf(bySha.get(h.object)!.note.text);
      expect(h.lines).toEqual(lines.flatMap((text, i) => (re.test(text) ? [{ n: i + 1, text }] : [])));
    }
    const filtered = await all([['mode', 'regex'], ['q', '^build=failed$'], ['field', 'platform=arm64']]);
    expect(hitKeys(filtered)).toEqual(refKeys((c) => c.note.text.includes('build=failed\n') && hasField(c.note.fields, 'platform', '=', 'arm64')));
  });

  it('a pattern that backtracks in other engines finishes and answers over every note', async () => {
    const hits = await all([['mode', 'regex'], ['q', '(a|aa)*b']]);
    expect(hitKeys(hits)).toEqual(grep(/(a|aa)*b/));
  });
});
