// Holds V8's young generation at the size it started with, for the life of a daemon.
//
// V8 doubles its new space (up to 32 MiB on 64-bit Node) each time enough objects survive its
// scavenges, and under a steady, modest load a server's new space reaches that maximum only after
// minutes: RSS then climbs in steps of 4-16 MiB long after warm-up, which reads as a leak to the
// sysadmin watching it and to a `MemoryMax=` (bench/README.md, "Soak, issue 35"). The size flags
// themselves are fixed at start-up (`v8.setFlagsFromString` of them later changes nothing) and
// `NODE_OPTIONS` refuses `--min-semi-space-size`; but V8 reads its growth factor at each growth,
// so a factor of 1 stops the growth from inside the process. A daemon started with a size of its
// own (`node --min-semi-space-size=N`) keeps that size. bin/mkt sets the same flag for `serve`
// before the daemon's modules load, which would otherwise grow the new space first.
import { setFlagsFromString } from 'node:v8';

/** Stops the new space from growing; safe to call more than once. */
export function holdYoungGeneration(): void {
  setFlagsFromString('--semi-space-growth-factor=1');
}

