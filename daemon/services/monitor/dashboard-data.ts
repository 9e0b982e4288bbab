// What the dashboard reads per target besides its status: 90 daily uptime cells and 24 hourly
// latency means, both straight from the rollups (a row per day or hour, no raw rows).
import type { MonitorStore } from '../../../src/store/monitor.js';
import type { DayCell } from './dashboard.js';
import { pct } from './status.js';

const HOUR = 3_600_000;
const DAY = 86_400_000;
export const DASHBOARD_DAYS = 90;
export const DASHBOARD_HOURS = 24;

/** One cell per UTC day, oldest first, today last; a day without checks has uptime null. */
export async function dayCells(store: MonitorStore, target: string, nowMs: number): Promise<DayCell[]> {
  const first = Math.floor(nowMs / DAY) * DAY - (DASHBOARD_DAYS - 1) * DAY;
  const rows = new Map((await store.rollups(target, 'day', first, Infinity)).map((r) => [r.start, r]));
  const out: DayCell[] = [];
  for (let i = 0; i < DASHBOARD_DAYS; i++) {
    const start = first + i * DAY;
    const r = rows.get(start);
    const counted = r ? r.operational + r.degraded + r.down : 0;
    out.push({
      date: new Date(start).toISOString().slice(0, 10),
      uptime: pct({ total: counted, up: r ? r.operational + r.degraded : 0 }),
      checks: counted,
      down: r?.down ?? 0,
      maintenance: r?.maintenance ?? 0,
    });
  }
  return out;
}

/** Mean response time per hour over the last 24 hours (the current hour last); null: no timed check. */
export async function hourlyMeans(store: MonitorStore, target: string, nowMs: number): Promise<(number | null)[]> {
  const first = Math.floor(nowMs / HOUR) * HOUR - (DASHBOARD_HOURS - 1) * HOUR;
  const rows = new Map((await store.rollups(target, 'hour', first, Infinity)).map((r) => [r.start, r]));
  const out: (number | null)[] = [];
  for (let i = 0; i < DASHBOARD_HOURS; i++) out.push(rows.get(first + i * HOUR)?.latency?.mean ?? null);
  return out;
}
