// The record of copies that arrived from other nodes: what a peer's next round must re-read, and
// when that is not known (before the record began, past its window, a clock set back).
import { describe, expect, it } from 'vitest';
import { LATE_WINDOW_MS, LateArrivals } from '../../../src/store/late-arrivals.js';

function clocked(start = Date.UTC(2026, 10, 29, 12, 0, 30)): { arrivals: LateArrivals; at: (ms: number) => void; now: () => number } {
  let now = start;
  const arrivals = new LateArrivals(() => now);
  return { arrivals, at: (ms) => void (now = ms), now: () => now };
}

describe('LateArrivals', () => {
  it('answers null when nothing arrived since the instant asked about', () => {
    const { arrivals, at, now } = clocked();
    const t = now();
    at(t + 5_000);
    expect(arrivals.oldestSince(t)).toBeNull();
  });

  it('answers the oldest stamp stored since then, in any order of arrival', () => {
    const { arrivals, at, now } = clocked();
    const t = now();
    at(t + 1_000);
    arrivals.record('2026-11-29T11:58:00.000Z');
    at(t + 70_000);
    arrivals.record('2026-11-29T11:50:00.000Z');
    arrivals.record('2026-11-29T11:55:00.000Z');
    expect(arrivals.oldestSince(t)).toBe('2026-11-29T11:50:00.000Z');
    // Asked from a later second on, the first copy's second is not counted.
    expect(arrivals.oldestSince(t + 65_000)).toBe('2026-11-29T11:50:00.000Z');
    at(t + 200_000);
    arrivals.record('2026-11-29T11:59:00.000Z');
    expect(arrivals.oldestSince(t + 190_000)).toBe('2026-11-29T11:59:00.000Z');
  });

  it('counts a copy stored in the same second just before the instant asked about, not one a second earlier', () => {
    const { arrivals, at, now } = clocked(Date.UTC(2026, 10, 29, 12, 0, 10));
    arrivals.record('2026-11-29T11:40:00.000Z');
    at(now() + 1_000);
    arrivals.record('2026-11-29T11:45:00.000Z');
    const t = now() + 500;
    at(t + 1);
    expect(arrivals.oldestSince(t)).toBe('2026-11-29T11:45:00.000Z');
  });

  it('leaves out the copies the asking node sent exactly as stored: it has them', () => {
    const { arrivals, at, now } = clocked();
    const t = now();
    at(t + 2_000);
    arrivals.record('2026-11-29T11:30:00.000Z', 'node-q');
    arrivals.record('2026-11-29T11:45:00.000Z', 'node-r');
    arrivals.record('2026-11-29T11:50:00.000Z');
    expect(arrivals.oldestSince(t, 'node-q')).toBe('2026-11-29T11:45:00.000Z');
    expect(arrivals.oldestSince(t, 'node-r')).toBe('2026-11-29T11:30:00.000Z');
    expect(arrivals.oldestSince(t)).toBe('2026-11-29T11:30:00.000Z');
  });

  it('does not know what arrived before it began, past its window, or ahead of a clock set back', () => {
    const { arrivals, at, now } = clocked();
    const start = now();
    expect(arrivals.oldestSince(start - 1)).toBeUndefined();
    at(start + LATE_WINDOW_MS + 1);
    expect(arrivals.oldestSince(start)).toBeUndefined();
    expect(arrivals.oldestSince(start + 2)).toBeNull();
    at(start + 10);
    expect(arrivals.oldestSince(start + 1_000)).toBeUndefined();
    expect(arrivals.oldestSince(Number.NaN)).toBeUndefined();
  });

  it('forgets what it knew when the database is replaced', () => {
    const { arrivals, at, now } = clocked();
    const t = now();
    at(t + 1_000);
    arrivals.record('2026-11-29T11:00:00.000Z');
    arrivals.forget();
    expect(arrivals.oldestSince(t)).toBeUndefined();
    at(t + 2_000);
    expect(arrivals.oldestSince(t + 1_000)).toBeNull();
  });

  it('keeps a bounded number of minutes, however long it runs', () => {
    const { arrivals, at, now } = clocked();
    const t = now();
    for (let sec = 0; sec < 3 * 3600; sec += 7) {
      at(t + sec * 1_000);
      arrivals.record('2026-11-29T00:00:00.000Z');
    }
    expect((arrivals as unknown as { slots: Map<number, unknown> }).slots.size).toBeLessThanOrEqual(LATE_WINDOW_MS / 1_000 + 3);
    expect(arrivals.oldestSince(now() - 60_000)).toBe('2026-11-29T00:00:00.000Z');
  });
});
