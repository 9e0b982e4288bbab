// LimiterWindows conformance on both engines: the row operations (read, put, release, prune) and
// the reservation rule built on them (an expired window is replaced, a current one fills up to
// the limit and no further, even under 40 concurrent reservations).
import { expect, it } from 'vitest';
import { SqlLimiterWindows } from '../../../src/store/limiter-windows-sql.js';
import { reserve, takenNow } from '../../../daemon/plugins/limiter-window.js';
import { describeEngines } from '../../helpers/engines.js';

describeEngines('LimiterWindows', (open) => {
  it('stores, replaces, releases and prunes windows; ms instants survive as numbers', async () => {
    const w = await SqlLimiterWindows.open(await open());
    expect(await w.window('s', 'k')).toBeUndefined();
    await w.putWindow('s', 'k', { windowStart: 1_767_225_600_123, taken: 2 });
    expect(await w.window('s', 'k')).toEqual({ windowStart: 1_767_225_600_123, taken: 2 });
    await w.release('s', 'k', 1); // another window: left alone
    await w.release('s', 'k', 1_767_225_600_123);
    expect((await w.window('s', 'k'))!.taken).toBe(1);
    await w.release('s', 'k', 1_767_225_600_123);
    await w.release('s', 'k', 1_767_225_600_123); // never below zero
    expect((await w.window('s', 'k'))!.taken).toBe(0);
    await w.putWindow('s', 'old', { windowStart: 5, taken: 1 });
    await w.putWindow('other', 'old', { windowStart: 5, taken: 1 });
    expect(await w.prune('s', 1000)).toBe(1);
    expect(await w.window('s', 'old')).toBeUndefined();
    expect(await w.window('other', 'old')).toBeDefined();
  });

  it('reserve: a new window holds the slot; a current one grants up to the limit; an expired one starts over', async () => {
    const w = await SqlLimiterWindows.open(await open());
    const rule = (now: number) => ({ expiredBefore: now - 1000, opensAt: now, limit: 2 });
    expect(await reserve(w, 's', 'k', rule(10_000))).toEqual({ granted: true, windowStart: 10_000, count: 1 });
    expect(await reserve(w, 's', 'k', rule(10_500))).toEqual({ granted: true, windowStart: 10_000, count: 2 });
    expect(await reserve(w, 's', 'k', rule(10_900))).toEqual({ granted: false, windowStart: 10_000, count: 2 });
    expect(await takenNow(w, 's', 'k', 9_000)).toBe(2);
    expect(await takenNow(w, 's', 'k', 10_001)).toBe(0);
    expect(await reserve(w, 's', 'k', rule(11_001))).toEqual({ granted: true, windowStart: 11_001, count: 1 });
  });

  it('40 concurrent reservations against a limit of 7 grant exactly 7', async () => {
    const w = await SqlLimiterWindows.open(await open());
    const rs = await Promise.all(Array.from({ length: 40 }, () => reserve(w, 's', 'hot', { expiredBefore: 0, opensAt: 100, limit: 7 })));
    expect(rs.filter((r) => r.granted)).toHaveLength(7);
    expect((await w.window('s', 'hot'))!.taken).toBe(7);
  });
});
