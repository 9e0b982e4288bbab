// Maintenance windows (daemon/services/monitor/maintenance.ts): [start, end) boundaries, weekdays,
// overnight windows, DST in Europe/Berlin and America/New_York (2026 dates), per-target windows,
// ranges, covered time, and the lazy evaluation that keeps a year of a daily window cheap.
import { describe, expect, it } from 'vitest';
import { parseMonitorConfig, type MaintenanceWindowConfig, type RecurringMaintenanceConfig } from '../../../../src/config/monitor.js';
import { MaintenanceSchedule } from '../../../../daemon/services/monitor/maintenance.js';
import { localToEpoch } from '../../../../src/util/zoned-time.js';

const H = 3_600_000;
const DAY = 24 * H;
const utc = (y: number, mo: number, d: number, h = 0, mi = 0): number => Date.UTC(y, mo - 1, d, h, mi);

function daily(name: string, start: string, extra: Partial<RecurringMaintenanceConfig> = {}): RecurringMaintenanceConfig {
  const [h, m] = start.split(':').map(Number) as [number, number];
  return { kind: 'recurring', name, title: name, timezone: 'UTC', weekdays: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], startMinute: h * 60 + m, durationMs: H, ...extra };
}
function once(name: string, fromMs: number, toMs: number, targets?: string[]): MaintenanceWindowConfig {
  return { kind: 'once', name, title: name, timezone: 'UTC', fromMs, toMs, ...(targets ? { targets } : {}) };
}
const starts = (s: MaintenanceSchedule, target: string, from: number, to: number): number[] => s.occurrences(target, from, to).map((o) => o.start);

describe('activeAt: an occurrence covers [start, end)', () => {
  it('a one-off window: in exactly at start, out one ms before, out exactly at end', () => {
    const s = new MaintenanceSchedule([once('deploy', utc(2026, 6, 1, 10), utc(2026, 6, 1, 12))]);
    expect(s.activeAt('api', utc(2026, 6, 1, 10))).toEqual({ name: 'deploy', title: 'deploy', start: utc(2026, 6, 1, 10), end: utc(2026, 6, 1, 12) });
    expect(s.activeAt('api', utc(2026, 6, 1, 10) - 1)).toBeUndefined();
    expect(s.activeAt('api', utc(2026, 6, 1, 12) - 1)?.name).toBe('deploy');
    expect(s.activeAt('api', utc(2026, 6, 1, 12))).toBeUndefined();
  });

  it('a recurring window: the same boundaries on every day it runs', () => {
    const s = new MaintenanceSchedule([daily('nightly', '02:00', { durationMs: 2 * H })]);
    for (const day of [1, 2, 3]) {
      expect(s.activeAt('api', utc(2026, 6, day, 2))).toMatchObject({ start: utc(2026, 6, day, 2), end: utc(2026, 6, day, 4) });
      expect(s.activeAt('api', utc(2026, 6, day, 2) - 1)).toBeUndefined();
      expect(s.activeAt('api', utc(2026, 6, day, 4))).toBeUndefined();
    }
  });

  it('weekdays: only the listed days start an occurrence (2026-06-01 is a Monday)', () => {
    const s = new MaintenanceSchedule([daily('db', '02:00', { weekdays: ['wed', 'sun'], durationMs: 2 * H })]);
    expect(s.activeAt('api', utc(2026, 6, 3, 3))?.name).toBe('db'); // Wednesday
    expect(s.activeAt('api', utc(2026, 6, 4, 3))).toBeUndefined(); // Thursday
    expect(s.activeAt('api', utc(2026, 6, 7, 2, 30))?.name).toBe('db'); // Sunday
    expect(s.activeAt('api', utc(2026, 6, 8, 2, 30))).toBeUndefined(); // Monday
  });

  it('an overnight window that began the previous local day is still found', () => {
    const byDuration = new MaintenanceSchedule([daily('late', '23:00', { weekdays: ['mon'], durationMs: 3 * H })]);
    expect(byDuration.activeAt('api', utc(2026, 6, 2, 1))).toMatchObject({ start: utc(2026, 6, 1, 23), end: utc(2026, 6, 2, 2) });
    expect(byDuration.activeAt('api', utc(2026, 6, 2, 2))).toBeUndefined();
    // The weekday is the day the occurrence starts: a Tuesday window does not cover early Tuesday.
    expect(new MaintenanceSchedule([daily('late', '23:00', { weekdays: ['tue'], durationMs: 3 * H })]).activeAt('api', utc(2026, 6, 2, 1))).toBeUndefined();
    // An end at or before the start is the next day.
    const byEnd = new MaintenanceSchedule([daily('late', '23:00', { weekdays: ['mon'], durationMs: undefined, endMinute: 120 })]);
    expect(byEnd.activeAt('api', utc(2026, 6, 2, 1, 59))).toMatchObject({ start: utc(2026, 6, 1, 23), end: utc(2026, 6, 2, 2) });
    // In Berlin (CEST, +2) Monday 23:00 local is 21:00Z; Tuesday 01:30 local is still Monday in UTC.
    const berlin = new MaintenanceSchedule([daily('late', '23:00', { weekdays: ['mon'], durationMs: 3 * H, timezone: 'Europe/Berlin' })]);
    expect(berlin.activeAt('api', utc(2026, 6, 1, 23, 30))).toMatchObject({ start: utc(2026, 6, 1, 21), end: utc(2026, 6, 2, 0) });
  });

  it('a window longer than a day is found days after it started', () => {
    const s = new MaintenanceSchedule([daily('weekend', '00:00', { weekdays: ['sat'], durationMs: 2 * DAY })]);
    expect(s.activeAt('api', utc(2026, 6, 8) - 1)).toMatchObject({ start: utc(2026, 6, 6), end: utc(2026, 6, 8) });
    expect(s.activeAt('api', utc(2026, 6, 8))).toBeUndefined();
  });

  it('when windows overlap, the one that began first is reported', () => {
    const s = new MaintenanceSchedule([daily('b', '03:00'), once('a', utc(2026, 6, 1, 2), utc(2026, 6, 1, 5))]);
    expect(s.activeAt('api', utc(2026, 6, 1, 3, 30))?.name).toBe('a');
  });
});

