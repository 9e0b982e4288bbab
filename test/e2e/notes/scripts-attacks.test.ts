// Issue 36, attacks on notes search for scripts, against a running marketplace: cursors forged or
// taken from another query (400, and nothing changed), a field filter over 10,000 notes whose keys
// are all distinct, a note of the maximum size full of trailers (fields bounded, search still
// right), regular expressions that backtrack elsewhere (answer), that run over the step budget
// (400 with the error body), and constructs refused by name (backreferences, lookaround).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNotesServer, gitUrl, type NotesServer } from '../../helpers/notes-server.js';
import { tempDir } from '../../helpers/tmp.js';
import { MAX_NOTE_BYTES } from '../../../src/schemas/notes.js';
import {
  buildNotesFixture,
  fixtureGit,
  getJson,
  hostFixture,
  pushNotesFixture,
  searchAll,
  waitForFixtureIndexed,
  type ApiHit,
  type NotesFixture,
  type Params,
  type SearchPage,
} from '../../helpers/notes-fixture.js';

let s: NotesServer;
let work: { path: string; remove(): void };
/** 300 notes in the three shapes, and the big notes added below (ana/attack). */
let fx: NotesFixture;
/** 10,000 notes whose keys are all distinct (ana/distinct). */
let keys: NotesFixture;

const pad5 = (i: number): string => String(i).padStart(5, '0');
const search = (repo: string, params: Params) => getJson<SearchPage & { error?: string }>(`${s.url}/api/git/${repo}/notes/search?${new URLSearchParams(params).toString()}`);
const hitKeys = (hits: ApiHit[]): string[] => hits.map((h) => `${h.namespace} ${h.object}`).sort();

/** The maximum-size note: `Tr-NNNNN: value-NNNNN` lines, padded to exactly MAX_NOTE_BYTES. */
function trailerNote(): { text: string; lines: string[] } {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; ; i++) {
    const line = `Tr-${pad5(i)}: value-${pad5(i)}`;
    if (size + line.length + 1 > MAX_NOTE_BYTES - 40) break;
    lines.push(line);
    size += line.length + 1;
  }
  // The last line takes what is left, so the note is exactly the limit.
  lines.push(`Tr-last: ${'z'.repeat(MAX_NOTE_BYTES - size - 'Tr-last: '.length - 1)}`);
  const text = lines.join('\n') + '\n';
  return { text, lines };
}
const big = trailerNote();

beforeAll(async () => {
  s = await startNotesServer();
  work = tempDir('mkt-notes-attacks-');
  await s.admin.createRepo('ana/attack', { private: false, objectFormat: 'sha1' });
  fx = await buildNotesFixture(work.path, { commits: 300, name: 'attack' });
  keys = await buildNotesFixture(work.path, {
    name: 'distinct',
    makeNote: (i) => ({
      namespace: 'keys',
      text: `key-${pad5(i)}=value-${pad5(i)}\nX-Trailer-${pad5(i)}: t${i}\n`,
      fields: [
        { key: `key-${pad5(i)}`, value: `value-${pad5(i)}` },
        { key: `X-Trailer-${pad5(i)}`, value: `t${i}` },
      ],
    }),
  });
  // Beside the fixture's notes: the maximum-size note, a note that is one long line of `a` and
  // one that ends in `b` (for the patterns that backtrack elsewhere).
  const file = join(work.path, 'note.txt');
  writeFileSync(file, big.text);
  expect(Buffer.byteLength(big.text)).toBe(MAX_NOTE_BYTES);
  await fixtureGit(fx.dir, ['notes', '--ref', 'big', 'add', '-F', file, fx.commits[0]!.sha]);
  writeFileSync(file, `${'a'.repeat(MAX_NOTE_BYTES - 100)}\n`);
  await fixtureGit(fx.dir, ['notes', '--ref', 'aaa', 'add', '-F', file, fx.commits[1]!.sha]);
  await fixtureGit(fx.dir, ['notes', '--ref', 'aaa', 'add', '-m', 'aaaab', fx.commits[2]!.sha]);
  await pushNotesFixture(fx, gitUrl(s, 'ana/attack', s.tokens.anaPush));
  await fixtureGit(fx.dir, ['push', '-q', gitUrl(s, 'ana/attack', s.tokens.anaPush), 'refs/notes/big', 'refs/notes/aaa']);
  await waitForFixtureIndexed(s.url, 'ana/attack', fx);
  await hostFixture(s, 'ana/distinct', keys);
});

