// normalizeStamp hands a canonical stamp back as it came instead of formatting it again; that
// must be the same text the `Date` round trip writes, and refusals (before 1970, no such day)
// must stay refusals.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { formatStamp, normalizeStamp, parseStamp } from '../../../../daemon/services/tickets/stamp.js';
import { MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS } from '../../../../src/util/time.js';

/** normalizeStamp as it was before the shortcut: parse, then format. */
function reference(s: unknown): string | undefined {
  const ms = parseStamp(s);
  return ms === undefined ? undefined : formatStamp(ms);
}

const pad = (n: number, w: number): string => String(n).padStart(w, '0');

describe('normalizeStamp: canonical stamps come back unchanged, as formatting would write them', () => {
  it('any instant of the four-digit years, before and after 1970', () => {
    fc.assert(
      fc.property(fc.integer({ min: MIN_TIMESTAMP_MS, max: MAX_TIMESTAMP_MS }), (ms) => {
        const s = new Date(ms).toISOString();
        expect(normalizeStamp(s)).toBe(reference(s));
        expect(normalizeStamp(s)).toBe(ms >= 0 ? s : undefined);
      }),
      { numRuns: 20_000 },
    );
  });

  it('canonical-shaped fields in range or not, and other spellings of the same instants', () => {
    const fields = fc.tuple(fc.integer({ min: 1965, max: 1975 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 32 }), fc.integer({ min: 0, max: 25 }), fc.integer({ min: 0, max: 61 }), fc.integer({ min: 0, max: 61 }), fc.integer({ min: 0, max: 999 }));
    fc.assert(
      fc.property(fields, fc.constantFrom('.sssZ', 'Z', '.sss+00:00', '.sss-01:00', 'z'), ([y, mo, d, h, mi, s, ms], form) => {
        const text = `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}T${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}${form.replace('sss', pad(ms, 3))}`;
        expect(normalizeStamp(text), text).toBe(reference(text));
      }),
      { numRuns: 20_000 },
    );
  });

  it('the epoch is the earliest stamp; a millisecond before it is refused', () => {
    expect(normalizeStamp('1970-01-01T00:00:00.000Z')).toBe('1970-01-01T00:00:00.000Z');
    expect(normalizeStamp('1969-12-31T23:59:59.999Z')).toBeUndefined();
    expect(normalizeStamp('2026-02-29T00:00:00.000Z')).toBeUndefined();
    expect(normalizeStamp(20260101)).toBeUndefined();
  });
});
