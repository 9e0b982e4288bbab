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

/** The instant the next ping is expected after one at `afterMs`. */
export function nextDue(hb: HeartbeatConfig, afterMs: number): number {
  if (hb.schedule === undefined) return afterMs + (hb.periodMs ?? 0);
  return cronTime(hb.schedule, hb.timezone).getNextDateFrom(new Date(afterMs), hb.timezone).toMillis();
}

/** The instant past which the target is late, its last ping (or, before any, its first sighting) at `lastMs`. */
export function lateAt(hb: HeartbeatConfig, lastMs: number): number {
  return nextDue(hb, lastMs) + hb.graceMs;
}