afterAll(async () => {
  await s?.close();
  work?.remove();
});

describe('cursors', () => {
  const b64 = (v: unknown): string => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

  it('a forged cursor, or one from another query, repository or mode, is refused with 400; nothing changes', async () => {
    const q: Params = [['q', 'merging'], ['limit', '5']];
    const first = await search('ana/attack', q);
    expect(first.status).toBe(200);
    const cursor = first.body.next_cursor!;
    expect(typeof cursor).toBe('string');
    const second = await search('ana/attack', [...q, ['cursor', cursor]]);
    expect(second.status).toBe(200);
    const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { h: string };

    const refusals: [string, Params, string][] = [
      ['garbage', [...q, ['cursor', 'not a cursor at all']], 'ana/attack'],
      ['not JSON', [...q, ['cursor', b64('{{{')]], 'ana/attack'],
      ['wrong version', [...q, ['cursor', b64({ ...decoded, v: 2 })]], 'ana/attack'],
      ['wrong types', [...q, ['cursor', b64({ ...decoded, i: 'x' })]], 'ana/attack'],
      ['an array', [...q, ['cursor', b64([1, 2])]], 'ana/attack'],
      ['another hash', [...q, ['cursor', b64({ ...decoded, h: '0123456789abcdef' })]], 'ana/attack'],
      ['another query', [['q', 'checks'], ['limit', '5'], ['cursor', cursor]], 'ana/attack'],
      ['another filter', [...q, ['namespace', 'review'], ['cursor', cursor]], 'ana/attack'],
      ['another mode', [['q', 'merging'], ['mode', 'literal'], ['limit', '5'], ['cursor', cursor]], 'ana/attack'],
      ['another repository', [...q, ['cursor', cursor]], 'ana/distinct'],
      ['very long', [...q, ['cursor', 'A'.repeat(8_000)]], 'ana/attack'],
    ];
    for (const [what, params, repo] of refusals) {
      const r = await search(repo, params);
      expect(r.status, what).toBe(400);
      expect(r.body.error, what).toMatch(/cursor/);
    }
    // The cursor still positions its own query exactly as before, whatever the limit.
    expect(await search('ana/attack', [...q, ['cursor', cursor]])).toEqual(second);
    const wider = await search('ana/attack', [['q', 'merging'], ['limit', '10'], ['cursor', cursor]]);
    expect(wider.body.data.slice(0, 5)).toEqual(second.body.data);
  });
});

describe('a field filter over 10,000 distinct keys', () => {
  it('finds exactly the note carrying the key, ignoring case in the key', async () => {
    for (const i of [0, 4242, 9999]) {
      const want = [`keys ${keys.commits[i]!.sha}`];
      expect(hitKeys((await search('ana/distinct', [['field', `key-${pad5(i)}=value-${pad5(i)}`]])).body.data)).toEqual(want);
      expect(hitKeys((await search('ana/distinct', [['field', `KEY-${pad5(i)}~VALUE`]])).body.data)).toEqual(want);
      expect(hitKeys((await search('ana/distinct', [['field', `x-trailer-${pad5(i)}=t${i}`]])).body.data)).toEqual(want);
    }
    expect((await search('ana/distinct', [['field', 'key-04242=value-04243']])).body.data).toEqual([]);
    expect((await search('ana/distinct', [['field', 'key-10000~value']])).body.data).toEqual([]);
    const group = await getJson<{ groups: { key: string; count: number }[] }>(`${s.url}/api/git/ana/distinct/notes/search?count_by=field:key-00007`);
    expect(group.body.groups).toEqual([{ key: 'value-00007', count: 1 }]);
  });

  it('twenty distinct keys ANDed, and many such searches at once: correct answers, and the server keeps answering', async () => {
    const twenty: Params = Array.from({ length: 20 }, (_, k) => ['field', `key-${pad5(k * 500)}~value`] as [string, string]);
    const together = (await search('ana/distinct', twenty)).body;
    expect(together.data).toEqual([]);
    expect(together.next_cursor).toBeNull();
    const many = Array.from({ length: 12 }, (_, k) => search('ana/distinct', [['field', `key-${pad5(k * 800 + 3)}~value`], ['field', `x-trailer-${pad5(k * 800 + 3)}~t`]]));
    const beside = getJson<{ data: { name: string; notes: number }[] }>(`${s.url}/api/git/ana/distinct/notes`);
    const answers = await Promise.all(many);
    answers.forEach((a, k) => expect(hitKeys(a.body.data)).toEqual([`keys ${keys.commits[k * 800 + 3]!.sha}`]));
    expect((await beside).body.data).toEqual([expect.objectContaining({ name: 'keys', notes: 10_000 })]);
    // Every note, paged by cursor, once.
    const { hits } = await searchAll(s.url, '/api/git/ana/distinct/notes/search', [['limit', '200']]);
    expect(hitKeys(hits)).toEqual(keys.commits.map((c) => `keys ${c.sha}`).sort());
  });
});

