// Ticket stamps (spec service B: `updated_at` is RFC 3339): the strict parser, the canonical
// form the hybrid clock writes, and last-writer-wins comparing instants, not strings.
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../../src/util/clock.js';
import { HybridClock } from '../../../../daemon/services/tickets/hybrid-clock.js';
import { decide } from '../../../../daemon/services/tickets/lww.js';
import { compareStamps, formatStamp, MAX_STAMP_MS, narrowedSince, normalizeStamp, parseStamp } from '../../../../daemon/services/tickets/stamp.js';
import type { Ticket } from '../../../../src/schemas/tickets.js';

const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const NOW = Date.parse('2026-03-01T10:00:00.000Z');

function copy(updated_at: string, title = 'same'): Ticket {
  return { id: '00000000-0000-4000-8000-000000000001', short_id: '00000000', title, description: '', status: 'open', priority: 'normal', channel: 'api', source: 'manual', requester: null, assignee: null, tags: [], created_at: '2026-01-01T00:00:00.000Z', updated_at, updated_by: 'n' };
}

describe('parseStamp / normalizeStamp', () => {
  it('accepts RFC 3339 in any offset and fraction, in canonical UTC millisecond form', () => {
    expect(normalizeStamp('2026-03-01T10:00:00Z')).toBe('2026-03-01T10:00:00.000Z');
    expect(normalizeStamp('2026-03-01t12:30:00.5+02:30')).toBe('2026-03-01T10:00:00.500Z');
    expect(normalizeStamp('2024-02-29 23:59:59.123456-00:00')).toBe('2024-02-29T23:59:59.123Z');
    expect(normalizeStamp('9999-12-31T23:59:59.999Z')).toBe('9999-12-31T23:59:59.999Z');
  });

  it('refuses what Date would silently roll over or write outside four-digit years', () => {
    for (const bad of [
      '2026-02-31T00:00:00Z', // no such day: Date makes it March 3
      '2025-02-29T00:00:00Z',
      '2026-01-01T24:00:00Z',
      '2026-06-30T23:59:60Z', // leap second
      '2026-13-01T00:00:00Z',
      '2026-01-01T00:00:00+24:00',
      '+010000-01-01T00:00:00.000Z', // what the unbounded clock wrote
      '9999-12-31T23:59:59-00:01', // year 10000 in UTC
      '1969-12-31T23:59:59.999Z', // before the sync cursor's epoch
      '2026-01-01T00:00:00', // no offset
      '2026-01-01T00:00:00Z\u0000',
      '',
    ]) {
      expect(parseStamp(bad), bad).toBeUndefined();
    }
    expect(parseStamp(12345)).toBeUndefined();
  });

  it('formatStamp throws rather than write a stamp past year 9999', () => {
    expect(formatStamp(MAX_STAMP_MS)).toBe('9999-12-31T23:59:59.999Z');
    expect(() => formatStamp(MAX_STAMP_MS + 1)).toThrow(RangeError);
    expect(() => formatStamp(-1)).toThrow(RangeError);
  });

  it('compares instants: a later fraction or an offset does not lose to string order', () => {
    expect(compareStamps('2026-03-01T10:00:00.001Z', '2026-03-01T10:00:00Z')).toBe(1); // '.' < 'Z' as strings
    expect(compareStamps('2026-03-01T11:00:00+02:00', '2026-03-01T10:00:00Z')).toBe(-1); // 09:00Z
    expect(compareStamps('2026-03-01T12:00:00+02:00', '2026-03-01T10:00:00.000Z')).toBe(0);
    // A stamp that is not RFC 3339 sorts below every valid one, however its string sorts.
    expect(compareStamps('+010000-01-01T00:00:00.000Z', '1970-01-01T00:00:00.001Z')).toBe(-1);
    expect(compareStamps('garbage', '+010000-01-01T00:00:00.000Z')).toBe(0);
  });
});

