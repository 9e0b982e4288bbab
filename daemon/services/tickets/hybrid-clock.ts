// A hybrid logical clock for `updated_at`: wall-clock time, but never at or below the newest
// stamp this node has stored or seen from a peer. A node whose clock runs behind therefore
// still stamps a genuinely later edit later than the copy it edited, and wins.
import type { Clock } from '../../../src/util/clock.js';
import { formatTimestamp, parseTimestamp } from '../../../src/util/time.js';

export class HybridClock {
  private last: number;

  constructor(
    private readonly clock: Clock,
    newestSeen?: string,
  ) {
    this.last = (newestSeen !== undefined ? parseTimestamp(newestSeen) : undefined) ?? 0;
  }

  /** Records a stamp stored or received from a peer. */
  observe(stamp: string): void {
    const ms = parseTimestamp(stamp);
    if (ms !== undefined && ms > this.last) this.last = ms;
  }

  /** The stamp for a new edit: now, or 1 ms past the newest seen. */
  next(): string {
    this.last = Math.max(this.clock.now(), this.last + 1);
    return formatTimestamp(this.last);
  }
}
