// Search conformance: one corpus indexed on SQLite (FTS5) and on PostgreSQL, every operator of
// the query language, identical hits in identical order on both. The corpus mixes prose, code
// identifiers, punctuation, hyphens, dots, underscores, diacritics and other scripts, and notes
// built so that ranking ties and phrase repetitions matter.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEmptyDatabase } from '../../helpers/engines.js';
import { SqlNotesIndex } from '../../../src/store/notes-sql.js';
import { parseQuery } from '../../../src/notes/query.js';
import type { NotesIndex } from '../../../src/store/notes.js';

const CORPUS: [namespace: string, content: string][] = [
  ['commits', 'Fix parse_config when the file is empty'],
  ['commits', 'parseConfig was renamed to parse_config in v2.1'],
  ['commits', 'Call foo.bar() before foo.baz(); see foo/bar.ts'],
  ['commits', 'Bump version to v2.1.3 (was v2.0)'],
  ['commits', 'snake_case and CamelCase and kebab-case identifiers'],
  ['commits', 'The CamelCaseParser handles camelcase input'],
  ['commits', 'deploy to prod, deploy to staging, deploy again'],
  ['commits', 'Deploy: production rollout postponed'],
  ['commits', 'dry-run of the release train'],
  ['commits', 'The release train leaves on Friday; dry run first'],
  ['commits', 'Café crème, naïve résumé — diacritics everywhere'],
  ['commits', 'cafe creme naive resume without diacritics'],
  ['commits', 'Straße und Größe: ß stays ß'],
  ['commits', '日本語のノート と English words'],
  ['commits', 'Русский текст: исправлена ошибка в parse_config'],
  ['commits', 'emoji 🙂 between words and ½ fractions'],
  ['commits', 'e-mail ana@example.com about https://example.com/a?b=c'],
  ['commits', 'a a a b a'],
  ['commits', 'a b'],
  ['commits', 'flaky test in parser'],
  ['commits', 'broken build, flaky network'],
  ['commits', 'nothing to see here'],
  ['commits', 'C++ and C# and F# compile; 0x1F and 1e5 and 3.14159'],
  ['commits', 'tabs\tand\nnewlines\r\nand\u00a0no-break spaces'],
  ['commits', 'or else: the word or as a word'],
  ['reviews', 'LGTM, but parse_config needs a test'],
  ['reviews', 'deploy blocked: release train is late'],
  ['reviews', 'foo.bar is deprecated; use foo.qux'],
  ['reviews', 'same text twice'],
  ['reviews', 'same text twice'],
  ['refs/x', 'nested namespace mentions v2.1 and parse_config'],
];

const QUERIES = [
  // bare words, identifiers and code as typed
  'parse_config', 'parse config', 'parseConfig', 'parseconfig', 'foo.bar', 'foo.bar()', 'foo/bar.ts', 'v2.1', 'v2', 'snake_case',
  'CamelCase', 'camelcase', 'kebab-case', 'C++', 'F#', '0x1F', '1e5', '3.14159', 'ana@example.com', 'https://example.com/a?b=c',
  // case and diacritics
  'DEPLOY', 'café', 'cafe', 'naïve', 'RÉSUMÉ', 'straße', 'größe', 'ss', 'русский', 'ИСПРАВЛЕНА', '日本語のノート', 'English',
  // phrases
  '"release train"', '"train release"', '"dry run"', '"dry-run"', '"a a"', '"a b"', '"a a a b"', '"b a"', '"same text twice"', '"foo bar"',
  '"parse config"', '"to prod, deploy"', '"unterminated phrase',
  // or
  'flaky or broken', 'flaky OR broken', 'parser or build', 'test or network or prod', 'or else', '"or"', 'word or',
  // exclusion
  'deploy -staging', 'deploy -"release train"', 'release -dry', 'parse_config -reviews -"needs a test"', 'a -b', 'flaky -"flaky test"',
  'foo.bar -foo.qux', 'deploy -deploy',
  // combinations
  'deploy or release -train', '"release train" or "dry run" -friday', 'v2.1 parse_config', 'same twice', 'a', 'b', 'text',
  // terms FTS5 reads as no tokens next to ones it reads
  'emoji 🙂', '½', 'nothing ́',
];

let dbs: { dispose(): Promise<void> }[] = [];
const indexes: Record<'sqlite' | 'postgres', NotesIndex> = {} as Record<'sqlite' | 'postgres', NotesIndex>;
const target = (i: number) => i.toString(16).padStart(40, '0');

beforeAll(async () => {
  for (const engine of ['sqlite', 'postgres'] as const) {
    const o = await openEmptyDatabase(engine);
    dbs.push(o);
    const index = await SqlNotesIndex.open(o.db);
    const byNs = new Map<string, { target: string; object_type: string; blob: string; content: string }[]>();
    CORPUS.forEach(([ns, content], i) => {
      const list = byNs.get(ns) ?? [];
      list.push({ target: target(i), object_type: i % 7 === 3 ? 'tag' : 'commit', blob: `blob${i}`, content });
      byNs.set(ns, list);
    });
    for (const [ns, notes] of byNs) await index.apply('repo', ns, { from: null, to: `tip-${ns}` }, notes, []);
    indexes[engine] = index;
  }
});
afterAll(async () => {
  for (const o of dbs) await o.dispose();
  dbs = [];
});

