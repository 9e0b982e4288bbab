// Brute-force guard for ping URLs: an address that sends too many pings with unknown keys is
// refused for the rest of the window, for every key, so a valid key gives it no different
// answer (no oracle). Memory is bounded however many addresses come.
export interface PingGuardOptions {
  /** Unknown-key pings an address may send per window. */
  limit?: number;
  windowMs?: number;
  /** Addresses tracked at most (the oldest are forgotten first). */
  maxAddresses?: number;
  now: () => number;
}

export class PingGuard {
  private readonly failures = new Map<string, { count: number; windowEnd: number }>();
  private readonly limit: number;
  private readonly windowMs: number;
  private readonly max: number;

  constructor(private readonly opts: PingGuardOptions) {
    this.limit = opts.limit ?? 30;
    this.windowMs = opts.windowMs ?? 60_000;
    this.max = opts.maxAddresses ?? 10_000;
  }

  /** Seconds until the address may ping again, or 0 when it may now. */
  blockedFor(address: string): number {
    const f = this.failures.get(address);
    const now = this.opts.now();
    if (!f || f.windowEnd <= now) return 0;
    return f.count >= this.limit ? Math.ceil((f.windowEnd - now) / 1000) : 0;
  }

  /** Counts a ping with an unknown key. */
  failed(address: string): void {
    const now = this.opts.now();
    let f = this.failures.get(address);
    if (!f || f.windowEnd <= now) {
      this.failures.delete(address);
      if (this.failures.size >= this.max) this.forget(now);
      f = { count: 0, windowEnd: now + this.windowMs };
      this.failures.set(address, f);
    }
    f.count++;
  }

  /** Drops expired windows, then the oldest ones while still full. */
  private forget(now: number): void {
    for (const [a, f] of this.failures) if (f.windowEnd <= now) this.failures.delete(a);
    for (const a of this.failures.keys()) {
      if (this.failures.size < this.max) break;
      this.failures.delete(a);
    }
  }
}