describe('HybridClock', () => {
  it('does not follow a stamp beyond the allowed skew, so it never writes +010000-...', () => {
    const clock = new ManualClock(NOW);
    const hlc = new HybridClock(clock, undefined, 5 * 60_000);
    expect(hlc.observe('9999-12-31T23:59:59.999Z')).toBe(false);
    const next = hlc.next();
    expect(next).toBe('2026-03-01T10:00:00.000Z');
    expect(hlc.observe('2026-03-01T10:04:00.000Z')).toBe(true); // within the skew: followed
    expect(hlc.next()).toBe('2026-03-01T10:04:00.001Z');
    expect(hlc.observe('+010000-01-01T00:00:00.000Z')).toBe(false);
  });

  it('a poisoned newest stored stamp given at start-up is ignored too', () => {
    const hlc = new HybridClock(new ManualClock(NOW), '9999-12-31T23:59:59.999Z');
    expect(hlc.next()).toBe('2026-03-01T10:00:00.000Z');
  });

  it('at the end of year 9999 it throws instead of emitting a stamp outside RFC 3339', () => {
    const clock = new ManualClock(MAX_STAMP_MS - 1);
    const hlc = new HybridClock(clock);
    expect(hlc.next()).toBe('9999-12-31T23:59:59.998Z');
    expect(hlc.next()).toBe('9999-12-31T23:59:59.999Z');
    expect(() => hlc.next()).toThrow(RangeError);
    expect(() => hlc.next()).toThrow(RangeError);
  });

  it('every stamp it writes is canonical and strictly increasing, whatever the wall clock does', () => {
    const clock = new ManualClock(NOW);
    const hlc = new HybridClock(clock);
    let last = '';
    for (const step of [0, 5, -60_000, 0, 1000, -1, 3_600_000]) {
      clock.advance(step);
      const s = hlc.next();
      expect(s).toMatch(CANONICAL);
      expect(compareStamps(s, last)).toBe(1);
      last = s;
    }
  });
});

describe('last-writer-wins', () => {
  it('decides by instant, not by string order', () => {
    expect(decide(copy('2026-03-01T10:00:00.001Z', 'newer'), copy('2026-03-01T10:00:00Z', 'older'))).toBe('take');
    expect(decide(copy('2026-03-01T11:00:00+02:00', 'older'), copy('2026-03-01T10:00:00Z', 'newer'))).toBe('keep');
  });

  it('a stored copy with a stamp that is not RFC 3339 (+010000-...) loses to any valid copy', () => {
    expect(decide(copy('2026-03-01T10:00:00.000Z', 'valid'), copy('+010000-01-01T00:00:00.000Z', 'poisoned'))).toBe('take');
  });

  it('a stored copy stamped beyond the ceiling (clock + skew) loses; within it, it still wins', () => {
    const ceiling = NOW + 5 * 60_000;
    expect(decide(copy('2026-03-01T10:00:00.000Z', 'honest'), copy('9999-12-31T23:59:59.999Z', 'future'), ceiling)).toBe('take');
    expect(decide(copy('2026-03-01T10:00:00.000Z', 'honest'), copy('2026-03-01T10:04:00.000Z', 'ahead'), ceiling)).toBe('keep');
    expect(decide(copy('2026-03-01T10:00:00.000Z'), copy('2026-03-01T10:00:00.000Z'), ceiling)).toBe('same');
  });
});

describe('narrowedSince: where a sync read starts once late arrivals are known', () => {
  const since = '2026-11-29T11:50:00.000Z';
  const cursor = '2026-11-29T12:00:00.000Z';
  it('re-reads the whole overlap when what arrived is not known', () => {
    expect(narrowedSince(since, cursor, undefined)).toBe(since);
  });
  it('starts at the cursor when nothing arrived late, or only copies newer than it', () => {
    expect(narrowedSince(since, cursor, null)).toBe(cursor);
    expect(narrowedSince(since, cursor, '2026-11-29T12:00:05.000Z')).toBe(cursor);
  });
  it('starts just before the oldest late copy, so a read strictly after the start takes it', () => {
    expect(narrowedSince(since, cursor, '2026-11-29T11:57:00.000Z')).toBe('2026-11-29T11:56:59.999Z');
    expect(narrowedSince(since, cursor, cursor)).toBe('2026-11-29T11:59:59.999Z');
  });
  it('never starts before the overlap, nor after a cursor that is not past it', () => {
    expect(narrowedSince(since, cursor, '2026-11-29T08:00:00.000Z')).toBe(since);
    expect(narrowedSince(cursor, since, null)).toBe(cursor);
  });
});
