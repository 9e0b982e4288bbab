// The failure-window guard (sync sign-in limit, license abuse limit): per client address, at most
// `failures` failed attempts in a fixed window, then 429 with Retry-After until the window ends.
// Every attempt reserves its slot in the store before the expensive work (password hash, key
// lookup), so concurrent attempts never exceed the limit; a success gives its slot back.
import type { LimiterWindows } from '../../src/store/limiter-windows.js';
import type { Clock } from '../../src/util/clock.js';
import { HttpError } from './errors.js';

export interface FailureLimit {
  /** Failed attempts allowed per window; the next attempt in the window answers 429. */
  failures: number;
  windowSeconds: number;
}

/** One reserved attempt: it counts as a failure unless released. */
export interface Attempt {
  /** The attempt did not fail (or was no guess): its slot is given back. Idempotent. */
  release(): Promise<void>;
}

export interface FailureWindowOptions {
  /** Names this guard's windows in the store (one guard, one scope). */
  scope: string;
  limit: FailureLimit;
  /** The 429 text, naming what was limited. */
  refusal(retryAfterS: number): string;
}

export class FailureWindow {
  private prunedBefore = -1;

  constructor(
    private readonly windows: LimiterWindows,
    private readonly clock: Clock,
    private readonly opts: FailureWindowOptions,
  ) {
    const { failures, windowSeconds } = opts.limit;
    if (!Number.isInteger(failures) || failures < 1) throw new Error(`${opts.scope}: failures per window must be a whole number of at least 1, not ${failures}`);
    if (!Number.isInteger(windowSeconds) || windowSeconds < 1) throw new Error(`${opts.scope}: the window must be a whole number of seconds of at least 1, not ${windowSeconds}`);
  }

  /** Reserves one attempt for `client`, or throws 429 when its failures in this window are used up. */
  async reserve(client: string): Promise<Attempt> {
    const now = this.clock.now();
    const windowMs = this.opts.limit.windowSeconds * 1000;
    // Windows are aligned to the epoch, so every instance agrees where one starts.
    const start = now - (now % windowMs);
    const r = await this.windows.reserve(this.opts.scope, client, { expiredBefore: start, opensAt: start, limit: this.opts.limit.failures });
    if (this.prunedBefore !== start) {
      this.prunedBefore = start;
      await this.windows.prune(this.opts.scope, start);
    }
    if (!r.granted) {
      const retryAfter = Math.max(1, Math.ceil((r.windowStart + windowMs - now) / 1000));
      throw new HttpError(429, this.opts.refusal(retryAfter), { 'retry-after': String(retryAfter) });
    }
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        await this.windows.release(this.opts.scope, client, r.windowStart);
      },
    };
  }
}
