// RFC 3339 timestamps: strict parsing and a canonical form that never leaves four-digit years.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS, formatTimestamp, parseTimestamp, timestampNow } from '../../../src/util/time.js';
import { ManualClock } from '../../../src/util/clock.js';

describe('timestamps', () => {
  it('parses any offset to the same instant', () => {
    expect(parseTimestamp('2026-11-24T10:00:00Z')).toBe(Date.UTC(2026, 10, 24, 10));
    expect(parseTimestamp('2026-11-24T12:00:00.5+02:00')).toBe(Date.UTC(2026, 10, 24, 10, 0, 0, 500));
  });

  it('refuses what Date would silently bend: 02-31, 24:00, leap seconds, bad offsets, years past 9999', () => {
    for (const s of ['2026-02-31T00:00:00Z', '2026-01-01T24:00:00Z', '2026-12-31T23:59:60Z', '2026-01-01T00:00:00+24:00', '+010000-01-01T00:00:00.000Z', '9999-12-31T23:59:59-01:00', 'garbage', '']) {
      expect(parseTimestamp(s), s).toBeUndefined();
    }
    expect(parseTimestamp(42)).toBeUndefined();
  });

  it('formats only inside four-digit years', () => {
    expect(formatTimestamp(MAX_TIMESTAMP_MS)).toBe('9999-12-31T23:59:59.999Z');
    expect(formatTimestamp(MIN_TIMESTAMP_MS)).toBe('0000-01-01T00:00:00.000Z');
    expect(() => formatTimestamp(MAX_TIMESTAMP_MS + 1)).toThrow(RangeError);
    expect(() => formatTimestamp(Number.NaN)).toThrow(RangeError);
  });

  it('writes what toISOString writes for any instant, within a day of the last one and across days, before 1970 and after, fractions floored', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: MIN_TIMESTAMP_MS, max: MAX_TIMESTAMP_MS }), fc.integer({ min: -3 * 86_400_000, max: 3 * 86_400_000 }), fc.double({ min: 0, max: 0.999, noNaN: true })), { minLength: 1, maxLength: 20 }), (steps) => {
        for (const [at, step, fraction] of steps) {
          // A far instant, then one near it: the second is written from the kept day when on it.
          for (const t of [at, Math.min(MAX_TIMESTAMP_MS, Math.max(MIN_TIMESTAMP_MS, at + step))]) {
            const x = Math.min(MAX_TIMESTAMP_MS, t + fraction);
            expect(formatTimestamp(x)).toBe(new Date(Math.floor(x)).toISOString());
          }
        }
      }),
      { numRuns: 300 },
    );
    // Each side of midnight, and of the epoch.
    for (const t of [Date.UTC(2026, 10, 30) - 1, Date.UTC(2026, 10, 30), Date.UTC(2026, 10, 30) + 1, -1, 0, 1, -86_400_000, -86_400_001]) expect(formatTimestamp(t)).toBe(new Date(t).toISOString());
  });

  it('writes the clock\'s present instant as toISOString does, to the letter, for every record\'s *_at', () => {
    const clock = new ManualClock(Date.parse('2026-03-01T12:00:00.000Z'));
    expect(timestampNow(clock)).toBe('2026-03-01T12:00:00.000Z');
    clock.advance(25 * 3600 * 1000 + 7);
    expect(timestampNow(clock)).toBe(new Date(clock.now()).toISOString());
  });
});
