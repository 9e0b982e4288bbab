// Issue 31, "Conditions on an HTTP answer": the grammar as properties. A condition generated from
// the grammar parses into the parts it was built from; any other text either parses or is refused
// with a ConditionSyntaxError (never another error); evaluating any parsed condition against any
// body answers a message or nothing, and never throws.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConditionSyntaxError, evaluateConditions, parseCondition, type Condition, type Operator, type PathStep } from '../../src/monitor/conditions.js';

const OPS: Operator[] = ['==', '!=', '<', '<=', '>', '>='];
const ws = fc.constantFrom('', ' ', '  ', '\t');
/** A placeholder's name in any mix of cases. */
const cased = (name: string): fc.Arbitrary<string> => fc.array(fc.boolean(), { minLength: name.length, maxLength: name.length }).map((up) => [...name].map((ch, i) => (up[i] ? ch : ch.toLowerCase())).join(''));
const key = fc.string({ minLength: 1, maxLength: 8 }).filter((k) => !/[.[\]=!<>\s]/.test(k));
const step: fc.Arbitrary<PathStep> = fc.oneof(key, fc.nat({ max: 1000 }));
const written = (path: PathStep[]): string => path.map((s) => (typeof s === 'number' ? `[${s}]` : `.${s}`)).join('');
const decimal = fc.oneof(fc.integer({ min: -1e6, max: 1e6 }).map(String), fc.tuple(fc.nat(9999), fc.nat(999)).map(([a, b]) => `${a}.${b}`));
const duration = fc.tuple(fc.nat(400), fc.nat(59), fc.nat(59)).map(([h, m, s]) => ({ text: `${h}h${m}m${s}s`, ms: ((h * 60 + m) * 60 + s) * 1000 }));
/** Text as a bare value: no surrounding space, not a quoted string, not a function. */
const bare = fc.string({ minLength: 1, maxLength: 12 }).filter((t) => t === t.trim() && t !== '' && !t.startsWith('"') && !t.startsWith('pat(') && !t.startsWith('any('));
const option = fc.string({ minLength: 1, maxLength: 6 }).filter((t) => t === t.trim() && t !== '' && !t.includes(','));
const glob = fc.string({ maxLength: 10 }).map((g) => g.trim());

interface Built {
  text: string;
  expect: Omit<Condition, 'text' | 'value'> & { value: Record<string, unknown> };
}

/** A right-hand side for `placeholder` with `op`: the text written and the parsed value expected. */
function valueFor(placeholder: string, op: Operator): fc.Arbitrary<{ text: string; value: Record<string, unknown> }> {
  const equality = op === '==' || op === '!=';
  const numberLit = decimal.map((d) => ({ text: d, value: { kind: 'literal', text: d, quoted: false, number: Number(d) } }));
  const pat = glob.map((g) => ({ text: `pat(${g})`, value: { kind: 'pattern', glob: g } }));
  if (placeholder === 'CERTIFICATE_EXPIRATION') return duration.map((d) => ({ text: d.text, value: { kind: 'literal', text: d.text, quoted: false, number: d.ms } }));
  if (placeholder === 'STATUS' || placeholder === 'RESPONSE_TIME') {
    if (!equality) return numberLit;
    const any = fc.array(fc.integer({ min: 100, max: 599 }).map(String), { minLength: 1, maxLength: 4 }).map((o) => ({ text: `any(${o.join(', ')})`, value: { kind: 'any', options: o } }));
    return fc.oneof(numberLit, pat, any);
  }
  if (!equality) return numberLit;
  const quoted = fc.string({ maxLength: 12 }).map((s) => ({ text: JSON.stringify(s), value: { kind: 'literal', text: s, quoted: true } }));
  const plain = bare.map((t) => ({ text: t, value: { kind: 'literal', text: t, quoted: false } }));
  const any = fc.array(option, { minLength: 1, maxLength: 4 }).map((o) => ({ text: `any(${o.join(',')})`, value: { kind: 'any', options: o } }));
  return fc.oneof(numberLit, quoted, plain, pat, any);
}

const condition: fc.Arbitrary<Built> = fc
  .tuple(fc.constantFrom('STATUS', 'RESPONSE_TIME', 'BODY', 'CERTIFICATE_EXPIRATION'), fc.constantFrom(...OPS))
  .chain(([placeholder, op]) =>
    fc.record({
      name: cased(placeholder),
      path: placeholder === 'BODY' ? fc.array(step, { maxLength: 4 }) : fc.constant([] as PathStep[]),
      before: ws,
      mid: ws,
      after: ws,
      end: ws,
      rhs: valueFor(placeholder, op),
    }).map(({ name, path, before, mid, after, end, rhs }) => ({
      text: `${before}[${name}]${written(path)}${mid}${op}${after}${rhs.text}${end}`,
      expect: { placeholder: placeholder as Condition['placeholder'], path, op, value: rhs.value },
    })),
  );

/** Text near the grammar: fragments of conditions glued at random, and plain random strings. */
const fragment = fc.constantFrom('[', ']', 'STATUS', 'body', 'BODY', 'RESPONSE_TIME', 'CERTIFICATE_EXPIRATION', 'FOO', '.', '[0]', '[x', 'a', ' ', '==', '=', '!=', '<', '<=', '>', '>=', '!', 'pat(', 'any(', ')', ',', '*', '"', '\\', '200', '-1.5e3', '72h', '1d', 'µs', '__proto__', 'constructor');
const nearGrammar = fc.oneof(fc.array(fragment, { maxLength: 12 }).map((f) => f.join('')), fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 20 }));

describe('monitor conditions grammar', () => {
  it('a condition built from the grammar parses back into its parts', () => {
    fc.assert(
      fc.property(condition, ({ text, expect: parts }) => {
        const c = parseCondition(text);
        expect(c).toMatchObject(parts);
        expect(c.path).toEqual(parts.path);
        expect(c.text).toBe(text.trim().replace(/^\[[^\]]*\]/, `[${parts.placeholder}]`));
        // Plain data: the engine compares configurations as JSON.
        expect(JSON.parse(JSON.stringify(c))).toEqual(c);
      }),
      { numRuns: 2000 },
    );
  });

  it('any text parses or is refused with a ConditionSyntaxError, nothing else', () => {
    fc.assert(
      fc.property(nearGrammar, (text) => {
        try {
          const c = parseCondition(text);
          expect(c.text.startsWith('[')).toBe(true);
        } catch (err) {
          if (!(err instanceof ConditionSyntaxError)) throw err;
          expect(err.message.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 5000 },
    );
  });

  it('evaluating any parsed condition against any answer gives a message or nothing, never a throw', () => {
    const body = fc.oneof(fc.json({ maxDepth: 3 }), fc.string({ maxLength: 30 }));
    fc.assert(
      fc.property(condition, body, fc.integer({ min: 100, max: 599 }), fc.option(fc.integer({ min: -1e10, max: 1e10 }), { nil: undefined }), ({ text }, b, status, cert) => {
        const out = evaluateConditions([parseCondition(text)], { status, responseTimeMs: 5, body: b, certificateExpiresInMs: cert });
        if (out !== undefined) expect(out.startsWith(`condition failed: ${parseCondition(text).text} (was `)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
