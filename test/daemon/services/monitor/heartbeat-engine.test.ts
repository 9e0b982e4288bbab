// Heartbeat targets in the check engine, with a clock the test sets: on time, late exactly one
// millisecond past period + grace (one alert), back (resolved), a start never finished, exit
// statuses, maintenance, a Berlin schedule across both DST nights, and a restart with a run
// outstanding (a second engine on the same store).
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CheckEngine } from '../../../../daemon/services/monitor/engine.js';
import { AlertSender, type AlertEvent } from '../../../../daemon/services/monitor/alerts.js';
import { MaintenanceSchedule } from '../../../../daemon/services/monitor/maintenance.js';
import { createLogger } from '../../../../daemon/logger.js';
import { parseMonitorConfig, type MonitorConfig } from '../../../../src/config/monitor.js';
import type { Snapshot } from '../../../../src/store/monitor.js';
import { SqliteMonitorStore } from '../../../../src/store/monitor-sqlite.js';
import { ManualClock } from '../../../../src/util/clock.js';
import { tempDir } from '../../../helpers/tmp.js';

const dir = tempDir();
afterAll(() => dir.remove());

const MIN = 60_000;
const iso = (ms: number): string => new Date(ms).toISOString();

/** Records what would be sent instead of posting it. */
class RecordingAlerts extends AlertSender {
  readonly sent: AlertEvent[] = [];
  override send(e: AlertEvent): void {
    this.sent.push(e);
  }
}

const logger = createLogger({ level: 'silent', stream: new Writable({ write: (_c, _e, cb) => cb() }), pretty: false });

interface Rig {
  store: SqliteMonitorStore;
  engine: CheckEngine;
  clock: ManualClock;
  alerts: RecordingAlerts;
  /** The target's state turn at `at`: the snapshot it recorded. */
  turn(at: number | string): Promise<Snapshot>;
  events(): string[];
  close(): Promise<void>;
}

/** An engine on a SQLite store in `file`, the target's state made at `since` (as the ping keys do at start). */
async function rig(file: string, yaml: string, since: number | string, target = 'backup'): Promise<Rig> {
  const store = new SqliteMonitorStore(join(dir.path, file));
  const clock = new ManualClock();
  clock.set(since);
  const alerts = new RecordingAlerts([], logger);
  const config: MonitorConfig = parseMonitorConfig(yaml);
  const schedule = new MaintenanceSchedule(config.maintenance);
  const engine = new CheckEngine({ store, logger, clock, alerts, maintenance: () => schedule });
  engine.apply(config);
  await store.heartbeats.ensure(target, clock.now());
  return {
    store,
    engine,
    clock,
    alerts,
    async turn(at) {
      clock.set(at);
      await engine.runNow(target);
      return (await store.recent(target, 1))[0]!;
    },
    events: () => alerts.sent.map((e) => `${e.event} ${e.target}`),
    async close() {
      await engine.stop();
      await store.close();
    },
  };
}

const periodic = 'targets:\n  backup:\n    heartbeat:\n      period: 1h\n      grace: 10m\n    incident_threshold: 1\n';