const hits = async (engine: 'sqlite' | 'postgres', q: string, opts: { namespace?: string; commitsOnly?: boolean } = {}) =>
  (await indexes[engine].search('repo', parseQuery(q), { limit: 200, ...opts })).map((h) => `${h.namespace} ${parseInt(h.target, 16)} ${h.snippet}`);

describe('notes search on SQLite and PostgreSQL', () => {
  it.each(QUERIES)('%s: the same hits, order and snippets', async (q) => {
    const sqlite = await hits('sqlite', q);
    expect(await hits('postgres', q)).toEqual(sqlite);
  });

  it.each(['a', '"a a"', '"a b"', '"a a a b"', 'deploy', '"same text twice"', 'parse_config or "a a"', 'text twice'])(
    '%s: the same scores, term frequencies counted alike (adjacent and overlapping occurrences)',
    async (q) => {
      const scores = async (engine: 'sqlite' | 'postgres') => (await indexes[engine].search('repo', parseQuery(q), { limit: 200 })).map((h) => h.score);
      const sqlite = await scores('sqlite');
      const pg = await scores('postgres');
      expect(pg).toHaveLength(sqlite.length);
      pg.forEach((s, i) => expect(s).toBeCloseTo(sqlite[i]!, 9));
    },
  );

  it('with namespace and object type filters too', async () => {
    for (const q of ['deploy', 'parse_config', 'same text', 'foo.bar or v2.1']) {
      for (const opts of [{ namespace: 'reviews' }, { namespace: 'refs/x' }, { commitsOnly: true }]) {
        expect(await hits('postgres', q, opts)).toEqual(await hits('sqlite', q, opts));
      }
    }
  });

  it('matches identifiers as typed: the pieces in order, not a looser or stemmed match', async () => {
    const ids = async (q: string) => (await hits('postgres', q)).map((h) => Number(h.split(' ')[1]));
    expect((await ids('parse_config')).sort((x, y) => x - y)).toEqual([0, 1, 14, 25, 30]);
    expect(await ids('parseConfig')).toEqual([1]);
    expect((await ids('foo.bar')).sort((x, y) => x - y)).toEqual([2, 27]);
    expect((await ids('v2.1')).sort((x, y) => x - y)).toEqual([1, 3, 30]);
    expect((await ids('CamelCase')).sort((x, y) => x - y)).toEqual([4, 5]); // case folds; CamelCaseParser is another word
    expect(await ids('"train release"')).toEqual([]);
    expect(await ids('cafe')).toEqual(expect.arrayContaining([10, 11]));
    expect(await ids('deploy -deploy')).toEqual([]);
  });

  it('every word of the corpus as a query: the same hits on both', async () => {
    const searchable = (w: string) => {
      try {
        return parseQuery(w) !== undefined;
      } catch {
        return false;
      }
    };
    const words = new Set(CORPUS.flatMap(([, c]) => c.split(/\s+/)).filter(searchable));
    expect(words.size).toBeGreaterThan(100);
    for (const w of words) expect(await hits('postgres', w), w).toEqual(await hits('sqlite', w));
  });
});

describe('notes search on SQLite and PostgreSQL, generated corpus', () => {
  it('200 generated notes and 300 generated queries: the same hits in the same order', async () => {
    let seed = 12345;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const pool = ['alpha', 'Beta', 'gamma_delta', 'eps.ilon', 'v1.2', 'zeta-eta', 'ÉTÉ', 'été', 'über', 'naïve', 'x', 'y', 'or', 'fooBar', 'foo_bar', '日本', 'ж'];
    const seps = [' ', '  ', ', ', '.', '-', '_', '/', '\n', ' (', ') ', ': '];
    const pick = <T>(a: T[]) => a[rand(a.length)]!;
    const notes = Array.from({ length: 200 }, (_, i) => ({
      target: target(i),
      object_type: 'commit',
      blob: `g${i}`,
      content: Array.from({ length: 1 + rand(25) }, () => pick(pool) + pick(seps)).join(''),
    }));
    const term = () => {
      const r = rand(4);
      const w = () => pick(pool);
      if (r === 0) return `"${w()} ${w()}"`;
      if (r === 1) return `-${w()}`;
      return w();
    };
    const queries = Array.from({ length: 300 }, () => Array.from({ length: 1 + rand(4) }, () => (rand(5) === 0 ? 'or' : term())).join(' '));
    const pair: { dispose(): Promise<void> }[] = [];
    try {
      const idx: NotesIndex[] = [];
      for (const engine of ['sqlite', 'postgres'] as const) {
        const o = await openEmptyDatabase(engine);
        pair.push(o);
        const index = await SqlNotesIndex.open(o.db);
        await index.apply('g', 'commits', { from: null, to: 't' }, notes, []);
        idx.push(index);
      }
      let compared = 0;
      for (const q of queries) {
        let query;
        try {
          query = parseQuery(q);
        } catch {
          continue;
        }
        const [a, b] = await Promise.all(idx.map(async (i) => (await i.search('g', query, { limit: 200 })).map((h) => `${parseInt(h.target, 16)} ${h.snippet}`)));
        expect(b, q).toEqual(a);
        compared++;
      }
      expect(compared).toBeGreaterThan(200);
    } finally {
      for (const o of pair) await o.dispose();
    }
  }, 60_000);
});
