// When a pull that names its device writes `last_seen_at`: at most once a minute for each device on
// each instance. A client names its device at every pull (mkt's own does), so writing the sighting
// each time made every pull a write transaction, and a device that syncs every few seconds a writer
// that contends with the pushes for SQLite's one write lock (bench/README.md, "A pull's device seen
// once a minute"). `last_seen_at` is read by people ("seen a minute ago"), as GitHub shows a
// token's last use within a window rather than to the second. Pushes and registrations still
// write it every time: they are writes already.
import type { Owner } from '../../../../src/store/sync.js';
import { dropOldest } from '../../../../src/util/bounded-map.js';

/** How long after a written sighting a pull of the same device writes none. */
export const SIGHTING_INTERVAL_MS = 60_000;
/** The devices remembered; one forgotten costs its next pull a write, nothing else. */
const MAX_REMEMBERED = 50_000;

/** The sightings this instance wrote, by owner and device. */
export class DeviceSightings {
  private readonly written = new Map<string, number>();

  constructor(private readonly max = MAX_REMEMBERED) {}

  /**
   * Whether a pull of `deviceId` at `nowMs` writes its sighting: when this instance wrote none for
   * it in the last minute, or the clock went back since (the write keeps `last_seen_at` the clock's).
   */
  due(o: Owner, deviceId: string, nowMs: number): boolean {
    const last = this.written.get(key(o, deviceId));
    return last === undefined || nowMs - last >= SIGHTING_INTERVAL_MS || nowMs < last;
  }

  /** Remembers a sighting written (after the write: one that failed is tried again at the next pull). */
  wrote(o: Owner, deviceId: string, nowMs: number): void {
    const k = key(o, deviceId);
    // Deleted first, so the map's order is the order of the writes and the oldest go first.
    this.written.delete(k);
    this.written.set(k, nowMs);
    dropOldest(this.written, this.max);
  }
}

// The owner is part of the key: a caller who names another user's device id writes nothing of
// theirs (the update is scoped by owner) and must not hold back their device's sightings either.
function key(o: Owner, deviceId: string): string {
  return `${o.appId}\n${o.userId}\n${deviceId}`;
}
