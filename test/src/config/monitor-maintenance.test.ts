// The monitor config's maintenance windows, retention and badges (src/config/monitor.ts): the
// defaults, the parsed shape, and every error with its file and line.
import { describe, expect, it } from 'vitest';
import { parseMonitorConfig } from '../../../src/config/monitor.js';
import { configProblems } from '../../helpers/monitor-config.js';

/** Lines 1-6; a window opened by `win` starts on line 7, its further keys on 8, 9, ... */
const TARGETS = 'targets:\n  api:\n    url: http://127.0.0.1/h\n  db:\n    url: http://127.0.0.1/d\n';
const win = (...keys: string[]): string => `${TARGETS}maintenance:\n  - ${keys.join('\n    ')}\n`;

const problems = configProblems;

describe('retention and badges', () => {
  it('defaults: raw checks 14 days, rollups 400 days, badges need the token, no maintenance', () => {
    expect(parseMonitorConfig('{}')).toMatchObject({ retentionDays: 14, rollupRetentionDays: 400, badges: 'token', maintenance: [] });
    expect(parseMonitorConfig('retention_days: 30\nrollup_retention_days: 30\nbadges: public\n')).toMatchObject({ retentionDays: 30, rollupRetentionDays: 30, badges: 'public' });
    // Left out, rollups are kept at least as long as raw checks.
    expect(parseMonitorConfig('retention_days: 500\n').rollupRetentionDays).toBe(500);
  });

  it('rollup_retention_days must be 1..3650 and at least retention_days; badges public or token', () => {
    expect(problems('name: x\nretention_days: 30\nrollup_retention_days: 20\n')).toEqual(['m.yaml:3: rollup_retention_days must be at least retention_days (30)']);
    expect(problems('rollup_retention_days: 4000\n')).toEqual(['m.yaml:1: rollup_retention_days must be a whole number from 1 to 3650']);
    expect(problems('name: x\nbadges: anyone\n')).toEqual(['m.yaml:2: badges must be public or token']);
    expect(problems('badges: [public]\n')).toEqual(['m.yaml:1: badges must be a non-empty string']);
  });
});

describe('maintenance windows: the parsed shape', () => {
  it('a one-off window: title defaults to the name, targets to every target, the zone to UTC', () => {
    const c = parseMonitorConfig(win('name: deploy', 'from: 2026-12-01T22:00', 'to: 2026-12-02T01:00'));
    expect(c.maintenance).toEqual([{ kind: 'once', name: 'deploy', title: 'deploy', timezone: 'UTC', fromMs: Date.UTC(2026, 11, 1, 22), toMs: Date.UTC(2026, 11, 2, 1) }]);
  });

  it('a recurring window: weekdays in any case, Monday first; a zone by its canonical name; end or duration', () => {
    const c = parseMonitorConfig(
      `${TARGETS}maintenance:\n` +
        '  - name: weekly-db\n    title: Database patching\n    targets: [db, api, db]\n    timezone: europe/berlin\n    weekdays: [SUN, Wed]\n    start: "02:00"\n    duration: 2h\n' +
        '  - name: nightly\n    start: 23:30\n    end: "01:00"\n',
    );
    expect(c.maintenance).toEqual([
      { kind: 'recurring', name: 'weekly-db', title: 'Database patching', targets: ['db', 'api'], timezone: 'Europe/Berlin', weekdays: ['wed', 'sun'], startMinute: 120, durationMs: 7_200_000 },
      { kind: 'recurring', name: 'nightly', title: 'nightly', timezone: 'UTC', weekdays: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], startMinute: 1410, endMinute: 60 },
    ]);
  });

  it('from/to are local to the timezone; an explicit offset or Z wins', () => {
    const c = parseMonitorConfig(win('name: w', 'timezone: America/New_York', 'from: 2026-07-01T22:00', 'to: "2026-07-02T01:00-02:00"'));
    expect(c.maintenance[0]).toMatchObject({ fromMs: Date.UTC(2026, 6, 2, 2), toMs: Date.UTC(2026, 6, 2, 3) });
  });
});

