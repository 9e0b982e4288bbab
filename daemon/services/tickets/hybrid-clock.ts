// A hybrid logical clock for `updated_at`: wall-clock time, but never at or below the newest
// stamp this node has stored or seen from a peer. A node whose clock runs behind therefore
// still stamps a genuinely later edit later than the copy it edited, and wins.
import type { Clock } from '../../../src/util/clock.js';
import { DEFAULT_MAX_SKEW_MS, formatStamp, parseStamp } from './stamp.js';

export class HybridClock {
  private last = 0;

  constructor(
    private readonly clock: Clock,
    newestSeen?: string,
    /** Stamps further ahead of the wall clock than this are not followed (see stamp.ts). */
    private readonly maxSkewMs = DEFAULT_MAX_SKEW_MS,
  ) {
    if (newestSeen !== undefined) this.observe(newestSeen);
  }

  /**
   * Records a stamp stored or received from a peer; false when it is ignored because it
   * does not parse or lies beyond the allowed skew. Following such a stamp would drag every
   * later edit of this node into the future with it, up to a year no stamp can write.
   */
  observe(stamp: string): boolean {
    const ms = parseStamp(stamp);
    if (ms === undefined || ms > this.clock.now() + this.maxSkewMs) return false;
    if (ms > this.last) this.last = ms;
    return true;
  }

  /**
   * The newest stamp this clock has issued or followed, in ms. It may lie a few ms past
   * `now + maxSkew` (an edit right after observing a stamp at the bound), so a merge must not
   * take this node's own stamps for leftovers beyond the skew.
   */
  get newest(): number {
    return this.last;
  }

  /** The stamp for a new edit: now, or 1 ms past the newest seen; always canonical RFC 3339. */
  next(): string {
    const ms = Math.max(Math.floor(this.clock.now()), this.last + 1);
    const stamp = formatStamp(ms); // throws, leaving the clock as it was, past year 9999
    this.last = ms;
    return stamp;
  }
}
