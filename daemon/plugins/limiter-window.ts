// The one rule every limiter shares (the rate limit, the sign-in and abuse guards): how a slot of a
// window is reserved. It runs in a transaction that locks the window first, so concurrent requests
// on any number of instances take turns on it and never grant more than the limit.
import type { LimiterWindows, LimiterRows } from '../../src/store/limiter-windows.js';

/** A window as it stands after a reservation. */
export interface Reservation {
  /** Whether the slot was taken (false: the window is full). */
  granted: boolean;
  /** Start of the window the answer is about (ms since the epoch). */
  windowStart: number;
  /** Slots taken in that window, this one included when granted. */
  count: number;
}

export interface WindowRule {
  /** A stored window that started before this instant is over (ms since the epoch). */
  expiredBefore: number;
  /** Start of the window that opens when the stored one is over or absent. */
  opensAt: number;
  /** Slots per window (at least 1). */
  limit: number;
}

/** The decision on one window, given what is stored: pure, so both engines share it. */
export async function reserveIn(tx: LimiterRows, scope: string, key: string, rule: WindowRule): Promise<Reservation> {
  await tx.lockWindow(scope, key);
  const stored = await tx.window(scope, key);
  // An expired or absent window is replaced by a new one holding this slot.
  if (!stored || stored.windowStart < rule.expiredBefore) {
    await tx.putWindow(scope, key, { windowStart: rule.opensAt, taken: 1 });
    return { granted: true, windowStart: rule.opensAt, count: 1 };
  }
  // A current one grants the slot only while fewer than `limit` are taken.
  if (stored.taken >= rule.limit) return { granted: false, windowStart: stored.windowStart, count: stored.taken };
  await tx.putWindow(scope, key, { windowStart: stored.windowStart, taken: stored.taken + 1 });
  return { granted: true, windowStart: stored.windowStart, count: stored.taken + 1 };
}

/** Takes one slot of `key`'s window in one transaction (see reserveIn). */
export function reserve(windows: LimiterWindows, scope: string, key: string, rule: WindowRule): Promise<Reservation> {
  return windows.transaction((tx) => reserveIn(tx, scope, key, rule));
}

/** Slots taken in `key`'s current window (0 when it is over or absent), without taking one. */
export async function takenNow(windows: LimiterRows, scope: string, key: string, expiredBefore: number): Promise<number> {
  const row = await windows.window(scope, key);
  return row && row.windowStart >= expiredBefore ? row.taken : 0;
}
