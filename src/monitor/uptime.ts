// The monitor's uptime rule, in one place: how a check is classified (its outcome) and how
// outcomes count towards uptime. The stores fold and count checks by outcome; status, status
// cache, dashboard and report compute uptime from those counts here.

/** The outcomes of a check, in the order the stores keep their counts. */
export const OUTCOMES = ['operational', 'degraded', 'down', 'maintenance'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** The statuses that are an outcome of their own; a check with any other status is down. */
export const OWN_STATUSES = ['operational', 'degraded'] as const;

/** Checks of a period by outcome; `maintenance` checks count neither up nor down. */
export type CheckCounts = Record<Outcome, number>;

/** Up and counted checks of a period: the two figures an uptime percentage is made of. */
export interface Uptime {
  total: number;
  up: number;
}

/** A check's outcome: a check in maintenance is maintenance whatever its status. */
export function outcomeOf(status: string, maintenance: boolean): Outcome {
  if (maintenance) return 'maintenance';
  return (OWN_STATUSES as readonly string[]).includes(status) ? (status as Outcome) : 'down';
}

/** Degraded counts as up; maintenance in neither figure. */
export function upAndTotal(c: CheckCounts): Uptime {
  return { total: c.operational + c.degraded + c.down, up: c.operational + c.degraded };
}

/** Counts one more check of `outcome` into `u`, by the same rule as `upAndTotal`. */
export function countCheck(u: Uptime, outcome: Outcome): void {
  if (outcome === 'maintenance') return;
  u.total++;
  if (outcome !== 'down') u.up++;
}

/** Percent with two decimals, rounded down: one failed check in 100,000 is 99.99, never 100. */
export function pct(u: Uptime): number | null {
  if (u.total === 0) return null;
  return u.up === u.total ? 100 : Math.floor((u.up * 10000) / u.total) / 100;
}
