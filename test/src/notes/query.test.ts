// The notes query language and its translation to FTS5: words, phrases, or, exclusion, and
// input that tries to smuggle FTS5 syntax in.
import { describe, expect, it } from 'vitest';
import { QueryError, toFtsMatch } from '../../../src/notes/query.js';

describe('toFtsMatch', () => {
  it('ANDs bare words, keeps phrases, ORs around `or`, NOTs exclusions', () => {
    expect(toFtsMatch('deploy prod')).toBe('"deploy" AND "prod"');
    expect(toFtsMatch('"release train" ok')).toBe('"release train" AND "ok"');
    expect(toFtsMatch('ci flaky or broken')).toBe('"ci" AND ("flaky" OR "broken")');
    expect(toFtsMatch('deploy -staging -"dry run"')).toBe('("deploy") NOT "staging" NOT "dry run"');
    expect(toFtsMatch('a OR b')).toBe('("a" OR "b")');
    expect(toFtsMatch('"or"')).toBe('"or"');
  });

  it('turns FTS5 syntax in the input into plain words', () => {
    // A term with punctuation inside becomes the phrase of its words, as FTS5 indexes them.
    expect(toFtsMatch('NEAR(a b) col:x *')).toBe('"near a" AND "b" AND "col x"');
    expect(toFtsMatch('a AND b')).toBe('"a" AND "and" AND "b"');
    expect(toFtsMatch('"unterminated phrase')).toBe('"unterminated phrase"');
    expect(toFtsMatch('fix-up "q""x"')).toBe('"fix up" AND "q" AND "x"');
  });

  it('refuses queries with nothing searchable', () => {
    for (const q of ['', '   ', '***', '-only', 'or', '"" -x', '- -']) expect(() => toFtsMatch(q)).toThrow(QueryError);
    expect(() => toFtsMatch('x'.repeat(1001))).toThrow(/longer than/);
    expect(() => toFtsMatch(Array.from({ length: 65 }, (_, i) => `w${i}`).join(' '))).toThrow(/terms/);
  });
});
