// A fixed-window rate limiter with one counter shared by every caller (the monitor spec's
// rule): a window opens with the first request after the previous one has fully passed, and
// a request is allowed while fewer than `limit` were allowed before it in the window.
export interface RateDecision {
  allowed: boolean;
  /** Seconds until the next window can open (for Retry-After), when refused. */
  retryAfterS: number;
  remaining: number;
}

export class FixedWindowLimiter {
  private windowStart: number | undefined;
  private count = 0;

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  take(): RateDecision {
    const now = this.now();
    if (this.windowStart === undefined || now - this.windowStart > this.windowMs) {
      this.windowStart = now;
      this.count = 1;
      return { allowed: true, retryAfterS: 0, remaining: this.limit - 1 };
    }
    if (this.count < this.limit) {
      this.count++;
      return { allowed: true, retryAfterS: 0, remaining: this.limit - this.count };
    }
    return { allowed: false, retryAfterS: Math.max(1, Math.ceil((this.windowStart + this.windowMs + 1 - now) / 1000)), remaining: 0 };
  }
}