describe('a note of the maximum size full of trailers', () => {
  it('carries its first MAX_FIELDS fields only, and searches over its whole text stay right', async () => {
    const r = await search('ana/attack', [['namespace', 'big']]);
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(1);
    const hit = r.body.data[0]!;
    // The contract's bound (src/notes/fields.ts MAX_FIELDS = 1000): the first 1000 trailers, in order.
    const want = Object.fromEntries(big.lines.slice(0, 1000).map((l) => [l.slice(0, 8), [l.slice(10)]]));
    expect(hit.fields).toEqual(want);
    expect(hit.snippet.length).toBeLessThanOrEqual(200);

    const target = `big ${fx.commits[0]!.sha}`;
    expect(hitKeys((await search('ana/attack', [['field', 'Tr-00500=value-00500']])).body.data)).toEqual([target]);
    // Past the bound a trailer is text, not a field: a filter does not see it, a literal does.
    expect((await search('ana/attack', [['field', 'Tr-40000=value-40000']])).body.data).toEqual([]);
    const lit = await search('ana/attack', [['mode', 'literal'], ['q', 'Tr-40000: value-40000']]);
    expect(hitKeys(lit.body.data)).toEqual([target]);
    expect(lit.body.data[0]!.lines).toEqual([{ n: 40_001, text: 'Tr-40000: value-40000' }]);
    const last = big.lines.length;
    const tail = await search('ana/attack', [['mode', 'literal'], ['q', 'Tr-last: zzz']]);
    expect(tail.body.data[0]!.lines).toEqual([{ n: last, text: big.lines[last - 1]!.slice(0, 500) }]);
    // Many matching lines: at most 20 named.
    const re = await search('ana/attack', [['mode', 'regex'], ['q', '^Tr-4\\d{4}: '], ['namespace', 'big']]);
    expect(re.status).toBe(200);
    expect(re.body.data[0]!.lines).toEqual(Array.from({ length: 20 }, (_, k) => ({ n: 40_001 + k, text: big.lines[40_000 + k] })));
  });
});

describe('regular expressions', () => {
  it('a pattern that backtracks in other engines, over a line of a million `a`, finishes and answers', async () => {
    const r = await search('ana/attack', [['mode', 'regex'], ['q', '(a|aa)*b'], ['namespace', 'aaa']]);
    expect(r.status).toBe(200);
    expect(hitKeys(r.body.data)).toEqual([`aaa ${fx.commits[2]!.sha}`]);
    const plain = await search('ana/attack', [['mode', 'regex'], ['q', '^(a|aa)+$'], ['namespace', 'aaa']]);
    expect(plain.status).toBe(200);
    expect(hitKeys(plain.body.data)).toEqual([`aaa ${fx.commits[1]!.sha}`]);
  });

  it('one over the step budget answers 400 with the error body, and the server answers the next search', async () => {
    const r = await search('ana/attack', [['mode', 'regex'], ['q', '[a-z]{1,100}b'], ['namespace', 'aaa']]);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'the regular expression ran over its budget of 50000000 steps; narrow the search with a literal or a filter' });
    expect((await search('ana/attack', [['mode', 'literal'], ['q', 'aaaab']])).status).toBe(200);
  });

  it('refuses backreferences, lookaround, long patterns and large counts with 400 naming the construct', async () => {
    const refusals: [string, RegExp][] = [
      ['(a)\\1', /backreference/],
      ['(?<n>a)\\k<n>', /backreference/],
      ['foo(?=bar)', /lookahead/],
      ['foo(?!bar)', /lookahead/],
      ['(?<=a)b', /lookbehind/],
      ['(?<!a)b', /lookbehind/],
      ['a{1000}', /repetition/],
      ['x'.repeat(1001), /longer than 1000/],
      ['(', /invalid/],
    ];
    for (const [pattern, why] of refusals) {
      const r = await search('ana/attack', [['mode', 'regex'], ['q', pattern]]);
      expect(r.status, pattern).toBe(400);
      expect(r.body.error, pattern).toMatch(why);
    }
  });
});
