// The SLA report on a history whose every figure is worked out by hand: four hours of checks a
// minute apart (all up; half down; in maintenance; none), reported whole, from a ragged start,
// and after the raw rows are pruned; the period's parsing and its limits.
import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { SqliteMonitorStore } from '../../../../src/store/monitor-sqlite.js';
import type { TargetConfig } from '../../../../src/config/monitor.js';
import { MaintenanceSchedule } from '../../../../daemon/services/monitor/maintenance.js';
import { buildReport, parseInstant, reportRange } from '../../../../daemon/services/monitor/report.js';
import { statusBadge, uptimeBadge } from '../../../../daemon/services/monitor/badges.js';
import { tempDir } from '../../../helpers/tmp.js';

const MIN = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 2, 2, 0, 0, 0);
const target = { name: 'api', label: 'API' } as TargetConfig;
const schedule = new MaintenanceSchedule([{ kind: 'once', name: 'patch', title: 'Patching', timezone: 'UTC', fromMs: T0 + 2 * HOUR, toMs: T0 + 3 * HOUR }]);

const dirs: { remove(): void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

/**
 * Hour 0: 60 checks up, 10..69 ms. Hour 1: 30 up at 200 ms, then 30 down (an incident from
 * 01:30 to 02:00). Hour 2: 60 down checks inside the maintenance window. Hour 3: no checks.
 */
async function knownHistory(): Promise<SqliteMonitorStore> {
  const d = tempDir();
  dirs.push(d);
  const s = new SqliteMonitorStore(join(d.path, 'monitor.db'));
  const at = (ms: number): string => new Date(ms).toISOString();
  for (let i = 0; i < 60; i++) await s.recordSnapshot('api', { status: 'operational', checked_at: at(T0 + i * MIN), response_time_ms: 10 + i });
  for (let i = 0; i < 30; i++) await s.recordSnapshot('api', { status: 'operational', checked_at: at(T0 + HOUR + i * MIN), response_time_ms: 200 });
  for (let i = 30; i < 60; i++) await s.recordSnapshot('api', { status: 'down', checked_at: at(T0 + HOUR + i * MIN), response_time_ms: 0, error: 'HTTP 503' });
  for (let i = 0; i < 60; i++) await s.recordSnapshot('api', { status: 'down', checked_at: at(T0 + 2 * HOUR + i * MIN), response_time_ms: 0, maintenance: true });
  const inc = await s.openIncident('api', at(T0 + HOUR + 30 * MIN), 'HTTP 503', 30);
  await s.resolveIncident(inc.id, at(T0 + 2 * HOUR));
  return s;
}

describe('SLA report', () => {
  it('gives the hand-worked figures for the whole history', async () => {
    const s = await knownHistory();
    const r = await buildReport(s, schedule, target, T0, T0 + 4 * HOUR, T0 + 5 * HOUR);
    expect(r).toMatchObject({
      target: 'api',
      label: 'API',
      from: '2026-03-02T00:00:00.000Z',
      to: '2026-03-02T04:00:00.000Z',
      uptime: 75,
      downtime_minutes: 30,
      checks: { operational: 90, degraded: 0, down: 30, maintenance: 60, counted: 120 },
      minutes: { period: 240, operational: 90, degraded: 0, down: 30, maintenance: 60, no_data: 60 },
      incident_count: 1,
      maintenance_windows: [{ name: 'patch', title: 'Patching', start: '2026-03-02T02:00:00.000Z', end: '2026-03-02T03:00:00.000Z' }],
    });
    expect(r.incidents).toMatchObject([{ started_at: '2026-03-02T01:30:00.000Z', ended_at: '2026-03-02T02:00:00.000Z', duration_s: 1800, in_period_s: 1800, cause: 'HTTP 503' }]);
    // Latency over the 90 timed checks: 10..69 ms then 30 of 200 ms; maintenance checks excluded.
    expect(r.latency).toMatchObject({ count: 90, min: 10, max: 200, p50: 54 });
    expect(r.latency!.mean).toBeCloseTo((((10 + 69) / 2) * 60 + 200 * 30) / 90, 1);
    expect(Math.abs(r.latency!.p95 - 200)).toBeLessThanOrEqual(2);
    await s.close();
  });

  it('counts a ragged start from raw rows, and clips an incident to the period', async () => {
    const s = await knownHistory();
    const r = await buildReport(s, schedule, target, T0 + 30 * MIN, T0 + HOUR + 45 * MIN, T0 + 5 * HOUR);
    expect(r.checks).toEqual({ operational: 60, degraded: 0, down: 15, maintenance: 0, counted: 75 });
    expect(r.uptime).toBe(80);
    expect(r.minutes).toEqual({ period: 75, operational: 60, degraded: 0, down: 15, maintenance: 0, no_data: 0 });
    expect(r.incidents[0]!.in_period_s).toBe(15 * 60);
    expect(r.maintenance_windows).toEqual([]);
    await s.close();
  });

  it('once raw rows are pruned, a ragged edge is no data and whole hours still count', async () => {
    const s = await knownHistory();
    await s.prune({ rawBeforeMs: T0 + 4 * HOUR, rollupsBeforeMs: T0 - DAY });
    const r = await buildReport(s, schedule, target, T0 + 30 * MIN, T0 + 4 * HOUR, T0 + 5 * HOUR);
    expect(r.checks).toEqual({ operational: 30, degraded: 0, down: 30, maintenance: 60, counted: 60 });
    expect(r.minutes).toEqual({ period: 210, operational: 30, degraded: 0, down: 30, maintenance: 60, no_data: 90 });
    expect(r.uptime).toBe(50);
    await s.close();
  });

  it('counts downtime over watched time only: a target first checked 6 minutes before the period ends has at most 6 down minutes', async () => {
    const d = tempDir();
    dirs.push(d);
    const s = new SqliteMonitorStore(join(d.path, 'monitor.db'));
    // Added at 00:54 and down ever since: six checks a minute apart, an incident from the first.
    for (let i = 54; i < 60; i++) await s.recordSnapshot('api', { status: 'down', checked_at: new Date(T0 + i * MIN).toISOString(), response_time_ms: 0, error: 'HTTP 503' });
    await s.openIncident('api', new Date(T0 + 54 * MIN).toISOString(), 'HTTP 503', 6);
    // The period ends on the hour: before this rule the whole hour 00:00-01:00 was shared among
    // its six down checks, 60 down minutes beside an incident 6 minutes long.
    const r = await buildReport(s, schedule, target, T0 - DAY, T0 + HOUR, T0 + HOUR);
    expect(r.downtime_minutes).toBe(6);
    expect(r.minutes).toEqual({ period: 25 * 60, operational: 0, degraded: 0, down: 6, maintenance: 0, no_data: 25 * 60 - 6 });
    expect(r.watched_from).toBe(new Date(T0 + 54 * MIN).toISOString());
    expect(r.watched_seconds).toBe(360);
    expect(r.incidents[0]!.in_period_s).toBe(360);
    // A period that starts after the first check is watched whole; one that ends before it, not at all.
    expect(await buildReport(s, schedule, target, T0 + 55 * MIN, T0 + HOUR, T0 + HOUR)).toMatchObject({ watched_from: new Date(T0 + 55 * MIN).toISOString(), watched_seconds: 300, downtime_minutes: 5 });
    expect(await buildReport(s, schedule, target, T0 - DAY, T0, T0 + HOUR)).toMatchObject({ watched_from: null, watched_seconds: 0, downtime_minutes: 0, uptime: null, minutes: { no_data: 24 * 60 } });
    await s.close();
  });

  it('a target watched since before the period is watched the whole period', async () => {
    const s = await knownHistory();
    expect(await buildReport(s, schedule, target, T0 + 30 * MIN, T0 + 4 * HOUR, T0 + 5 * HOUR)).toMatchObject({ watched_from: new Date(T0 + 30 * MIN).toISOString(), watched_seconds: 210 * 60 });
    await s.close();
  });

  it('reads dates and RFC 3339 times, cuts `to` at now, and refuses the rest with a readable error', () => {
    const now = T0 + 10 * DAY;
    expect(parseInstant('from', '2026-03-02')).toBe(T0);
    expect(parseInstant('from', '2026-03-02T01:00:00+01:00')).toBe(T0);
    expect(reportRange(undefined, undefined, now)).toEqual({ fromMs: now - 30 * DAY, toMs: now });
    expect(reportRange('2026-03-02', '2099-01-01', now)).toEqual({ fromMs: T0, toMs: now });
    expect(() => reportRange('yesterday', undefined, now)).toThrow(/from must be a date/);
    expect(() => reportRange('2026-03-02T01:00:00', undefined, now)).toThrow(/with a zone/);
    expect(parseInstant('from', '2026-03-02T01:00+01:00')).toBe(T0); // seconds may be left out
    // Days a month lacks, 24:00 and impossible offsets are refused, not rolled over.
    for (const bad of ['2026-02-31', '2026-02-29', '2026-03-02T24:00:00Z', '2026-03-02T01:00:00+25:00', '2026-13-01']) expect(() => parseInstant('from', bad), bad).toThrow(/from must be a date/);
    expect(() => reportRange('2026-03-05', '2026-03-04', now)).toThrow(/from must be before to/);
    expect(() => reportRange('2099-01-01', undefined, now)).toThrow(/before now/);
    expect(() => reportRange('2020-01-01', '2026-03-01', now)).toThrow(/at most 400 days/);
  });
});

describe('badges', () => {
  it('say the status and the uptime, coloured, with every text escaped', () => {
    const base = { label: 'x', latest: null, recent: [] };
    expect(statusBadge('API', { ...base, latest: { status: 'down', checked_at: '', response_time_ms: 0 } })).toContain('aria-label="API: down"');
    expect(statusBadge('API', { ...base, maintenance: { name: 'm' } })).toContain('>maintenance<');
    expect(statusBadge('API', base)).toContain('no data');
    expect(uptimeBadge('uptime 30d', 99.95)).toContain('99.95%');
    expect(uptimeBadge('uptime 30d', 99.95)).toContain('#2e8540');
    expect(uptimeBadge('uptime 30d', 90)).toContain('#c62828');
    const hostile = statusBadge('<script>alert(1)</script>', base);
    expect(hostile).not.toContain('<script>');
    expect(hostile).toContain('&#60;script&#62;');
  });
});
