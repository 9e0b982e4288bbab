// The notes search's parameters (issue 36): modes and their matches, field filters, dates,
// commits, count_by, and the canonical query a cursor is tied to; every refusal a clear 400 text.
import { describe, expect, it } from 'vitest';
import { parseCommits, parseCountBy, parseFieldFilter, parseSearch, parseTime, SearchParamError } from '../../../../daemon/services/marketplace/notes/search-params.js';
import { topGroups } from '../../../../daemon/services/marketplace/notes/search.js';

const refused = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(SearchParamError);
    return (err as Error).message;
  }
  throw new Error('not refused');
};
const SHA1 = 'a'.repeat(40);
const SHA256 = 'B'.repeat(64);

describe('modes', () => {
  it('words: a query is parsed; none (or blanks) means every note', () => {
    expect(parseSearch({ q: 'deploy -staging' }).match).toEqual({ kind: 'words', query: { groups: [[['deploy']]], excluded: [['staging']] } });
    expect(parseSearch({}).match).toEqual({ kind: 'all' });
    expect(parseSearch({ q: '  ' }).match).toEqual({ kind: 'all' });
    expect(refused(() => parseSearch({ q: '-only' }))).toMatch(/not excluded/);
  });

  it('literal: the text as given; empty is refused', () => {
    expect(parseSearch({ q: ' <a@b> ', mode: 'literal' }).match).toEqual({ kind: 'literal', text: ' <a@b> ' });
    expect(refused(() => parseSearch({ mode: 'literal' }))).toBe('a literal search needs a non-empty q');
    expect(refused(() => parseSearch({ q: 'x'.repeat(1001), mode: 'literal' }))).toMatch(/longer than 1000/);
  });

  it('regex: compiled, its required literals narrow the index; refusals name the construct', () => {
    const r = parseSearch({ q: 'Change-Id: I[0-9a-f]+', mode: 'regex' });
    expect(r.match.kind).toBe('literals');
    expect(r.regex).toBeDefined();
    expect(r.caseInsensitive).toBe(false);
    expect(parseSearch({ q: '(?i)deploy', mode: 'regex' }).caseInsensitive).toBe(true);
    expect(refused(() => parseSearch({ mode: 'regex', q: '' }))).toBe('a regex search needs a non-empty q');
    expect(refused(() => parseSearch({ mode: 'regex', q: '(a)\\1' }))).toMatch(/^regex: /);
    expect(refused(() => parseSearch({ mode: 'regex', q: '(?=a)b' }))).toMatch(/^regex: /);
  });

  it('an unknown mode is refused', () => {
    expect(refused(() => parseSearch({ mode: 'fuzzy' }))).toBe('mode must be one of words, literal, regex');
  });
});

