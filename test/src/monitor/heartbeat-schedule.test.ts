// When a heartbeat is due and late: a period counts elapsed time (24 h across a DST change), a
// schedule is read in its zone, a time the spring-forward night skips falls due at the jump, and
// one the fall-back night repeats is due once.
import { describe, expect, it } from 'vitest';
import { lateAt, nextDue, type HeartbeatConfig } from '../../../src/monitor/heartbeat-schedule.js';

const MIN = 60_000;
const HOUR = 3_600_000;
const iso = (ms: number): string => new Date(ms).toISOString();
const due = (hb: HeartbeatConfig, after: string): string => iso(nextDue(hb, Date.parse(after)));
const berlin230: HeartbeatConfig = { schedule: '30 2 * * *', timezone: 'Europe/Berlin', graceMs: 30 * MIN };

describe('heartbeat schedule', () => {
  it('spring forward (2027-03-28, 02:30 Berlin does not exist): due at the jump, late at the jump + grace, not an hour off', () => {
    // The night before: 02:30 CET is 01:30Z.
    expect(due(berlin230, '2027-03-26T01:30:00Z')).toBe('2027-03-27T01:30:00.000Z');
    // 02:00 CET becomes 03:00 CEST at 01:00Z: the run that cannot be at 02:30 is due then.
    expect(due(berlin230, '2027-03-27T01:30:00Z')).toBe('2027-03-28T01:00:00.000Z');
    expect(iso(lateAt(berlin230, Date.parse('2027-03-27T01:30:00Z')))).toBe('2027-03-28T01:30:00.000Z');
    // A ping at the jump is that night's run: the next is 02:30 CEST, 00:30Z.
    expect(due(berlin230, '2027-03-28T01:00:00Z')).toBe('2027-03-29T00:30:00.000Z');
    expect(due(berlin230, '2027-03-28T01:05:00Z')).toBe('2027-03-29T00:30:00.000Z');
  });

  for (const night of ['2026-10-25', '2027-10-31']) {
    it(`fall back (${night}, 02:30 Berlin happens twice): one run expected, one deadline`, () => {
      const day = Date.parse(`${night}T00:00:00Z`);
      const next = iso(day + 86_400_000 + 90 * MIN); // the next night's 02:30 CET, 01:30Z
      // Before the night: due at the first 02:30 (CEST, 00:30Z).
      expect(due(berlin230, iso(day - 12 * HOUR))).toBe(`${night}T00:30:00.000Z`);
      // A ping at the first 02:30, or a run that ends during the repeated hour (CET), or at the
      // second 02:30: the next one due is the next night's, never the second 02:30 of this one.
      for (const at of ['00:30:00', '00:30:00.001', '00:45:00', '00:59:59.999', '01:00:00', '01:10:00', '01:29:59.999', '01:30:00']) {
        expect(due(berlin230, `${night}T${at}Z`), at).toBe(next);
      }
      // One deadline across the night: a ping before it counts, late only past the first 02:30 + grace.
      expect(iso(lateAt(berlin230, day - 12 * HOUR))).toBe(`${night}T01:00:00.000Z`);
      expect(iso(lateAt(berlin230, Date.parse(`${night}T01:10:00Z`)))).toBe(iso(Date.parse(next) + 30 * MIN));
    });
  }

  it('a schedule with a wildcard hour runs in both copies of the repeated hour (as cron runs it)', () => {
    const half: HeartbeatConfig = { schedule: '*/30 * * * *', timezone: 'Europe/Berlin', graceMs: 0 };
    expect(due(half, '2026-10-25T00:45:00Z')).toBe('2026-10-25T01:00:00.000Z'); // 02:00 CET, the second 02:00
    expect(due(half, '2026-10-25T01:15:00Z')).toBe('2026-10-25T01:30:00.000Z');
  });

  it('a daily period across a DST change stays 24 h of elapsed time', () => {
    const daily: HeartbeatConfig = { periodMs: 86_400_000, timezone: 'UTC', graceMs: 30 * MIN };
    for (const at of ['2027-03-27T12:00:00Z', '2026-10-24T23:30:00Z', '2027-10-30T01:00:00Z']) {
      expect(nextDue(daily, Date.parse(at)) - Date.parse(at)).toBe(24 * HOUR);
      expect(lateAt(daily, Date.parse(at)) - Date.parse(at)).toBe(24 * HOUR + 30 * MIN);
    }
  });

  it('"0 3 * * *" in UTC and in Europe/Berlin differ by the offset (2 h in summer, 1 h in winter)', () => {
    const utc: HeartbeatConfig = { schedule: '0 3 * * *', timezone: 'UTC', graceMs: 0 };
    const ber: HeartbeatConfig = { schedule: '0 3 * * *', timezone: 'Europe/Berlin', graceMs: 0 };
    expect(due(utc, '2026-07-01T00:00:00Z')).toBe('2026-07-01T03:00:00.000Z');
    expect(due(ber, '2026-07-01T00:00:00Z')).toBe('2026-07-01T01:00:00.000Z');
    expect(due(utc, '2026-12-01T00:00:00Z')).toBe('2026-12-01T03:00:00.000Z');
    expect(due(ber, '2026-12-01T00:00:00Z')).toBe('2026-12-01T02:00:00.000Z');
    // Between pings a schedule is 24 h of elapsed time, except across the change (23 h, 25 h).
    expect(nextDue(ber, Date.parse('2027-03-27T02:00:00Z')) - Date.parse('2027-03-27T02:00:00Z')).toBe(23 * HOUR);
    expect(nextDue(ber, Date.parse('2026-10-24T01:00:00Z')) - Date.parse('2026-10-24T01:00:00Z')).toBe(25 * HOUR);
  });
});
