// The notes search's regular expressions (issue 36): the linear-time engine agrees with
// JavaScript's RegExp on the supported subset, refuses what it cannot run safely, finishes
// patterns built to backtrack within a step budget (counted, not timed), and names the literals
// every match contains.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileRegex, MAX_INSTRUCTIONS, REGEX_STEP_BUDGET, RegexBudgetError, RegexError, StepBudget } from '../../../src/notes/safe-regex.js';

/** JavaScript's answer for a pattern of the subset: `(?i)` at the start becomes the `i` flag. */
function jsRegex(pattern: string): RegExp {
  return pattern.startsWith('(?i)') ? new RegExp(pattern.slice(4), 'i') : new RegExp(pattern);
}

function jsSpan(pattern: string, line: string): [number, number] | null {
  const m = jsRegex(pattern).exec(line);
  return m ? [m.index, m.index + m[0].length] : null;
}

function agree(pattern: string, line: string): void {
  const r = compileRegex(pattern);
  const budget = new StepBudget(REGEX_STEP_BUDGET);
  const want = jsSpan(pattern, line);
  expect(r.test(line, budget), `${pattern} on ${JSON.stringify(line)}`).toBe(want !== null);
  expect(r.firstMatch(line, budget), `${pattern} on ${JSON.stringify(line)}`).toEqual(want);
}

const corpus: [string, string[]][] = [
  ['abc', ['abc', 'xabcx', 'ab', '', 'ABC']],
  ['a.c', ['abc', 'a\rc', 'a\u2028c', 'a c', 'ac']],
  ['^foo', ['foo', 'xfoo', 'foobar']],
  ['bar$', ['bar', 'barx', 'foobar']],
  ['^$', ['', 'x']],
  ['a|b|', ['', 'c', 'b']],
  ['colou?r', ['color', 'colour', 'colouur']],
  ['a+b', ['aaab', 'b', 'xaab']],
  ['a*?b', ['aaab', 'b']],
  ['a+?', ['aaa']],
  ['x{2}', ['x', 'xx', 'xxxx']],
  ['x{2,}', ['x', 'xxxxx']],
  ['x{2,3}', ['xxxxx', 'x']],
  ['x{2,3}?', ['xxxxx']],
  ['x{0}y', ['y', 'xy']],
  ['(a|ab)(c|bcd)(d*)', ['abcd', 'abc']],
  ['(?:ab)+', ['ababab', 'aab']],
  ['(?<name>ab)c', ['abc']],
  ['[a-c]+', ['xxabcbad']],
  ['[^a-c]+', ['abcdef']],
  ['[\\d.-]+', ['v1.2-3', 'none']],
  ['[\\w-]+@[\\w.]+', ['mail: ana-b@example.com.']],
  ['\\d{3}-\\d{4}', ['call 555-1234 now', '55-1234']],
  ['\\D\\W\\S', ['1a !b', 'a!b']],
  ['\\s+', ['a \t\u00a0b', 'ab']],
  ['\\bfoo\\b', ['foo', 'a foo b', 'foobar', 'barfoo']],
  ['\\Boo\\B', ['foo', 'fooo']],
  ['\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|\\\\\\/\\^\\$', ['.*+?()[]{}|\\/^$']],
  ['\\x41\\u0042\\t', ['AB\t']],
  ['\\cJ|\\0', ['\n', '\0']],
  ['[\\b]', ['\b', 'b']],
  ['a{', ['a{']],
  ['a{x}', ['a{x}']],
  ['a{,2}', ['a{,2}']],
  ['}]', ['}]']],
  ['[]a', ['a']],
  ['[^]a', ['\na', 'a']],
  ['[\\d-z]', ['-', 'z', '5', 'y']],
  ['(a*)*b', ['aaab', 'aaa']],
  ['(a|)*b', ['aab']],
  ['(?:a*?)*?b', ['aab']],
  ['(a+|b+)*c', ['abababc']],
  ['https?://[^\\s/]+/', ['see https://example.com/x and http://a/']],
  ['<[^>@\\s]+@[^>\\s]+>', ['Message-Id: <20231101.1234@mail.example.org>']],
  ['[0-9a-f]{40}', ['commit ' + 'ab12'.repeat(10), 'commit ' + 'ab12'.repeat(9)]],
  ['(?i)hello', ['HeLLo world', 'help']],
  ['(?i)[a-c]+', ['xxABCabc']],
  ['(?i)[^a]', ['A', 'a', 'b']],
  ['(?i)école', ['ÉCOLE', 'Ecole']],
  ['(?i)\\w+', ['ſ', 'K']],
  ['(?i)straße', ['STRASSE', 'STRAßE']],
  ['😀+', ['😀😀', '\ud83d']],
  ['.', ['😀']],
];