describe('filters', () => {
  it('field filters: the first ~ or = splits; at most 20', () => {
    expect(parseFieldFilter('Reviewed-by~alice')).toEqual({ key: 'Reviewed-by', op: '~', value: 'alice' });
    expect(parseFieldFilter('url=https://x/?a=b')).toEqual({ key: 'url', op: '=', value: 'https://x/?a=b' });
    expect(parseFieldFilter('k~a=b')).toEqual({ key: 'k', op: '~', value: 'a=b' });
    expect(parseFieldFilter('k=')).toEqual({ key: 'k', op: '=', value: '' });
    expect(refused(() => parseFieldFilter('novalue'))).toMatch(/must be KEY~text \(contains\) or KEY=value \(equals\)/);
    expect(refused(() => parseFieldFilter('=x'))).toMatch(/names no key/);
    expect(parseSearch({ field: Array.from({ length: 20 }, (_, i) => `k${i}=v`) }).filter.fields).toHaveLength(20);
    expect(refused(() => parseSearch({ field: Array.from({ length: 21 }, (_, i) => `k${i}=v`) }))).toBe('at most 20 field filters');
  });

  it('times: RFC 3339 or a date; impossible dates and other forms are refused', () => {
    expect(parseTime('since', '2026-11-29')).toBe(Date.UTC(2026, 10, 29));
    expect(parseTime('since', '2026-11-29T13:00:00Z')).toBe(Date.UTC(2026, 10, 29, 13));
    expect(parseTime('since', '2026-11-29t13:00:00.5+01:00')).toBe(Date.UTC(2026, 10, 29, 12, 0, 0, 500));
    expect(parseTime('until', '2024-02-29')).toBe(Date.UTC(2024, 1, 29));
    for (const bad of ['2026-02-30', '2025-02-29', '2026-13-01', '2026-11-29T25:00:00Z', 'yesterday', '1732880000', '2026-11-29T13:00:00', 'Nov 29 2026']) {
      expect(refused(() => parseTime('since', bad)), bad).toMatch(/^since must be an RFC 3339 time/);
    }
    const r = parseSearch({ since: '2026-01-01', until: '2026-02-01' });
    expect(r.filter).toEqual({ since: Date.UTC(2026, 0, 1), until: Date.UTC(2026, 1, 1) });
  });

  it('commits: full ids of either length, lower-cased, first of duplicates kept, at most 200', () => {
    expect(parseCommits(` ${SHA1},${SHA256},${SHA1},`)).toEqual([SHA1, SHA256.toLowerCase()]);
    expect(refused(() => parseCommits('abc123'))).toMatch(/"abc123" is not a full object id/);
    expect(refused(() => parseCommits('g'.repeat(40)))).toMatch(/not a full object id/);
    const ids = (n: number) => Array.from({ length: n }, (_, i) => i.toString(16).padStart(40, '0')).join(',');
    expect(parseCommits(ids(200))).toHaveLength(200);
    expect(refused(() => parseCommits(ids(201)))).toBe('commits lists more than 200 object ids');
    expect(parseSearch({ commits: '' }).matchesNothing).toBe(true);
    expect(parseSearch({ commits: SHA1 }).matchesNothing).toBe(false);
  });

  it('namespace, author, commits_only', () => {
    expect(parseSearch({ namespace: 'ci', author: ' Ana ', commits_only: true }).filter).toEqual({ namespace: 'ci', author: 'Ana', commitsOnly: true });
    expect(refused(() => parseSearch({ namespace: 'bad..name' }))).toMatch(/^namespace: /);
    expect(refused(() => parseSearch({ author: ' ' }))).toBe('author is empty');
  });
});

describe('count_by, limit, cursor', () => {
  it('count_by: namespace, note_author or field:KEY; not with a cursor', () => {
    expect(parseCountBy('namespace')).toBe('namespace');
    expect(parseCountBy('note_author')).toBe('note_author');
    expect(parseCountBy('field:Code-Review')).toEqual({ field: 'Code-Review' });
    for (const bad of ['field:', 'author', 'fields:x']) expect(refused(() => parseCountBy(bad))).toBe('count_by must be namespace, note_author or field:KEY');
    expect(refused(() => parseSearch({ count_by: 'namespace', cursor: 'x' }))).toMatch(/no cursor/);
  });

  it('limit: default 50, capped at 200', () => {
    expect(parseSearch({}).limit).toBe(50);
    expect(parseSearch({ limit: 7 }).limit).toBe(7);
    expect(parseSearch({ limit: 100000 }).limit).toBe(200);
    expect(parseSearch({ limit: 100000, content: true }).limit).toBe(50);
  });

  it('the canonical query: without cursor and limit, filters sorted, keys and author in one case', () => {
    const a = parseSearch({ q: 'x', field: ['Reviewed-by~Al', 'ci=ok'], author: 'Ana', limit: 5, cursor: 'c' }).canonical;
    const b = parseSearch({ q: ' x ', field: ['CI=ok', 'reviewed-by~Al'], author: 'ana' }).canonical;
    expect(a).toEqual(b);
    expect(parseSearch({ q: 'x', field: ['ci=OK'] }).canonical).not.toEqual(parseSearch({ q: 'x', field: ['ci=ok'] }).canonical);
    expect(parseSearch({ q: 'x', mode: 'literal' }).canonical).not.toEqual(parseSearch({ q: 'x' }).canonical);
    expect(parseSearch({ content: true }).canonical).not.toEqual(parseSearch({}).canonical);
  });
});

describe('count groups', () => {
  it('count descending, then key in byte order, at most 1000 with truncated', () => {
    expect(topGroups(new Map([['b', 2], ['a', 2], ['c', 5], ['Z', 2]]), false)).toEqual({
      groups: [
        { key: 'c', count: 5 },
        { key: 'Z', count: 2 },
        { key: 'a', count: 2 },
        { key: 'b', count: 2 },
      ],
      truncated: false,
    });
    const many = new Map(Array.from({ length: 1001 }, (_, i) => [`k${i}`, i] as [string, number]));
    const top = topGroups(many, false);
    expect(top.groups).toHaveLength(1000);
    expect(top.truncated).toBe(true);
    expect(top.groups[0]).toEqual({ key: 'k1000', count: 1000 });
  });
});
