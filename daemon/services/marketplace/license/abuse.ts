// The abuse limit of the key endpoints: a client address with too many failed lookups
// (malformed or unknown keys — the signs of guessing) in a fixed window gets 429 with
// Retry-After until the window ends. Windows live in the store, not in process memory, so
// several marketplace instances share them.
import type { LicenseStore } from '../../../../src/store/license.js';
import type { Clock } from '../../../../src/util/clock.js';
import { HttpError } from '../../../plugins/errors.js';

export interface AbuseLimit {
  /** Failed lookups allowed per window; the next request in the window answers 429. */
  failures: number;
  windowSeconds: number;
}

export const DEFAULT_ABUSE_LIMIT: AbuseLimit = { failures: 20, windowSeconds: 600 };

export class AbuseGuard {
  constructor(
    private readonly store: LicenseStore,
    private readonly clock: Clock,
    private readonly limit: AbuseLimit,
  ) {}

  private window(): { start: number; retryAfter: number } {
    const nowS = Math.floor(this.clock.now() / 1000);
    const start = nowS - (nowS % this.limit.windowSeconds);
    return { start, retryAfter: Math.max(1, start + this.limit.windowSeconds - nowS) };
  }

  /**
   * Recent counts read from the store, per client: re-read at most once a second, so that a
   * busy client costs no query per request while other instances' failures still count.
   */
  private readonly seen = new Map<string, { start: number; failures: number; readAt: number }>();

  private async count(client: string, start: number): Promise<number> {
    const now = this.clock.now();
    const c = this.seen.get(client);
    if (c && c.start === start && now - c.readAt < 1000 && now >= c.readAt) return c.failures;
    const failures = await this.store.failures(client, start);
    if (this.seen.size > 10_000) this.seen.clear();
    this.seen.set(client, { start, failures, readAt: now });
    return failures;
  }

  /** Throws 429 when the client has used up its failures in this window. */
  async check(client: string): Promise<void> {
    const w = this.window();
    if ((await this.count(client, w.start)) >= this.limit.failures) {
      throw new HttpError(429, `too many failed license key lookups from this address; retry after ${w.retryAfter} s`, { 'retry-after': String(w.retryAfter) });
    }
  }

  async fail(client: string): Promise<void> {
    const start = this.window().start;
    const failures = await this.store.recordFailure(client, start);
    this.seen.set(client, { start, failures, readAt: this.clock.now() });
  }
}