describe('maintenance windows: every error names its line', () => {
  const cases: [string, string, string][] = [
    ['maintenance must be a list', `${TARGETS}maintenance: weekly\n`, 'm.yaml:6: maintenance must be a list'],
    ['a window must be a mapping', `${TARGETS}maintenance:\n  - weekly\n`, 'm.yaml:7: maintenance.0 must be a mapping: a name, then from and to, or start and a duration or end'],
    ['unknown keys', win('name: w', 'start: "02:00"', 'duration: 1h', 'every: day'), 'm.yaml:10: maintenance.0.every is not a known setting (known: name, title, targets, timezone, from, to, weekdays, start, duration, end)'],
    ['a name is required', win('start: "02:00"', 'duration: 1h'), 'm.yaml:7: maintenance.0 needs a name'],
    ['the name is 1-64 letters, digits, dot, dash, underscore', win('start: "02:00"', 'duration: 1h', 'name: db patch'), 'm.yaml:9: maintenance.0.name must be 1-64 letters, digits, dot, dash or underscore'],
    ['targets name configured targets', win('name: w', 'targets: [api, web]', 'start: "02:00"', 'duration: 1h'), 'm.yaml:8: maintenance.0.targets.1 names no configured target: web'],
    ['targets is a list', win('name: w', 'targets: api', 'start: "02:00"', 'duration: 1h'), 'm.yaml:8: maintenance.0.targets must be a list'],
    ['targets is not empty', win('name: w', 'targets: []', 'start: "02:00"', 'duration: 1h'), 'm.yaml:8: maintenance.0.targets must name at least one target (leave it out to cover every target)'],
    ['the timezone is an IANA zone', win('name: w', 'timezone: Mars/Olympus', 'start: "02:00"', 'duration: 1h'), 'm.yaml:8: maintenance.0.timezone is not a known IANA time zone (like Europe/Berlin or UTC): Mars/Olympus'],
    ['one-off and recurring do not mix', win('name: w', 'from: 2026-12-01T22:00', 'to: 2026-12-02T01:00', 'start: "02:00"'), 'm.yaml:7: maintenance.0 mixes a one-off window (from, to) with a recurring one (start): give from and to, or start and a duration or end'],
    ['a schedule is required', win('name: w', 'title: Nothing'), 'm.yaml:7: maintenance.0 needs from and to (a one-off window), or start and a duration or end (a recurring one)'],
    ['from needs to', win('name: w', 'from: 2026-12-01T22:00'), 'm.yaml:7: maintenance.0.to is required with from'],
    ['to needs from', win('name: w', 'to: 2026-12-01T22:00'), 'm.yaml:7: maintenance.0.from is required with to'],
    ['from is a date-time', win('name: w', 'from: tonight', 'to: 2026-12-02T01:00'), 'm.yaml:8: maintenance.0.from must be a date-time like 2026-12-01T22:00 (local to the timezone), or with an offset like 2026-12-01T22:00Z'],
    ['from is a real date', win('name: w', 'from: 2026-02-30T22:00', 'to: 2026-03-02T01:00'), 'm.yaml:8: maintenance.0.from is not a real date and time: "2026-02-30T22:00"'],
    ['the offset is one a zone can have', win('name: w', 'from: "2026-12-01T22:00+25:00"', 'to: 2026-12-02T01:00Z'), 'm.yaml:8: maintenance.0.from has an offset that no zone has: "2026-12-01T22:00+25:00"'],
    ['to is after from', win('name: w', 'from: 2026-12-02T01:00', 'to: 2026-12-02T01:00'), 'm.yaml:9: maintenance.0.to must be after from'],
    ['a recurring window needs a start', win('name: w', 'weekdays: [sun]', 'duration: 1h'), 'm.yaml:7: maintenance.0.start is required for a recurring window (HH:MM local time)'],
    ['start is HH:MM', win('name: w', 'start: "24:00"', 'duration: 1h'), 'm.yaml:8: maintenance.0.start must be a time of day HH:MM, like "02:00"'],
    ['weekdays are mon..sun', win('name: w', 'weekdays: [sun, funday]', 'start: "02:00"', 'duration: 1h'), 'm.yaml:8: maintenance.0.weekdays.1 must be a day of the week (mon, tue, wed, thu, fri, sat, sun), got "funday"'],
    ['weekdays is not empty', win('name: w', 'weekdays: []', 'start: "02:00"', 'duration: 1h'), 'm.yaml:8: maintenance.0.weekdays must list at least one day (leave it out for every day)'],
    ['a duration or an end is required', win('name: w', 'start: "02:00"'), 'm.yaml:7: maintenance.0 needs a duration or an end'],
    ['not both a duration and an end', win('name: w', 'start: "02:00"', 'duration: 1h', 'end: "04:00"'), 'm.yaml:10: maintenance.0.end cannot be given with duration: give one'],
    ['the duration is above zero', win('name: w', 'start: "02:00"', 'duration: 0s'), 'm.yaml:9: maintenance.0.duration must be a duration above zero: seconds, or a string like 30m, 2h, 1d'],
    ['the duration is at most 7 days', win('name: w', 'start: "02:00"', 'duration: 8d'), 'm.yaml:9: maintenance.0.duration must be at most 7 days'],
    ['end is HH:MM', win('name: w', 'start: "02:00"', 'end: 4pm'), 'm.yaml:9: maintenance.0.end must be a time of day HH:MM, like "02:00"'],
  ];
  it.each(cases)('%s', (_rule, text, expected) => {
    expect(problems(text)).toEqual([expected]);
  });

  it('names are unique', () => {
    const text = `${TARGETS}maintenance:\n  - name: w\n    start: "02:00"\n    duration: 1h\n  - name: w\n    start: "03:00"\n    duration: 1h\n`;
    expect(problems(text)).toEqual(['m.yaml:10: maintenance.1.name repeats the maintenance window name w']);
  });

  it('every problem is reported, not only the first', () => {
    expect(problems(win('name: w', 'timezone: Nowhere/Here', 'start: "2am"', 'duration: 9d'))).toEqual([
      'm.yaml:8: maintenance.0.timezone is not a known IANA time zone (like Europe/Berlin or UTC): Nowhere/Here',
      'm.yaml:9: maintenance.0.start must be a time of day HH:MM, like "02:00"',
      'm.yaml:10: maintenance.0.duration must be at most 7 days',
    ]);
  });
});
