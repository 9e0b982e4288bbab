// parseTimestamp's fast path for the canonical form must not change a single answer: a
// differential test against the regex-and-Date parser it shortcuts, over drawn timestamps
// valid and invalid (days the month lacks, 24:00, leap seconds, years 0000-0099 which
// Date.UTC would take for 19xx, non-ASCII digits, one character off).
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS, parseCanonicalTimestamp, parseTimestamp } from '../../../src/util/time.js';

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** parseTimestamp as it was before the fast path (commit 5eef94c), kept as the reference. */
function referenceParse(s: unknown): number | undefined {
  if (typeof s !== 'string') return undefined;
  const m = RFC3339.exec(s);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offset = 0;
  if (m[9] !== undefined) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return undefined;
    offset = (m[9] === '-' ? -1 : 1) * (oh * 60 + om) * 60_000;
  }
  const ms = Math.floor(Number(`0${m[7] ?? ''}`) * 1000);
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, ms);
  if (d.getUTCFullYear() !== year || d.getUTCMonth() !== month - 1 || d.getUTCDate() !== day) return undefined;
  const t = d.getTime() - offset;
  return t >= MIN_TIMESTAMP_MS && t <= MAX_TIMESTAMP_MS ? t : undefined;
}

const pad = (n: number, w: number): string => String(n).padStart(w, '0');
const canonicalText = (y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number): string =>
  `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}T${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}.${pad(ms, 3)}Z`;

function same(s: string): void {
  expect(parseTimestamp(s), s).toBe(referenceParse(s));
}

/** Years where the calendar or Date's handling of them is special. */
const EDGE_YEARS = [0, 1, 4, 99, 100, 399, 400, 1600, 1900, 1969, 1970, 2000, 2024, 2025, 2100, 9996, 9999];
const year = fc.oneof(fc.constantFrom(...EDGE_YEARS), fc.integer({ min: 0, max: 9999 }));
/** Digit fields of the canonical shape, in and out of range. */
const shaped = fc
  .tuple(year, fc.integer({ min: 0, max: 19 }), fc.integer({ min: 0, max: 39 }), fc.integer({ min: 0, max: 29 }), fc.integer({ min: 0, max: 69 }), fc.integer({ min: 0, max: 69 }), fc.integer({ min: 0, max: 999 }))
  .map((f) => canonicalText(...f));
/** A canonical timestamp with one character replaced, removed or inserted. */
const OTHER_CHARS = [...'0123456789-T:.Zzt +/a', '\u0660', '\uff10', '\u00b9'];
const mutated = fc
  .tuple(fc.integer({ min: MIN_TIMESTAMP_MS, max: MAX_TIMESTAMP_MS }), fc.nat(24), fc.constantFrom(...OTHER_CHARS), fc.constantFrom('replace', 'remove', 'insert'))
  .map(([ms, at, c, how]) => {
    const s = new Date(ms).toISOString();
    return how === 'replace' ? s.slice(0, at) + c + s.slice(at + 1) : how === 'remove' ? s.slice(0, at) + s.slice(at + 1) : s.slice(0, at) + c + s.slice(at);
  });
/** The other RFC 3339 spellings: offsets, any fraction, `t`/`z`/space. */
const otherForms = fc
  .tuple(shaped, fc.constantFrom('', '.5', '.12', '.1234', '.999999'), fc.constantFrom('Z', 'z', '+00:00', '-00:00', '+02:30', '-23:59', '+24:00', '+01:60'), fc.constantFrom('T', 't', ' '))
  .map(([s, frac, zone, sep]) => `${s.slice(0, 10)}${sep}${s.slice(11, 19)}${frac}${zone}`);

describe('parseTimestamp: the canonical fast path answers as the general parser does', () => {
  it('every day of edge years, month 0-13 and day 0-32, at the day\'s first and last millisecond', () => {
    for (const y of EDGE_YEARS)
      for (let mo = 0; mo <= 13; mo++)
        for (let d = 0; d <= 32; d++) {
          same(canonicalText(y, mo, d, 0, 0, 0, 0));
          same(canonicalText(y, mo, d, 23, 59, 59, 999));
        }
  });

  it('every instant it can write parses back to itself', () => {
    fc.assert(
      fc.property(fc.integer({ min: MIN_TIMESTAMP_MS, max: MAX_TIMESTAMP_MS }), (ms) => {
        const s = new Date(ms).toISOString();
        expect(parseCanonicalTimestamp(s)).toBe(ms);
        expect(parseTimestamp(s)).toBe(ms);
      }),
      { numRuns: 20_000 },
    );
  });

  it('drawn canonical-shaped fields, in range or not', () => {
    fc.assert(fc.property(shaped, same), { numRuns: 20_000 });
  });

  it('canonical timestamps one character off', () => {
    fc.assert(fc.property(mutated, same), { numRuns: 20_000 });
  });

  it('other RFC 3339 forms still take the general parser', () => {
    fc.assert(fc.property(otherForms, same), { numRuns: 10_000 });
  });

  it('any string and any value', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 30 }), fc.string({ unit: 'binary', maxLength: 26 }), fc.anything()), (v) => {
        expect(parseTimestamp(v)).toBe(referenceParse(v));
      }),
      { numRuns: 10_000 },
    );
  });

  it('the fast path itself takes the canonical form only', () => {
    expect(parseCanonicalTimestamp('2026-11-24T10:00:00.000Z')).toBe(Date.UTC(2026, 10, 24, 10));
    expect(parseCanonicalTimestamp('0099-01-01T00:00:00.000Z')).toBe(referenceParse('0099-01-01T00:00:00.000Z'));
    for (const s of ['2026-11-24T10:00:00Z', '2026-11-24t10:00:00.000Z', '2026-11-24T10:00:00.000z', '2026-11-24T10:00:00.000+00:00', '2026-02-29T00:00:00.000Z', '2026-11-24T10:00:00.00\u0660Z']) {
      expect(parseCanonicalTimestamp(s), s).toBeUndefined();
    }
  });
});