describe('DST: a missing local time moves forward by the gap, an ambiguous one is the earlier instant', () => {
  // Europe/Berlin 2026: CET→CEST on Sunday 29 March at 02:00 (01:00Z); CEST→CET on Sunday 25 October at 03:00 (01:00Z).
  // America/New_York 2026: EST→EDT on Sunday 8 March at 02:00 (07:00Z); EDT→EST on Sunday 1 November at 02:00 (06:00Z).
  const local = (y: number, mo: number, d: number, h: number, mi: number): number => Date.UTC(y, mo - 1, d, h, mi);

  it('localToEpoch: ordinary, gap and fold times in both zones', () => {
    expect(localToEpoch('Europe/Berlin', local(2026, 1, 15, 12, 0))).toBe(utc(2026, 1, 15, 11));
    expect(localToEpoch('Europe/Berlin', local(2026, 3, 29, 2, 30))).toBe(utc(2026, 3, 29, 1, 30)); // 03:30 CEST
    expect(localToEpoch('Europe/Berlin', local(2026, 10, 25, 2, 30))).toBe(utc(2026, 10, 25, 0, 30)); // 02:30 CEST, not CET
    expect(localToEpoch('America/New_York', local(2026, 3, 8, 2, 30))).toBe(utc(2026, 3, 8, 7, 30)); // 03:30 EDT
    expect(localToEpoch('America/New_York', local(2026, 11, 1, 1, 30))).toBe(utc(2026, 11, 1, 5, 30)); // 01:30 EDT, not EST
  });

  it('Europe/Berlin spring forward: 02:30 on 29 March 2026 runs from 03:30 CEST', () => {
    const s = new MaintenanceSchedule([daily('nightly', '02:30', { timezone: 'Europe/Berlin' })]);
    expect(starts(s, 'api', utc(2026, 3, 28), utc(2026, 3, 31))).toEqual([utc(2026, 3, 28, 1, 30), utc(2026, 3, 29, 1, 30), utc(2026, 3, 30, 0, 30)]);
    expect(s.activeAt('api', utc(2026, 3, 29, 1))).toBeUndefined(); // 03:00 CEST: not yet
    expect(s.activeAt('api', utc(2026, 3, 29, 2, 29))).toMatchObject({ start: utc(2026, 3, 29, 1, 30), end: utc(2026, 3, 29, 2, 30) });
  });

  it('Europe/Berlin: a duration is elapsed time, an end is a wall-clock time (01:00 to 04:00 on 29 March is two hours)', () => {
    const byEnd = new MaintenanceSchedule([daily('w', '01:00', { timezone: 'Europe/Berlin', durationMs: undefined, endMinute: 240 })]);
    expect(byEnd.occurrences('api', utc(2026, 3, 29), utc(2026, 3, 29, 12))).toMatchObject([{ start: utc(2026, 3, 29, 0), end: utc(2026, 3, 29, 2) }]);
    const byDuration = new MaintenanceSchedule([daily('w', '01:00', { timezone: 'Europe/Berlin', durationMs: 3 * H })]);
    expect(byDuration.occurrences('api', utc(2026, 3, 29), utc(2026, 3, 29, 12))).toMatchObject([{ start: utc(2026, 3, 29, 0), end: utc(2026, 3, 29, 3) }]);
  });

  it('Europe/Berlin fall back: 02:30 on 25 October 2026 is the first 02:30 (CEST), and runs once', () => {
    const s = new MaintenanceSchedule([daily('nightly', '02:30', { timezone: 'Europe/Berlin' })]);
    expect(starts(s, 'api', utc(2026, 10, 24), utc(2026, 10, 27))).toEqual([utc(2026, 10, 24, 0, 30), utc(2026, 10, 25, 0, 30), utc(2026, 10, 26, 1, 30)]);
    expect(s.activeAt('api', utc(2026, 10, 25, 0, 30))?.end).toBe(utc(2026, 10, 25, 1, 30));
    expect(s.activeAt('api', utc(2026, 10, 25, 1, 30))).toBeUndefined(); // the second 02:30 (CET)
  });

  it('America/New_York spring forward: 02:30 on 8 March 2026 runs from 03:30 EDT', () => {
    const s = new MaintenanceSchedule([daily('nightly', '02:30', { timezone: 'America/New_York' })]);
    expect(starts(s, 'api', utc(2026, 3, 7, 12), utc(2026, 3, 10, 12))).toEqual([utc(2026, 3, 8, 7, 30), utc(2026, 3, 9, 6, 30), utc(2026, 3, 10, 6, 30)]);
    expect(starts(s, 'api', utc(2026, 3, 7), utc(2026, 3, 7, 12))).toEqual([utc(2026, 3, 7, 7, 30)]);
    expect(s.activeAt('api', utc(2026, 3, 8, 7, 29))).toBeUndefined();
    expect(s.activeAt('api', utc(2026, 3, 8, 7, 30))?.name).toBe('nightly');
  });

  it('America/New_York fall back: 01:30 on 1 November 2026 is 01:30 EDT; an end at 03:00 EST makes it three hours', () => {
    const s = new MaintenanceSchedule([daily('nightly', '01:30', { timezone: 'America/New_York' })]);
    expect(starts(s, 'api', utc(2026, 10, 31), utc(2026, 11, 3))).toEqual([utc(2026, 10, 31, 5, 30), utc(2026, 11, 1, 5, 30), utc(2026, 11, 2, 6, 30)]);
    expect(s.activeAt('api', utc(2026, 11, 1, 6, 30))).toBeUndefined(); // the second 01:30 (EST)
    const byEnd = new MaintenanceSchedule([daily('w', '01:00', { timezone: 'America/New_York', durationMs: undefined, endMinute: 180 })]);
    expect(byEnd.activeAt('api', utc(2026, 11, 1, 7, 59))).toMatchObject({ start: utc(2026, 11, 1, 5), end: utc(2026, 11, 1, 8) });
  });

  it('a one-off window read from the config: local to its zone, unless it names an offset', () => {
    const cfg = parseMonitorConfig(
      'maintenance:\n  - name: patch\n    timezone: Europe/Berlin\n    from: 2026-12-01T22:00\n    to: 2026-12-02T01:00\n' +
        '  - name: fixed\n    timezone: Europe/Berlin\n    from: 2026-12-01T22:00Z\n    to: "2026-12-02T01:00+00:00"\n',
    );
    expect(cfg.maintenance).toMatchObject([
      { name: 'patch', kind: 'once', fromMs: utc(2026, 12, 1, 21), toMs: utc(2026, 12, 2, 0) },
      { name: 'fixed', kind: 'once', fromMs: utc(2026, 12, 1, 22), toMs: utc(2026, 12, 2, 1) },
    ]);
    const s = new MaintenanceSchedule(cfg.maintenance);
    expect(s.activeAt('api', utc(2026, 12, 1, 21))?.name).toBe('patch');
  });
});