describe('agreement with JavaScript RegExp', () => {
  it('gives the same matches on a corpus of patterns and lines', () => {
    for (const [p, lines] of corpus) for (const l of lines) agree(p, l);
  });

  // Patterns generated from the supported subset over a small alphabet, so that matches happen.
  const atom = fc.constantFrom('a', 'b', 'A', '1', ' ', '-', '.', '\\.', '\\d', '\\w', '\\s', '\\W', '[ab]', '[^a]', '[a-b1]', '[\\d-]', '[]', '[^]');
  const anchor = fc.constantFrom('^', '$', '\\b', '\\B');
  const quant = fc.constantFrom('', '', '*', '+', '?', '*?', '+?', '??', '{2}', '{0,2}', '{1,}', '{1,3}?');
  const { pattern } = fc.letrec<{ pattern: string; piece: string; group: string }>((tie) => ({
    pattern: fc.array(fc.array(tie('piece'), { maxLength: 3 }).map((ps) => ps.join('')), { minLength: 1, maxLength: 2 }).map((alts) => alts.join('|')),
    piece: fc.oneof(
      { maxDepth: 2, withCrossShrink: true },
      fc.tuple(atom, quant).map(([a, q]) => a + q),
      anchor,
      fc.tuple(tie('group'), quant).map(([g, q]) => g + q),
    ),
    group: fc.tuple(fc.constantFrom('(', '(?:'), tie('pattern')).map(([o, p]) => `${o}${p})`),
  }));
  // Small patterns and short lines: JavaScript's own engine, the reference, backtracks
  // exponentially on deeply nested generated patterns (it hung on some at depth 5 and 12 characters).
  const line = fc.string({ unit: fc.constantFrom('a', 'b', 'A', 'B', '1', ' ', '-', '.', '_', '\t', 'é'), maxLength: 8 });

  it('gives the same boolean and span for generated patterns and lines (property)', () => {
    fc.assert(
      fc.property(fc.boolean(), pattern, fc.array(line, { minLength: 1, maxLength: 5 }), (ci, p, lines) => {
        const pat = (ci ? '(?i)' : '') + p;
        for (const l of lines) agree(pat, l);
      }),
      { numRuns: 400 },
    );
  });
});

describe('refusals', () => {
  const refused: [string, RegExp][] = [
    ['(a)\\1', /backreferences \(\\1\)/],
    ['(?<x>a)\\k<x>', /backreferences \(\\k<name>\)/],
    ['[\\1]', /backreferences and octal escapes/],
    ['\\01', /octal escapes/],
    ['foo(?=bar)', /lookahead \(\?=…\)/],
    ['foo(?!bar)', /lookahead \(\?!…\)/],
    ['(?<=foo)bar', /lookbehind \(\?<=…\)/],
    ['(?<!foo)bar', /lookbehind \(\?<!…\)/],
    ['a(?i)b', /\(\?i\) is accepted only at the start/],
    ['(?s)a', /group \(\?s… is not supported/],
    ['\\p{L}', /Unicode property escapes/],
    ['x'.repeat(1001), /longer than 1000 characters/],
    ['a{101}', /repetition counts above 100/],
    ['(?:a{100}){100}', new RegExp(`more than ${MAX_INSTRUCTIONS} instructions`)],
    ['((((a{10}){10}){10}){10}){10}', /more than 10000 instructions/],
    ['(ab', /missing \)/],
    ['ab)', /unmatched \)/],
    ['[ab', /missing \]/],
    ['[z-a]', /range out of order/],
    ['*a', /nothing to repeat/],
    ['a**', /nothing to repeat/],
    ['^*', /nothing to repeat/],
    ['{2}', /nothing to repeat/],
    ['a{3,2}', /numbers out of order/],
    ['ab\\', /\\ at end of pattern/],
  ];

  it('names the construct it refuses', () => {
    for (const [p, msg] of refused) {
      expect(() => compileRegex(p), p).toThrow(RegexError);
      expect(() => compileRegex(p), p).toThrow(msg);
    }
  });

  it('accepts a pattern of exactly 1000 characters and 100 repetitions', () => {
    expect(compileRegex('x'.repeat(1000)).test('x'.repeat(1000), new StepBudget(REGEX_STEP_BUDGET))).toBe(true);
    expect(compileRegex('a{100}').test('a'.repeat(100), new StepBudget(REGEX_STEP_BUDGET))).toBe(true);
  });
});

