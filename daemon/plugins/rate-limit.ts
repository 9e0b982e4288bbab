// A fixed-window rate limiter with one counter shared by every caller (the monitor spec's rule):
// a window opens with the first request after the previous one has fully passed, and a request is
// allowed while fewer than `limit` were allowed before it. The window lives in the store and each
// request reserves its place in a transaction that locks the window (limiter-window.ts), so
// concurrent requests, several instances and restarts never exceed the limit.
import type { LimiterWindows } from '../../src/store/limiter-windows.js';
import { reserve } from './limiter-window.js';

export interface RateDecision {
  allowed: boolean;
  /** Seconds until the next window can open (for Retry-After), when refused. */
  retryAfterS: number;
  remaining: number;
}

export interface FixedWindowOptions {
  limit: number;
  windowMs: number;
  now: () => number;
  windows: LimiterWindows;
  /** Names this limiter's window in the store. */
  scope: string;
}

/** Every caller shares one counter: one key in the scope. */
const SHARED = '*';

export class FixedWindowLimiter {
  readonly limit: number;
  readonly windowMs: number;

  constructor(private readonly opts: FixedWindowOptions) {
    if (!Number.isInteger(opts.limit) || opts.limit < 1) throw new Error(`rate limit must be a whole number of at least 1, not ${opts.limit}`);
    this.limit = opts.limit;
    this.windowMs = opts.windowMs;
  }

  async take(): Promise<RateDecision> {
    const now = this.opts.now();
    // "More than windowMs since the window start" ends it: start < now - windowMs.
    const r = await reserve(this.opts.windows, this.opts.scope, SHARED, { expiredBefore: now - this.windowMs, opensAt: now, limit: this.limit });
    if (r.granted) return { allowed: true, retryAfterS: 0, remaining: this.limit - r.count };
    return { allowed: false, retryAfterS: Math.max(1, Math.ceil((r.windowStart + this.windowMs + 1 - now) / 1000)), remaining: 0 };
  }
}