describe('targets: a window with targets covers those only; without, every target', () => {
  it('per-target and global windows', () => {
    const s = new MaintenanceSchedule([once('api-only', utc(2026, 6, 1, 1), utc(2026, 6, 1, 2), ['api']), once('all', utc(2026, 6, 1, 3), utc(2026, 6, 1, 4))]);
    expect(s.activeAt('api', utc(2026, 6, 1, 1, 30))?.name).toBe('api-only');
    expect(s.activeAt('db', utc(2026, 6, 1, 1, 30))).toBeUndefined();
    expect(s.activeAt('db', utc(2026, 6, 1, 3, 30))?.name).toBe('all');
    expect(s.occurrences('api', utc(2026, 6, 1), utc(2026, 6, 2)).map((o) => o.name)).toEqual(['api-only', 'all']);
    expect(s.occurrences('db', utc(2026, 6, 1), utc(2026, 6, 2)).map((o) => o.name)).toEqual(['all']);
  });
});

describe('occurrences, next and coveredMs', () => {
  it('occurrences overlap [from, to): one running at `from` is in, one ending exactly at `from` is out; sorted by start', () => {
    const s = new MaintenanceSchedule([daily('nightly', '02:00', { durationMs: 2 * H }), once('deploy', utc(2026, 6, 2, 12), utc(2026, 6, 2, 13))]);
    expect(s.occurrences('api', utc(2026, 6, 1, 3), utc(2026, 6, 3)).map((o) => [o.name, o.start])).toEqual([
      ['nightly', utc(2026, 6, 1, 2)],
      ['nightly', utc(2026, 6, 2, 2)],
      ['deploy', utc(2026, 6, 2, 12)],
    ]);
    expect(starts(s, 'api', utc(2026, 6, 1, 4), utc(2026, 6, 2, 2))).toEqual([]);
    expect(s.occurrences('api', utc(2026, 6, 2), utc(2026, 6, 1))).toEqual([]);
  });

  it('occurrences refuse a range past 400 days', () => {
    const s = new MaintenanceSchedule([daily('nightly', '02:00')]);
    expect(s.occurrences('api', 0, 400 * DAY)).toHaveLength(400);
    expect(() => s.occurrences('api', 0, 400 * DAY + 1)).toThrow(RangeError);
    expect(() => s.coveredMs('api', 0, 401 * DAY)).toThrow(RangeError);
  });

  it('a year of a daily window is computed day by day: 365 occurrences in 2026', () => {
    const s = new MaintenanceSchedule([daily('nightly', '02:00', { timezone: 'Europe/Berlin' })]);
    const all = s.occurrences('api', utc(2026, 1, 1), utc(2027, 1, 1));
    expect(all).toHaveLength(365);
    expect(all[0]!.start).toBe(utc(2026, 1, 1, 1));
    expect(all[364]!.start).toBe(utc(2026, 12, 31, 1));
  });

  it('next: the first occurrence starting at or after ms, within 14 days', () => {
    const s = new MaintenanceSchedule([daily('sunday', '02:00', { weekdays: ['sun'] })]);
    expect(s.next('api', utc(2026, 6, 1))?.start).toBe(utc(2026, 6, 7, 2));
    expect(s.next('api', utc(2026, 6, 7, 2))?.start).toBe(utc(2026, 6, 7, 2));
    expect(s.next('api', utc(2026, 6, 7, 2, 30))?.start).toBe(utc(2026, 6, 14, 2)); // the running one is not next
    const far = new MaintenanceSchedule([once('later', utc(2026, 7, 1), utc(2026, 7, 2))]);
    expect(far.next('api', utc(2026, 6, 1))).toBeUndefined();
    expect(far.next('api', utc(2026, 6, 20))?.name).toBe('later');
  });

  it('coveredMs counts overlapping windows once and clips to the range', () => {
    const s = new MaintenanceSchedule([
      daily('nightly', '02:00', { durationMs: 2 * H }), // 02:00-04:00
      once('deploy', utc(2026, 6, 1, 3), utc(2026, 6, 1, 5)), // 03:00-05:00
      once('inside', utc(2026, 6, 1, 3), utc(2026, 6, 1, 3, 30), ['api']), // within both
    ]);
    expect(s.coveredMs('api', utc(2026, 6, 1), utc(2026, 6, 2))).toBe(3 * H);
    expect(s.coveredMs('api', utc(2026, 6, 1, 2, 30), utc(2026, 6, 1, 4, 30))).toBe(2 * H);
    expect(s.coveredMs('api', utc(2026, 6, 1), utc(2026, 6, 3))).toBe(5 * H);
    expect(s.coveredMs('api', utc(2026, 6, 1, 6), utc(2026, 6, 1, 7))).toBe(0);
  });
});
