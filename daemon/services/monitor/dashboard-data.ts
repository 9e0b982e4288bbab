// What the dashboard reads per target besides its status: 90 daily uptime cells and 24 hourly
// latency means, both straight from the rollups (a row per day or hour, no raw rows).
import type { MonitorStore, Rollup, RollupGrain } from '../../../src/store/monitor.js';
import { pct, upAndTotal } from '../../../src/monitor/uptime.js';
import type { DayCell } from './dashboard.js';

const HOUR = 3_600_000;
const DAY = 86_400_000;
const DASHBOARD_DAYS = 90;
const DASHBOARD_HOURS = 24;
const NO_CHECKS = { total: 0, up: 0 };

/** The last `count` buckets of `size` ms, the one holding nowMs last, each with its rollup row if it has one. */
async function lastBuckets(store: MonitorStore, target: string, grain: RollupGrain, size: number, count: number, nowMs: number): Promise<{ start: number; row: Rollup | undefined }[]> {
  const first = Math.floor(nowMs / size) * size - (count - 1) * size;
  const rows = new Map((await store.rollups(target, grain, first, Infinity)).map((r) => [r.start, r]));
  return Array.from({ length: count }, (_, i) => ({ start: first + i * size, row: rows.get(first + i * size) }));
}

/** One cell per UTC day, oldest first, today last; a day without checks has uptime null. */
export async function dayCells(store: MonitorStore, target: string, nowMs: number): Promise<DayCell[]> {
  return (await lastBuckets(store, target, 'day', DAY, DASHBOARD_DAYS, nowMs)).map(({ start, row }) => {
    const counted = row ? upAndTotal(row) : NO_CHECKS;
    return {
      date: new Date(start).toISOString().slice(0, 10),
      uptime: pct(counted),
      checks: counted.total,
      down: row?.down ?? 0,
      maintenance: row?.maintenance ?? 0,
    };
  });
}

/** Mean response time per hour over the last 24 hours (the current hour last); null: no timed check. */
export async function hourlyMeans(store: MonitorStore, target: string, nowMs: number): Promise<(number | null)[]> {
  return (await lastBuckets(store, target, 'hour', HOUR, DASHBOARD_HOURS, nowMs)).map(({ row }) => row?.latency?.mean ?? null);
}
