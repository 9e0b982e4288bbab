// When a heartbeat target's next ping is due and when it is late: after a period, or at the next
// time of a cron schedule in its time zone (the `cron` package walks DST gaps and overlaps).
import { CronTime } from 'cron';

export interface HeartbeatConfig {
  /** A cron expression (five or six fields), read in `timezone`. */
  schedule?: string;
  /** The expected time between pings, when there is no schedule. */
  periodMs?: number;
  /** Canonical IANA zone of the schedule (UTC by default). */
  timezone: string;
  /** How late a ping, or the end of a started run, may be before the target is down. */
  graceMs: number;
  /** The ping key from the configuration; otherwise one is generated and kept in the store. */
  pingKey?: string;
}

const crons = new Map<string, CronTime>();

function cronTime(schedule: string, zone: string): CronTime {
  const key = `${zone} ${schedule}`;
  let c = crons.get(key);
  if (!c) {
    c = new CronTime(schedule, zone);
    crons.set(key, c);
  }
  return c;
}

/** Why a schedule cannot be used, or undefined when the cron package reads it. */
export function scheduleProblem(schedule: string, zone: string): string | undefined {
  try {
    const c = new CronTime(schedule, zone);
    c.getNextDateFrom(new Date(0), zone);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * Whether the schedule is fixed to its hours (neither minute nor hour field a wildcard): cron runs
 * such a job once on the night the clocks go back, not again when its time comes round a second time.
 */
function fixedHours(schedule: string): boolean {
  if (schedule.startsWith('@')) return schedule !== '@hourly';
  const f = schedule.split(/\s+/);
  const [min, hour] = f.length === 6 ? [f[1], f[2]] : [f[0], f[1]];
  return !min?.startsWith('*') && !hour?.startsWith('*');
}

/** Whether the instant's wall-clock time already occurred earlier that night (the hour the clocks went back repeats). */
function repeatedWallTime(at: { offset: number; minus(d: { milliseconds: number }): { offset: number } }): boolean {
  for (const h of [0.5, 1, 2, 3]) {
    const gone = at.minus({ milliseconds: h * 3_600_000 }).offset - at.offset; // minutes the clocks went back
    if (gone > 0 && at.minus({ milliseconds: gone * 60_000 }).offset === at.offset + gone) return true;
  }
  return false;
}

/** The instant the next ping is expected after one at `afterMs`. */
export function nextDue(hb: HeartbeatConfig, afterMs: number): number {
  if (hb.schedule === undefined) return afterMs + (hb.periodMs ?? 0);
  const c = cronTime(hb.schedule, hb.timezone);
  let next = c.getNextDateFrom(new Date(afterMs), hb.timezone);
  // A job at 02:30 that ended after the clocks went back is not expected again at the second 02:30.
  if (fixedHours(hb.schedule)) while (repeatedWallTime(next)) next = c.getNextDateFrom(next.toJSDate(), hb.timezone);
  return next.toMillis();
}

/** The instant past which the target is late, its last ping (or, before any, its first sighting) at `lastMs`. */
export function lateAt(hb: HeartbeatConfig, lastMs: number): number {
  return nextDue(hb, lastMs) + hb.graceMs;
}
