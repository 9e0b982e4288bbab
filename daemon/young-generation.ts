// Sizes V8's young generation for a daemon: held at the size it started with while the load is
// modest, let grow while its collections are a large share of the time.
//
// V8 doubles its new space (up to 16 MiB a semi-space on 64-bit Node 20) each time enough objects
// survive its scavenges. Under a steady, modest load a server's new space reaches that maximum
// only after minutes: RSS then climbs in steps of 4-16 MiB long after warm-up, which reads as a
// leak to the sysadmin watching it and to a `MemoryMax=` (bench/README.md, "Soak, issue 35"). Held
// at 1 MiB under a heavy load, though, the scavenges run a hundred times a second and a ping cost
// a quarter more CPU than with the new space grown (bench/README.md, "The ping taken before
// fastify"). So the growth is allowed once scavenges take at least 2 % of the time for 4 quarter
// seconds in a row (a burst shorter than that, such as one large push, does not grow it), and held
// again, at whatever size it reached, once they take under 0.5 %; a modest load never reaches 2 %
// however often it is read. Allowed, it grows to its full size at V8's next growth, not by
// doublings: read each second, 3 in a row, and doubling, the new space of a 3 s load never passed
// 8 MiB, and the floor paid 7 % more CPU a request than with it free (bench/README.md, "The
// request line as bytes"). Not at the first interval under 2 %: grown half way (2-4
// MiB), a ping load's scavenges fell to 1.6 %, and the new space held there cost a ping 17 % more
// CPU than at its full size: survivors promoted to the old generation, and its marking, cost more
// than the scavenges' own time shows (bench/README.md, "The young generation let grow to its size").
//
// The size flags themselves are fixed at start-up (`v8.setFlagsFromString` of them later changes
// nothing) and `NODE_OPTIONS` refuses `--min-semi-space-size`; but V8 reads its growth factor at
// each growth, so a factor of 1 stops the growth from inside the process and a larger one allows
// it again. bin/mkt holds it for `serve` before the daemon's modules load, which would
// otherwise grow the young generation to 16 MiB before `serve` itself could hold it.
import { setFlagsFromString } from 'node:v8';
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';

const HOLD = '--semi-space-growth-factor=1';
/** V8's largest new space is 16 times its smallest: one growth reaches it. */
const GROW = '--semi-space-growth-factor=16';

/** Stops the new space from growing; safe to call more than once. */
export function holdYoungGeneration(): void {
  setFlagsFromString(HOLD);
}

export interface YoungGenerationOptions {
  /** The share of wall time in scavenges from which the new space may grow (default 0.02). */
  growShare?: number;
  /** The share under which a growing new space is held again (default 0.005). */
  holdShare?: number;
  /** Intervals in a row at or above that share before it may (default 4). */
  growAfter?: number;
  /** How often the share is read (default 250 ms). */
  intervalMs?: number;
  /** Told when the policy changes, with the last interval's share. */
  onChange?(growing: boolean, share: number): void;
}

/**
 * When the new space may grow, from the share of each interval spent in scavenges: from
 * `growAfter` intervals in a row at or above `growShare`, until the first one under `holdShare`.
 */
export class GrowthPolicy {
  private busy = 0;
  growing = false;

  constructor(
    private readonly growShare = 0.02,
    private readonly growAfter = 4,
    private readonly holdShare = 0.005,
  ) {
    if (!(holdShare <= growShare)) throw new RangeError(`the share that holds (${holdShare}) must not be above the one that grows (${growShare})`);
  }

  /** Takes one interval's share; true when the policy changed. */
  next(share: number): boolean {
    this.busy = share >= this.growShare ? this.busy + 1 : 0;
    const grow = this.growing ? share >= this.holdShare : this.busy >= this.growAfter;
    if (grow === this.growing) return false;
    this.growing = grow;
    if (!grow) this.busy = 0;
    return true;
  }
}

/**
 * Holds the young generation now, and from then on lets it grow only under a load whose scavenges
 * take a large share of the time. Returns a function that stops watching (and holds it again).
 */
export function governYoungGeneration(opts: YoungGenerationOptions = {}): () => void {
  const policy = new GrowthPolicy(opts.growShare, opts.growAfter, opts.holdShare);
  holdYoungGeneration();
  let scavengeMs = 0;
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[]) if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) scavengeMs += e.duration;
  });
  observer.observe({ entryTypes: ['gc'] });
  let since = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    const share = scavengeMs / Math.max(1, now - since);
    scavengeMs = 0;
    since = now;
    if (!policy.next(share)) return;
    setFlagsFromString(policy.growing ? GROW : HOLD);
    opts.onChange?.(policy.growing, share);
  }, opts.intervalMs ?? 250);
  // Nothing waits on this but the daemon's own work: it must not hold a stopping process open.
  timer.unref();
  return () => {
    clearInterval(timer);
    observer.disconnect();
    holdYoungGeneration();
  };
}