describe('patterns built to backtrack', () => {
  const long = 10_000;
  const cases: [string, string][] = [
    ['(a*)*b', 'a'.repeat(long)],
    ['(a|a)*b', 'a'.repeat(long)],
    ['(x+x+)+y', 'x'.repeat(long)],
    ['(a|aa)+$', `${'a'.repeat(long)}!`],
    ['^(\\w+\\s?)*$', `${'word '.repeat(long / 5)}!`],
    ['(.*a){20}', 'a'.repeat(long)],
  ];

  it('finish in steps linear in the line, the same count every run', () => {
    for (const [p, l] of cases) {
      const r = compileRegex(p);
      const b1 = new StepBudget(REGEX_STEP_BUDGET);
      const first = r.firstMatch(l, b1);
      const b2 = new StepBudget(REGEX_STEP_BUDGET);
      expect(r.firstMatch(l, b2), p).toEqual(first);
      expect(b2.spent, p).toBe(b1.spent);
      // A step per instruction per character at most, well inside the budget.
      expect(b1.spent, p).toBeLessThan(long * 200);
    }
  });

  it('throws RegexBudgetError when the budget runs out, and keeps counting across lines', () => {
    const r = compileRegex('(a*)*b');
    const small = new StepBudget(10_000);
    expect(() => r.test('a'.repeat(long), small)).toThrow(RegexBudgetError);
    expect(() => r.test('a'.repeat(long), new StepBudget(10_000))).toThrow(/ran over its budget of 10000 steps; narrow the search with a literal or a filter/);
    expect(small.spent).toBeGreaterThan(10_000);

    const shared = new StepBudget(100_000);
    let lines = 0;
    expect(() => {
      for (;;) {
        r.test('a'.repeat(100), shared);
        lines++;
      }
    }).toThrow(RegexBudgetError);
    expect(lines).toBeGreaterThan(10);
  });

  it('skips lines without a required literal for a step', () => {
    const r = compileRegex('(x+x+)+needle');
    const b = new StepBudget(REGEX_STEP_BUDGET);
    expect(r.test('x'.repeat(long), b)).toBe(false);
    expect(b.spent).toBe(0);
  });
});

describe('requiredLiterals', () => {
  const cases: [string, string[]][] = [
    ['foo.*bar', ['foo', 'bar']],
    ['ab', []],
    ['abc', ['abc']],
    ['^https://', ['https://']],
    ['<[^>]+@example\\.com>', ['@example.com>']],
    ['Message-Id: <[^>]+>', ['Message-Id: <']],
    ['(foo|bar)baz', ['baz']],
    ['foo|barbaz', []],
    ['(?:abc)+x', ['abc']],
    ['a(bcd)?e', []],
    ['x{3}', ['xxx']],
    ['(?:ab){2,}', ['abab']],
    ['fo\\bo', ['foo']],
    ['(?:foo)(?:bar)\\d', ['foobar']],
    ['abc.*abc.*abcd', ['abcd']],
    ['(?i)Fooé bar', ['Foo', ' bar']],
    ['[0-9a-f]{40}', []],
  ];

  it('lists the substrings every match contains (none under alternation or an optional)', () => {
    for (const [p, want] of cases) expect(compileRegex(p).requiredLiterals, p).toEqual(want);
  });

  it('every match of a generated pattern contains its literals (property)', () => {
    const piece = fc.oneof(fc.constantFrom('abc', 'xyz', 'a', '.', '\\d', '(?:q|r)', 'k?', '[st]+'), fc.constantFrom('foo', 'bar'));
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 6 }), fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'x', 'y', 'z', 'f', 'o', 'r', '1', 'k', 's'), maxLength: 30 }), (ps, l) => {
        const p = ps.join('');
        const r = compileRegex(p);
        const span = r.firstMatch(l, new StepBudget(REGEX_STEP_BUDGET));
        if (span) for (const lit of r.requiredLiterals) expect(l.slice(...span)).toContain(lit);
      }),
    );
  });
});
