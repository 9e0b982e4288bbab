// A search hit built from an index row (issue 36): matched lines as grep numbers them (CRLF,
// final newline), at most 20 and each cut to 500 characters; words lines by the index's tokens;
// the snippet outside words mode; note_at as RFC 3339; content only when asked for.
import { describe, expect, it } from 'vitest';
import { buildHit, cutChars, findLines, wordLines } from '../../../../daemon/services/marketplace/notes/search-hits.js';
import { parseQuery } from '../../../../src/notes/query.js';
import type { IndexRow } from '../../../../src/store/notes.js';

const row = (content: string, over: Partial<IndexRow> = {}): IndexRow => ({
  id: 7,
  namespace: 'ci',
  target: 'a'.repeat(40),
  object_type: 'commit',
  score: 3.5,
  snippet: 'the [deploy]',
  note_author: 'Ana',
  note_email: 'ana@example.com',
  note_at: Date.UTC(2026, 10, 29, 13, 0, 0, 250),
  commit_subject: 'fix',
  commit_author: 'T <t@example.com>',
  fields: [
    { key: 'Reviewed-by', value: 'x' },
    { key: 'Reviewed-by', value: 'y' },
    { key: '__proto__', value: 'z' },
  ],
  content,
  ...over,
});

describe('lines', () => {
  it('numbers lines from 1, drops CR, ignores the empty line after a final newline', () => {
    expect(findLines('a\r\nb\nab\n', (l) => l.includes('b'))).toEqual([
      { n: 2, text: 'b' },
      { n: 3, text: 'ab' },
    ]);
    expect(findLines('x\n', (l) => l === '')).toEqual([]);
    expect(findLines('', (l) => l === '')).toEqual([{ n: 1, text: '' }]);
    expect(findLines('\n\nx', (l) => l === '')).toEqual([
      { n: 1, text: '' },
      { n: 2, text: '' },
    ]);
  });

  it('at most 20 lines, each cut to 500 characters without splitting a surrogate pair', () => {
    const many = Array.from({ length: 30 }, () => 'hit').join('\n');
    expect(findLines(many, () => true)).toHaveLength(20);
    expect(findLines('y'.repeat(600), () => true)[0]!.text).toHaveLength(500);
    expect(cutChars(`${'x'.repeat(499)}🙂`, 500)).toBe('x'.repeat(499));
  });

  it('words: lines holding a token of a positive phrase, folded as the index folds', () => {
    const find = wordLines(parseQuery('café or "Release train" -staging'));
    expect(find('Cafe opened\nnothing\nthe release\nstaging only\nTRAINS\ntrain')).toEqual([
      { n: 1, text: 'Cafe opened' },
      { n: 3, text: 'the release' },
      { n: 6, text: 'train' },
    ]);
  });
});

describe('buildHit', () => {
  it('words: the index snippet and score; every metadata field; fields keep odd keys as keys', () => {
    const h = buildHit('ana/app', row('the deploy\nok'), [{ n: 1, text: 'the deploy' }], { words: true, content: false });
    expect(h).toEqual({
      repo: 'ana/app',
      namespace: 'ci',
      git_ref: 'refs/notes/ci',
      target: 'a'.repeat(40),
      object: 'a'.repeat(40),
      object_type: 'commit',
      note_author: 'Ana',
      note_email: 'ana@example.com',
      note_at: '2026-11-29T13:00:00.250Z',
      commit_subject: 'fix',
      commit_author: 'T <t@example.com>',
      snippet: 'the [deploy]',
      score: 3.5,
      lines: [{ n: 1, text: 'the deploy' }],
      fields: { 'Reviewed-by': ['x', 'y'], ['__proto__']: ['z'] },
    });
    expect(Object.getPrototypeOf(h.fields)).toBe(Object.prototype);
  });

  it('other modes: score 0, the first matched line or the first line as snippet (200 characters); content when asked', () => {
    const h = buildHit('ana/app', row(`${'w'.repeat(300)}\nsecond`, { note_at: null, snippet: '' }), [], { words: false, content: true });
    expect(h.score).toBe(0);
    expect(h.snippet).toBe('w'.repeat(200));
    expect(h.note_at).toBeNull();
    expect(h.content).toBe(`${'w'.repeat(300)}\nsecond`);
    expect(buildHit('ana/app', row('a\r\nb'), [{ n: 2, text: 'b' }], { words: false, content: false }).snippet).toBe('b');
    expect(buildHit('ana/app', row('first\r\nb'), [], { words: false, content: false }).snippet).toBe('first');
  });
});