describe('heartbeat targets in the engine (a clock the test sets)', () => {
  it('on time, late exactly past period + grace with one alert, then back with one resolution', async () => {
    const T0 = Date.parse('2026-06-01T00:00:00Z');
    const r = await rig('late.db', periodic, T0);
    try {
      // Before any ping, lateness counts from the first sighting.
      expect(await r.turn(T0 + 70 * MIN)).toMatchObject({ status: 'operational' });
      expect(await r.turn(T0 + 70 * MIN + 1)).toMatchObject({ status: 'down', error: `no ping since the monitor began watching at ${iso(T0)}` });
      expect(r.events()).toEqual(['incident.opened backup']);
      // A success resolves it.
      const P = T0 + 75 * MIN;
      r.clock.set(P);
      expect(await r.engine.ping('backup', { kind: 'success' }, undefined)).toMatchObject({ status: 'operational', checked_at: iso(P), details: { signal: 'success' } });
      expect(r.events()).toEqual(['incident.opened backup', 'incident.resolved backup']);
      expect(await r.store.currentIncident('backup')).toBeUndefined();
      // The next ping is due P + 1h, late past P + 1h10m: 1 ms before and at the deadline on time, 1 ms after down.
      const late = P + 70 * MIN;
      expect(await r.turn(P + 30 * MIN)).toMatchObject({ status: 'operational' });
      expect(await r.turn(late - 1)).toMatchObject({ status: 'operational' });
      expect(await r.turn(late)).toMatchObject({ status: 'operational' });
      expect(await r.turn(late + 1)).toMatchObject({ status: 'down', error: `no ping since ${iso(P)}` });
      expect(await r.store.currentIncident('backup')).toMatchObject({ status: 'open', started_at: iso(late + 1), cause: `no ping since ${iso(P)}` });
      // More turns while late: the incident grows, no second alert.
      for (let k = 1; k <= 3; k++) expect(await r.turn(late + k * MIN)).toMatchObject({ status: 'down' });
      expect(await r.store.currentIncident('backup')).toMatchObject({ checks: 4 });
      expect(r.events()).toEqual(['incident.opened backup', 'incident.resolved backup', 'incident.opened backup']);
      // Back: a ping resolves it, and the turns after are on time.
      r.clock.set(late + 5 * MIN);
      await r.engine.ping('backup', { kind: 'success' }, undefined);
      expect(await r.turn(late + 6 * MIN)).toMatchObject({ status: 'operational' });
      expect(r.events()).toEqual(['incident.opened backup', 'incident.resolved backup', 'incident.opened backup', 'incident.resolved backup']);
      expect((await r.store.incidents('backup', 10)).every((i) => i.status === 'resolved')).toBe(true);
    } finally {
      await r.close();
    }
  });

  it('a start never finished is down one millisecond past the grace; the success that ends it is timed', async () => {
    const T0 = Date.parse('2026-06-02T00:00:00Z');
    const r = await rig('overrun.db', periodic, T0);
    try {
      const S = T0 + 5 * MIN;
      r.clock.set(S);
      // A start is no verdict: it records a snapshot and neither opens nor resolves anything.
      expect(await r.engine.ping('backup', { kind: 'start' }, undefined)).toMatchObject({ status: 'operational', details: { signal: 'start' } });
      expect(await r.turn(S + 10 * MIN)).toMatchObject({ status: 'operational' });
      expect(await r.turn(S + 10 * MIN + 1)).toMatchObject({ status: 'down', error: `run started at ${iso(S)} has not finished within the grace of 10m` });
      expect(r.events()).toEqual(['incident.opened backup']);
      const end = S + 13 * MIN;
      r.clock.set(end);
      const done = await r.engine.ping('backup', { kind: 'success' }, { text: 'backup done\n', truncated: false });
      expect(done).toMatchObject({ status: 'operational', response_time_ms: 13 * MIN, details: { signal: 'success', duration_ms: 13 * MIN, log: 'backup done\n' } });
      expect(r.events()).toEqual(['incident.opened backup', 'incident.resolved backup']);
      // A start then a timely success: on time, no alert.
      r.clock.set(end + 30 * MIN);
      await r.engine.ping('backup', { kind: 'start' }, undefined);
      r.clock.set(end + 39 * MIN);
      expect(await r.engine.ping('backup', { kind: 'success' }, undefined)).toMatchObject({ status: 'operational', response_time_ms: 9 * MIN });
      expect(await r.turn(end + 60 * MIN)).toMatchObject({ status: 'operational' });
      expect(r.events()).toEqual(['incident.opened backup', 'incident.resolved backup']);
    } finally {
      await r.close();
    }
  });

  it('exit statuses: 0 is a success, any other (and /fail) is down with the status named, until a success', async () => {
    const T0 = Date.parse('2026-06-03T00:00:00Z');
    const r = await rig('exit.db', periodic, T0);
    try {
      const ping = async (at: number, signal: Parameters<CheckEngine['ping']>[1]): Promise<Snapshot> => {
        r.clock.set(at);
        return r.engine.ping('backup', signal, undefined);
      };
      expect(await ping(T0 + MIN, { kind: 'exit', code: 0 })).toMatchObject({ status: 'operational', details: { signal: '0', exit_code: 0 } });
      expect(await ping(T0 + 2 * MIN, { kind: 'exit', code: 3 })).toMatchObject({ status: 'down', error: 'the job exited with status 3', details: { signal: '3', exit_code: 3 } });
      expect(r.events()).toEqual(['incident.opened backup']);
      // Between pings the failed run stays the verdict, though the ping was on time.
      expect(await r.turn(T0 + 10 * MIN)).toMatchObject({ status: 'down', error: 'the job exited with status 3' });
      // A start after a failure carries the failure (it is no verdict of its own).
      expect(await ping(T0 + 11 * MIN, { kind: 'start' })).toMatchObject({ status: 'down', error: 'the job exited with status 3' });
      expect(await ping(T0 + 12 * MIN, { kind: 'fail' })).toMatchObject({ status: 'down', error: 'the job signalled failure', details: { signal: 'fail', duration_ms: MIN } });
      expect(r.events()).toEqual(['incident.opened backup']);
      expect(await r.store.currentIncident('backup')).toMatchObject({ status: 'open', cause: 'the job exited with status 3' });
      expect(await ping(T0 + 13 * MIN, { kind: 'exit', code: 0 })).toMatchObject({ status: 'operational' });
      expect(r.events()).toEqual(['incident.opened backup', 'incident.resolved backup']);
      expect(await ping(T0 + 14 * MIN, { kind: 'exit', code: 255 })).toMatchObject({ status: 'down', error: 'the job exited with status 255' });
    } finally {
      await r.close();
    }
  });

  it('late inside a maintenance window: tagged, no incident, no alert; late after it: one alert', async () => {
    const yaml = `${periodic}maintenance:\n  - name: upgrade\n    targets: [backup]\n    timezone: UTC\n    from: 2026-06-04T01:00\n    to: 2026-06-04T03:00\n`;
    const T0 = Date.parse('2026-06-04T00:00:00Z');
    const r = await rig('maint.db', yaml, T0);
    try {
      const late = T0 + 70 * MIN;
      expect(await r.turn(late + 1)).toMatchObject({ status: 'down', maintenance: true });
      expect(await r.turn(Date.parse('2026-06-04T02:59:59.999Z'))).toMatchObject({ status: 'down', maintenance: true });
      expect(await r.store.currentIncident('backup')).toBeUndefined();
      expect(r.events()).toEqual([]);
      const after = await r.turn('2026-06-04T03:00:00Z');
      expect(after.maintenance).toBeUndefined();
      expect(after).toMatchObject({ status: 'down' });
      expect(r.events()).toEqual(['incident.opened backup']);
    } finally {
      await r.close();
    }
  });

  describe('a schedule of "30 2 * * *" in Europe/Berlin, grace 30m', () => {
    const berlin = 'targets:\n  backup:\n    heartbeat:\n      schedule: "30 2 * * *"\n      timezone: Europe/Berlin\n      grace: 30m\n    incident_threshold: 1\n';

    it('spring forward (2027-03-28, no 02:30): late at the jump (01:00Z) + grace, not an hour off either way', async () => {
      const r = await rig('spring.db', berlin, '2027-03-27T00:00:00Z');
      try {
        r.clock.set('2027-03-27T01:30:00Z'); // 02:30 CET
        await r.engine.ping('backup', { kind: 'success' }, undefined);
        expect(await r.turn('2027-03-28T01:00:00Z')).toMatchObject({ status: 'operational' });
        expect(await r.turn('2027-03-28T01:30:00Z')).toMatchObject({ status: 'operational' });
        expect(await r.turn('2027-03-28T01:30:00.001Z')).toMatchObject({ status: 'down', error: 'no ping since 2027-03-27T01:30:00.000Z' });
        expect(r.events()).toEqual(['incident.opened backup']);
        // The run at the jump, then the next night's at 02:30 CEST (00:30Z) + grace.
        r.clock.set('2027-03-28T01:31:00Z');
        await r.engine.ping('backup', { kind: 'success' }, undefined);
        expect(await r.turn('2027-03-29T01:00:00Z')).toMatchObject({ status: 'operational' });
        expect(await r.turn('2027-03-29T01:00:00.001Z')).toMatchObject({ status: 'down', error: 'no ping since 2027-03-28T01:31:00.000Z' });
      } finally {
        await r.close();
      }
    });

    for (const night of ['2026-10-25', '2027-10-31']) {
      it(`fall back (${night}, 02:30 twice): one run expected, a run ending in the repeated hour not late at the second 02:30`, async () => {
        const r = await rig(`fall-${night}.db`, berlin, `${night}T00:00:00Z`);
        try {
          // The first 02:30 (CEST, 00:30Z) starts a run of 35 minutes: it ends at 02:05 CET.
          r.clock.set(`${night}T00:30:00Z`);
          await r.engine.ping('backup', { kind: 'start' }, undefined);
          r.clock.set(`${night}T01:05:00Z`);
          expect(await r.engine.ping('backup', { kind: 'success' }, undefined)).toMatchObject({ status: 'operational', response_time_ms: 35 * MIN });
          // The second 02:30 (CET, 01:30Z) + grace passes without a ping: still on time.
          expect(await r.turn(`${night}T02:00:00.001Z`)).toMatchObject({ status: 'operational' });
          // The next night's 02:30 CET is 01:30Z: the one deadline.
          const next = Date.parse(`${night}T01:30:00Z`) + 86_400_000;
          expect(await r.turn(next + 30 * MIN)).toMatchObject({ status: 'operational' });
          expect(await r.turn(next + 30 * MIN + 1)).toMatchObject({ status: 'down', error: `no ping since ${night}T01:05:00.000Z` });
          expect(r.events()).toEqual(['incident.opened backup']);
        } finally {
          await r.close();
        }
      });
    }
  });

  it('restart with a run outstanding: a second engine on the same store decides the overrun and times the end', async () => {
    const T0 = Date.parse('2026-06-05T00:00:00Z');
    const first = await rig('restart.db', periodic, T0);
    const S = T0 + 3 * MIN;
    first.clock.set(S);
    await first.engine.ping('backup', { kind: 'start' }, undefined);
    await first.close();
    // The ping keys ensure the state again at start: the first sighting and the start stay.
    const r = await rig('restart.db', periodic, S + MIN);
    try {
      expect(await r.store.heartbeats.get('backup')).toMatchObject({ since: T0, lastStart: S });
      expect(await r.turn(S + 10 * MIN)).toMatchObject({ status: 'operational' });
      expect(await r.turn(S + 10 * MIN + 1)).toMatchObject({ status: 'down', error: `run started at ${iso(S)} has not finished within the grace of 10m` });
      expect(r.events()).toEqual(['incident.opened backup']);
      r.clock.set(S + 20 * MIN);
      expect(await r.engine.ping('backup', { kind: 'success' }, undefined)).toMatchObject({ status: 'operational', response_time_ms: 20 * MIN });
      expect(r.events()).toEqual(['incident.opened backup', 'incident.resolved backup']);
      // A third engine after an on-time ping: late from that ping, as before the restart.
      await r.close();
      const third = await rig('restart.db', periodic, S + 21 * MIN);
      try {
        expect(await third.turn(S + 90 * MIN)).toMatchObject({ status: 'operational' });
        expect(await third.turn(S + 90 * MIN + 1)).toMatchObject({ status: 'down', error: `no ping since ${iso(S + 20 * MIN)}` });
        expect(third.events()).toEqual(['incident.opened backup']);
      } finally {
        await third.close();
      }
    } finally {
      await r.close().catch(() => undefined);
    }
  });

  it('pings that arrive together are written as one group, in order: each snapshot from the state before it, one alert, one resolution', async () => {
    const T0 = Date.parse('2026-06-02T00:00:00Z');
    const r = await rig('group.db', periodic, T0);
    try {
      // Sent without waiting (the clock moved between them): they queue for the same write.
      const at = (s: number) => (r.clock.set(T0 + 5 * MIN + s * 1000), r.engine);
      const group = [
        at(0).ping('backup', { kind: 'start' }, undefined),
        at(1).ping('backup', { kind: 'exit', code: 3 }, { text: 'disk full\n', truncated: false }),
        at(2).ping('backup', { kind: 'start' }, undefined),
        at(5).ping('backup', { kind: 'success' }, undefined),
        at(6).ping('backup', { kind: 'success' }, undefined),
      ];
      const snaps = await Promise.all(group);
      expect(snaps.map((s) => [s.status, s.details?.signal, s.error])).toEqual([
        ['operational', 'start', undefined],
        ['down', '3', 'the job exited with status 3'],
        // A start after a failure carries it: it is no verdict.
        ['down', 'start', 'the job exited with status 3'],
        ['operational', 'success', undefined],
        ['operational', 'success', undefined],
      ]);
      expect(snaps[1]!.details).toMatchObject({ log: 'disk full\n', exit_code: 3 });
      // The success after the second start ends its run: timed from that start.
      expect(snaps[3]).toMatchObject({ response_time_ms: 3000, details: { duration_ms: 3000 } });
      expect(snaps[4]!.details?.duration_ms).toBeUndefined();
      expect((await r.store.recent('backup', 10)).filter((s) => s.details?.signal !== undefined)).toHaveLength(5);
      expect(r.events()).toEqual(['incident.opened backup', 'incident.resolved backup']);
      expect(await r.store.currentIncident('backup')).toBeUndefined();
      expect(await r.store.heartbeats.get('backup')).toMatchObject({ lastStart: T0 + 5 * MIN + 2000, lastEnd: T0 + 5 * MIN + 6000, lastOk: true });
      // A ping of a target that is not a heartbeat target is refused, not queued.
      await expect(r.engine.ping('nothing', { kind: 'success' }, undefined)).rejects.toThrow(/not a heartbeat target/);
    } finally {
      await r.close().catch(() => undefined);
    }
  });

  it('a group waits while pings keep coming, turn after turn, and no longer than its bound of turns; a lone ping is written at once', async () => {
    const T0 = Date.parse('2026-06-03T00:00:00Z');
    const r = await rig('gather.db', periodic, T0);
    const groups: number[] = [];
    const record = r.store.recordHeartbeatPings.bind(r.store);
    r.store.recordHeartbeatPings = (target, pings, snapshotOf) => {
      groups.push(pings.length);
      return record(target, pings, snapshotOf);
    };
    const turn = (): Promise<void> => new Promise((done) => setImmediate(done));
    const ping = (): Promise<Snapshot> => r.engine.ping('backup', { kind: 'success' }, undefined);
    try {
      r.clock.set(T0 + MIN);
      await ping();
      expect(groups).toEqual([1]);
      await turn(); // the write's own turn ends
      // Two at once, then one more in each of the next two turns: one group of four.
      const sent = [ping(), ping()];
      await turn();
      sent.push(ping());
      await turn();
      sent.push(ping());
      await Promise.all(sent);
      expect(groups).toEqual([1, 4]);
      await turn();
      // A ping every turn for twenty turns: written in groups, the first after its bound (4 more turns).
      const stream: Promise<Snapshot>[] = [ping(), ping()];
      for (let i = 0; i < 20; i++) {
        await turn();
        stream.push(ping());
      }
      await Promise.all(stream);
      expect(groups.slice(2).reduce((a, b) => a + b, 0)).toBe(22);
      expect(groups[2]).toBe(6);
      expect(groups.length).toBeGreaterThan(3);
    } finally {
      await r.close().catch(() => undefined);
    }
  });
});
