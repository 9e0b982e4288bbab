// The failure-window guard (sync sign-in limit, license abuse limit): per client address, at most
// `failures` failed attempts in a fixed window, then 429 with Retry-After until the window ends.
// Two ways to spend a slot, both reserved in a transaction that locks the window (limiter-window.ts)
// so concurrent attempts on any instance never exceed the limit: `reserve` before expensive work
// (a password hash), given back on success; `answer` for cheap work whose answer is the secret (a
// key lookup): a failed answer takes its slot before it is sent, or becomes the 429, so a success
// costs no write (and at most one read a second).
import type { LimiterWindows } from '../../src/store/limiter-windows.js';
import { reserve, takenNow } from './limiter-window.js';
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

  /** Windows are aligned to the epoch, so every instance agrees where one starts. */
  private window(): { now: number; start: number; windowMs: number } {
    const now = this.clock.now();
    const windowMs = this.opts.limit.windowSeconds * 1000;
    return { now, start: now - (now % windowMs), windowMs };
  }

  private refused(windowStart: number, w: { now: number; windowMs: number }): HttpError {
    const retryAfter = Math.max(1, Math.ceil((windowStart + w.windowMs - w.now) / 1000));
    return new HttpError(429, this.opts.refusal(retryAfter), { 'retry-after': String(retryAfter) });
  }

  /**
   * Recent counts per client, read from the store at most once a second: the check before a cheap
   * lookup is advisory (it only turns a full window's real keys away), so it need not cost a query
   * per request. The failures themselves are counted by the atomic take, never from here.
   */
  private readonly recent = new Map<string, { windowStart: number; taken: number; readAt: number }>();

  /** The count read within the last second, if any: most requests need no promise for it. */
  private recentCount(client: string, w: { now: number; start: number }): number | undefined {
    const c = this.recent.get(client);
    return c && c.windowStart === w.start && w.now >= c.readAt && w.now - c.readAt < 1000 ? c.taken : undefined;
  }

  private async readTaken(client: string, w: { now: number; start: number }): Promise<number> {
    const taken = await takenNow(this.windows, this.opts.scope, client, w.start);
    this.remember(client, w.start, taken, w.now);
    return taken;
  }

  private remember(client: string, windowStart: number, taken: number, now: number): void {
    if (this.recent.size >= 10_000 && !this.recent.has(client)) this.recent.clear();
    this.recent.set(client, { windowStart, taken, readAt: now });
  }

  /** Takes one slot of `client`'s window, or throws 429 when its failures in this window are used up. */
  private async take(client: string): Promise<{ windowStart: number }> {
    const w = this.window();
    const r = await reserve(this.windows, this.opts.scope, client, { expiredBefore: w.start, opensAt: w.start, limit: this.opts.limit.failures });
    if (this.prunedBefore !== w.start) {
      this.prunedBefore = w.start;
      await this.windows.prune(this.opts.scope, w.start);
    }
    this.remember(client, r.windowStart, r.count, w.now);
    if (!r.granted) throw this.refused(r.windowStart, w);
    return { windowStart: r.windowStart };
  }

  /**
   * Runs a cheap attempt whose answer must be limited (a key lookup is an oracle). A client whose
   * failures are used up gets 429 before it runs; a failed answer takes its slot atomically before
   * it is returned, and is replaced by 429 when the window filled meanwhile. Only attempts without
   * side effects when they fail belong here.
   */
  async answer<T>(client: string, attempt: () => Promise<T>, failed: (result: T) => boolean): Promise<T> {
    const w = this.window();
    if ((this.recentCount(client, w) ?? (await this.readTaken(client, w))) >= this.opts.limit.failures) throw this.refused(w.start, w);
    const result = await attempt();
    if (failed(result)) await this.take(client);
    return result;
  }

  /**
   * answer for an attempt that answers without waiting (from memory), when nothing needs a
   * promise: the client's count read within the last second and below the limit, and a result
   * that did not fail. Undefined otherwise (answer decides then: a 429, or a failure's slot).
   */
  answerNow<T>(client: string, attempt: () => T | undefined, failed: (result: T) => boolean): T | undefined {
    const taken = this.recentCount(client, this.window());
    if (taken === undefined || taken >= this.opts.limit.failures) return undefined;
    const result = attempt();
    return result === undefined || failed(result) ? undefined : result;
  }

  /** Reserves one attempt before expensive work, or throws 429 when the client's failures are used up. */
  async reserve(client: string): Promise<Attempt> {
    const r = await this.take(client);
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
