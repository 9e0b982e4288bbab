// The SLA report of one target over a period (GET /api/report/{target}, `mkt monitor report`):
// checks by outcome, uptime, minutes by outcome, downtime, incidents with their durations,
// latency percentiles, and the maintenance that was excluded. The accounting rules are in
// docs/monitor.md ("SLA reports"); this module is their only implementation.
import type { TargetConfig } from '../../../src/config/monitor.js';
import type { CheckCounts, MonitorStore } from '../../../src/store/monitor.js';
import { OUTCOMES, pct, upAndTotal } from '../../../src/monitor/uptime.js';
import type { ReportIncident, ReportMinutes, SlaReport } from '../../../src/schemas/monitor.js';
import type { MaintenanceSchedule } from './maintenance.js';
import { parseTimestamp } from '../../../src/util/time.js';

const HOUR = 3_600_000;
const DAY = 86_400_000;
/** A report covers at most this long (the rollups are kept 400 days by default). */
const MAX_REPORT_DAYS = 400;
/** Incidents listed in one report; `incident_count` is always the whole number. */
const MAX_REPORT_INCIDENTS = 1000;

/** `2026-11-01` (midnight UTC) or an RFC 3339 date-time with an offset or Z; anything else is refused. */
export function parseInstant(name: string, v: string): number {
  const day = /^\d{4}-\d{2}-\d{2}$/.test(v);
  const full = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i.test(v);
  // parseTimestamp refuses what Date.parse rolls over (02-31, 24:00, a +25:00 offset); it wants seconds.
  const ms = day ? parseTimestamp(`${v}T00:00:00Z`) : full ? parseTimestamp(v.replace(/^(.{16})(?=[Zz+-])/, '$1:00')) : undefined;
  if (ms === undefined) throw new RangeError(`${name} must be a date (2026-11-01) or an RFC 3339 time with a zone (2026-11-01T08:00:00Z), got ${JSON.stringify(v)}`);
  return ms;
}

/** The period of a report: `to` defaults to now and is cut at now; `from` defaults to 30 days before `to`. */
export function reportRange(from: string | undefined, to: string | undefined, nowMs: number): { fromMs: number; toMs: number } {
  const asked = to === undefined ? nowMs : parseInstant('to', to);
  const toMs = Math.min(asked, nowMs);
  const fromMs = from === undefined ? toMs - 30 * DAY : parseInstant('from', from);
  if (!(fromMs < toMs)) throw new RangeError(asked >= nowMs ? 'from must be before now: a report ends at now at the latest' : 'from must be before to');
  if (toMs - fromMs > MAX_REPORT_DAYS * DAY) throw new RangeError(`a report covers at most ${MAX_REPORT_DAYS} days; ask for a shorter period`);
  return { fromMs, toMs };
}

const round1 = (v: number): number => Math.round(v * 10) / 10;

/** Shares `minutes` among the checks of one hour (or of a ragged edge) by their outcome. */
function share(m: ReportMinutes, c: CheckCounts, minutes: number): void {
  const n = c.operational + c.degraded + c.down + c.maintenance;
  if (n === 0) {
    m.no_data += minutes;
    return;
  }
  m.operational += (minutes * c.operational) / n;
  m.degraded += (minutes * c.degraded) / n;
  m.down += (minutes * c.down) / n;
  m.maintenance += (minutes * c.maintenance) / n;
}

export async function buildReport(store: MonitorStore, schedule: MaintenanceSchedule, t: TargetConfig, fromMs: number, toMs: number, nowMs: number): Promise<SlaReport> {
  const checks: CheckCounts = { operational: 0, degraded: 0, down: 0, maintenance: 0 };
  const minutes: ReportMinutes = { period: (toMs - fromMs) / 60_000, operational: 0, degraded: 0, down: 0, maintenance: 0, no_data: 0 };
  // Rule 4a: time before the target's first check was not watched. It is no data, and the hour of
  // that first check shares only its watched part: a target added six minutes ago has at most six
  // minutes of downtime, not the whole hour its checks fell in.
  const first = await store.firstCheckAt(t.name);
  const watchedFromMs = first === undefined || first >= toMs ? toMs : Math.max(fromMs, first);
  minutes.no_data += (watchedFromMs - fromMs) / 60_000;
  const h0 = Math.ceil(watchedFromMs / HOUR) * HOUR;
  const h1 = Math.floor(toMs / HOUR) * HOUR;
  const add = (c: CheckCounts, span: number): void => {
    for (const k of OUTCOMES) checks[k] += c[k];
    share(minutes, c, span / 60_000);
  };
  if (watchedFromMs >= toMs) {
    // Nothing watched in the period: all of it is no data.
  } else if (h0 > h1) {
    add(await store.counts(t.name, watchedFromMs, toMs), toMs - watchedFromMs);
  } else {
    // Ragged edges from raw rows (none once pruned: then their minutes are no data).
    if (watchedFromMs < h0) add(await store.counts(t.name, watchedFromMs, h0), h0 - watchedFromMs);
    if (h1 < toMs) add(await store.counts(t.name, h1, toMs), toMs - h1);
    const hours = await store.rollups(t.name, 'hour', h0, h1);
    for (const r of hours) add(r, HOUR);
    minutes.no_data += ((h1 - h0) / HOUR - hours.length) * 60;
  }
  const counted = upAndTotal(checks);
  const all = await store.incidentsBetween(t.name, fromMs, toMs, MAX_REPORT_INCIDENTS + 1);
  const incidents: ReportIncident[] = all.slice(0, MAX_REPORT_INCIDENTS).map((i) => {
    const start = Math.max(fromMs, Date.parse(i.started_at));
    const end = Math.min(toMs, i.ended_at === null ? nowMs : Date.parse(i.ended_at));
    return { ...i, in_period_s: Math.max(0, Math.round((end - start) / 1000)) };
  });
  const windows = schedule.occurrences(t.name, fromMs, toMs);
  return {
    target: t.name,
    label: t.label,
    from: new Date(fromMs).toISOString(),
    to: new Date(toMs).toISOString(),
    generated_at: new Date(nowMs).toISOString(),
    watched_from: watchedFromMs < toMs ? new Date(watchedFromMs).toISOString() : null,
    watched_seconds: Math.round((toMs - watchedFromMs) / 1000),
    uptime: pct(counted),
    downtime_minutes: round1(minutes.down),
    checks: { ...checks, counted: counted.total },
    minutes: {
      period: round1(minutes.period),
      operational: round1(minutes.operational),
      degraded: round1(minutes.degraded),
      down: round1(minutes.down),
      maintenance: round1(minutes.maintenance),
      no_data: round1(minutes.no_data),
    },
    incident_count: all.length > MAX_REPORT_INCIDENTS ? (await store.incidentsBetween(t.name, fromMs, toMs, Number.MAX_SAFE_INTEGER)).length : all.length,
    incidents,
    latency: await store.latency(t.name, fromMs, toMs),
    maintenance_windows: windows.map((w) => ({ name: w.name, title: w.title, start: new Date(w.start).toISOString(), end: new Date(w.end).toISOString() })),
  };
}
