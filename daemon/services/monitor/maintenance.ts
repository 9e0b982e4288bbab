// Maintenance windows: which configured window (one-off, or recurring on weekdays, in an IANA time
// zone) covers an instant for a target. Pure and lazy: occurrences are computed per local day on
// demand, never materialised ahead (Uptime Kuma's precomputed recurrences pinned a CPU, #2889).
import type { MaintenanceWindowConfig, Weekday } from '../../../src/config/monitor.js';
import { epochToLocal, localToEpoch } from '../../../src/util/zoned-time.js';

/** One occurrence of a window: [start, end) in epoch ms. */
export interface MaintenanceOccurrence {
  name: string;
  title: string;
  start: number;
  end: number;
}

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
/** `occurrences` and `coveredMs` refuse longer ranges: the cost grows with the days asked for. */
const MAX_RANGE_DAYS = 400;
const NEXT_HORIZON_MS = 14 * DAY_MS;
/** Index = (days since 1970-01-01) mod 7; 1970-01-01 was a Thursday. */
const WEEKDAY_OF_EPOCH_DAY: readonly Weekday[] = ['thu', 'fri', 'sat', 'sun', 'mon', 'tue', 'wed'];

interface Compiled {
  name: string;
  title: string;
  index: number;
  targets?: ReadonlySet<string>;
  zone: string;
  once?: { start: number; end: number };
  recurring?: {
    days: ReadonlySet<Weekday>;
    startMinute: number;
    durationMs?: number;
    endMinute?: number;
    /** Local days before an instant's own day whose occurrence may still be running. */
    lookbackDays: number;
  };
}

export class MaintenanceSchedule {
  private readonly windows: Compiled[];

  constructor(windows: MaintenanceWindowConfig[]) {
    this.windows = windows.map((w, index) => {
      const base = { name: w.name, title: w.title, index, zone: w.timezone, ...(w.targets ? { targets: new Set(w.targets) } : {}) };
      if (w.kind === 'once') return { ...base, once: { start: w.fromMs, end: w.toMs } };
      // An `end` is at most a day after the start, plus an hour or two of clock change.
      const longest = w.durationMs ?? DAY_MS + 3 * 3_600_000;
      return {
        ...base,
        recurring: {
          days: new Set(w.weekdays),
          startMinute: w.startMinute,
          durationMs: w.durationMs,
          endMinute: w.endMinute,
          lookbackDays: Math.ceil((w.startMinute * MINUTE_MS + longest) / DAY_MS) + 1,
        },
      };
    });
  }

  /** The occurrence covering `ms` for this target (start <= ms < end), or undefined. O(windows). */
  activeAt(target: string, ms: number): MaintenanceOccurrence | undefined {
    let best: { occ: MaintenanceOccurrence; index: number } | undefined;
    for (const w of this.windows) {
      if (!applies(w, target)) continue;
      const found = w.once ? inside(w, w.once.start, w.once.end, ms) : this.activeRecurring(w, ms);
      // Several may cover the instant: the one that began first, then the first in the config.
      if (found && (!best || found.start < best.occ.start || (found.start === best.occ.start && w.index < best.index))) best = { occ: found, index: w.index };
    }
    return best?.occ;
  }

  /**
   * Occurrences for the target overlapping [fromMs, toMs), sorted by start; cost proportional to
   * the days in the range, not to history. A range past 400 days is a RangeError.
   */
  occurrences(target: string, fromMs: number, toMs: number): MaintenanceOccurrence[] {
    if (!Number.isFinite(fromMs) || !Number.isFinite(toMs)) throw new RangeError('maintenance occurrences need a finite range');
    if (toMs - fromMs > MAX_RANGE_DAYS * DAY_MS) throw new RangeError(`maintenance occurrences are computed for at most ${MAX_RANGE_DAYS} days at a time`);
    if (toMs <= fromMs) return [];
    const found: { occ: MaintenanceOccurrence; index: number }[] = [];
    for (const w of this.windows) {
      if (!applies(w, target)) continue;
      if (w.once) {
        if (w.once.start < toMs && w.once.end > fromMs) found.push({ occ: occurrence(w, w.once.start, w.once.end), index: w.index });
        continue;
      }
      const rec = w.recurring!;
      const first = localDay(w.zone, fromMs) - rec.lookbackDays;
      const last = localDay(w.zone, toMs);
      for (let day = first; day <= last; day++) {
        const occ = this.onDay(w, day);
        if (occ && occ.start < toMs && occ.end > fromMs) found.push({ occ, index: w.index });
      }
    }
    found.sort((a, b) => a.occ.start - b.occ.start || a.index - b.index);
    return found.map((f) => f.occ);
  }

  /** The next occurrence starting at or after ms (within 14 days), or undefined. */
  next(target: string, ms: number): MaintenanceOccurrence | undefined {
    return this.occurrences(target, ms, ms + NEXT_HORIZON_MS).find((o) => o.start >= ms);
  }

  /** Total milliseconds of [fromMs, toMs) covered by maintenance for the target (overlaps counted once). */
  coveredMs(target: string, fromMs: number, toMs: number): number {
    let covered = 0;
    let reached = fromMs; // everything before this is already counted
    for (const o of this.occurrences(target, fromMs, toMs)) {
      const start = Math.max(o.start, reached);
      const end = Math.min(o.end, toMs);
      if (end > start) {
        covered += end - start;
        reached = end;
      }
    }
    return covered;
  }

  private activeRecurring(w: Compiled, ms: number): MaintenanceOccurrence | undefined {
    const today = localDay(w.zone, ms);
    let best: MaintenanceOccurrence | undefined;
    // Today's occurrence, or one that began on an earlier local day and is still running.
    for (let day = today; day >= today - w.recurring!.lookbackDays; day--) {
      const occ = this.onDay(w, day);
      if (occ && occ.start <= ms && ms < occ.end && (!best || occ.start < best.start)) best = occ;
    }
    return best;
  }

  /** The occurrence a recurring window starts on a local day (days since 1970-01-01), if any. */
  private onDay(w: Compiled, day: number): MaintenanceOccurrence | undefined {
    const rec = w.recurring!;
    if (!rec.days.has(WEEKDAY_OF_EPOCH_DAY[((day % 7) + 7) % 7]!)) return undefined;
    const midnight = day * DAY_MS;
    const start = localToEpoch(w.zone, midnight + rec.startMinute * MINUTE_MS);
    let end: number;
    if (rec.durationMs !== undefined) end = start + rec.durationMs;
    else {
      const endMinute = rec.endMinute!;
      end = localToEpoch(w.zone, midnight + (endMinute <= rec.startMinute ? DAY_MS : 0) + endMinute * MINUTE_MS);
    }
    // A start pushed past its end by a clock change leaves nothing that day.
    return end > start ? occurrence(w, start, end) : undefined;
  }
}

function applies(w: Compiled, target: string): boolean {
  return !w.targets || w.targets.has(target);
}

function occurrence(w: Compiled, start: number, end: number): MaintenanceOccurrence {
  return { name: w.name, title: w.title, start, end };
}

function inside(w: Compiled, start: number, end: number, ms: number): MaintenanceOccurrence | undefined {
  return start <= ms && ms < end ? occurrence(w, start, end) : undefined;
}

function localDay(zone: string, ms: number): number {
  return Math.floor(epochToLocal(zone, ms) / DAY_MS);
}
