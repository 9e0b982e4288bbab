// The monitor store on both engines (one SQL adapter, monitor-sql.ts): snapshots, results, test
// runs and incidents read back as written; checks counted by the uptime rule's classification (a
// status of its own, any other status down, maintenance in neither figure); latency and trends over
// raw rows and over rollups alone; and the prune of both retentions.
import { expect, it } from 'vitest';
import type { MonitorStore, Snapshot } from '../../../src/store/monitor.js';
import { SqliteMonitorStore } from '../../../src/store/monitor-sqlite.js';
import { PgMonitorStore } from '../../../src/store/monitor-pg.js';
import type { SqliteDatabase } from '../../../src/store/sql-sqlite.js';
import type { Engine, SqlDatabase } from '../../../src/store/sql.js';
import { describeEngines } from '../../helpers/engines.js';

const HOUR = 3_600_000;
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 2, 2, 0, 0, 0);
const at = (ms: number): string => new Date(ms).toISOString();

/** The store on the engine's empty database; the database is closed by describeEngines. */
async function storeOn(db: SqlDatabase, engine: Engine): Promise<MonitorStore> {
  return engine === 'sqlite' ? new SqliteMonitorStore(db as SqliteDatabase) : PgMonitorStore.open(db);
}

describeEngines('MonitorStore', (open, engine) => {
  it('snapshots come back newest first with their optional fields only when set', async () => {
    const s = await storeOn(await open(), engine);
    await s.recordSnapshot('api', { status: 'operational', checked_at: at(T0), response_time_ms: 12, details: { status: 'ok' } });
    await s.recordSnapshot('api', { status: 'down', checked_at: at(T0 + 60_000), response_time_ms: 0, error: 'HTTP 503' });
    await s.recordSnapshot('api', { status: 'down', checked_at: at(T0 + 120_000), response_time_ms: 0, maintenance: true });
    await s.recordSnapshot('web', { status: 'operational', checked_at: at(T0), response_time_ms: 1 });
    expect(await s.recent('api', 2)).toEqual([
      { status: 'down', checked_at: at(T0 + 120_000), response_time_ms: 0, maintenance: true },
      { status: 'down', checked_at: at(T0 + 60_000), response_time_ms: 0, error: 'HTTP 503' },
    ]);
    expect((await s.recent('api', 10))[2]).toEqual({ status: 'operational', checked_at: at(T0), response_time_ms: 12, details: { status: 'ok' } });
    await expect(s.recordSnapshot('api', { status: 'operational', checked_at: 'yesterday', response_time_ms: 1 })).rejects.toThrow(/no valid checked_at/);
  });

  it('counts by outcome: a status of its own, any other status down, maintenance in neither up nor total', async () => {
    const s = await storeOn(await open(), engine);
    const checks: Snapshot[] = [
      { status: 'operational', checked_at: at(T0 + 1000), response_time_ms: 10 },
      { status: 'degraded', checked_at: at(T0 + 2000), response_time_ms: 20 },
      { status: 'down', checked_at: at(T0 + 3000), response_time_ms: 0 },
      { status: 'unknown', checked_at: at(T0 + 4000), response_time_ms: 30 },
      { status: 'operational', checked_at: at(T0 + 5000), response_time_ms: 40, maintenance: true },
    ];
    for (const c of checks) await s.recordSnapshot('api', c);
    const expected = { operational: 1, degraded: 1, down: 2, maintenance: 1 };
    // From raw rows (inside the hour), and from the rollups (whole hours and days).
    expect(await s.counts('api', T0, T0 + HOUR - 1)).toEqual(expected);
    expect(await s.counts('api', T0, T0 + DAY)).toEqual(expected);
    expect(await s.uptime('api', T0)).toEqual({ total: 4, up: 2 });
    expect((await s.rollups('api', 'hour', T0, T0 + HOUR))[0]).toMatchObject({ start: T0, ...expected, latency: { count: 3, min: 10, max: 30 } });
  });

  it('latency and trends: from raw rows, and from rollups alone once the raw rows are pruned', async () => {
    const s = await storeOn(await open(), engine);
    for (let h = 0; h < 6; h++) for (let m = 0; m < 4; m++) await s.recordSnapshot('api', { status: 'operational', checked_at: at(T0 + h * HOUR + m * 15 * 60_000), response_time_ms: 10 * (h + 1) });
    // Whole hours only: every piece read from the rollups.
    expect(await s.latency('api', T0, T0 + 6 * HOUR)).toMatchObject({ count: 24, min: 10, max: 60 });
    expect(await s.latency('api', T0 + 30 * 60_000, T0 + 2 * HOUR)).toMatchObject({ count: 6, min: 10, max: 20 });
    expect(await s.latency('api', T0 + 7 * HOUR)).toBeNull();
    const fromRaw = await s.trend('api', T0, 2 * HOUR, 3);
    expect(fromRaw.map((b) => [b.start, b.count, b.min, b.max])).toEqual([
      [at(T0), 8, 10, 20],
      [at(T0 + 2 * HOUR), 8, 30, 40],
      [at(T0 + 4 * HOUR), 8, 50, 60],
    ]);
    expect(await s.prune({ rawBeforeMs: T0 + 4 * HOUR, rollupsBeforeMs: T0 })).toBe(16);
    expect((await s.recent('api', 100)).length).toBe(8);
    // The same trend, read from the hourly rollups now that its start is before the raw floor.
    expect((await s.trend('api', T0, 2 * HOUR, 3)).map((b) => [b.start, b.count, b.min, b.max])).toEqual(fromRaw.map((b) => [b.start, b.count, b.min, b.max]));
    expect(await s.counts('api', T0 + 10, Infinity)).toEqual({ operational: 20, degraded: 0, down: 0, maintenance: 0 });
  });

  it('firstCheckAt: the first check from raw rows; the start of its hour once they are pruned (the SLA report\'s watched time)', async () => {
    const s = await storeOn(await open(), engine);
    expect(await s.firstCheckAt('api')).toBeUndefined();
    for (const ms of [T0 + 54 * 60_000, T0 + 55 * 60_000, T0 + 2 * HOUR]) await s.recordSnapshot('api', { status: 'down', checked_at: at(ms), response_time_ms: 0 });
    await s.recordSnapshot('web', { status: 'operational', checked_at: at(T0 - DAY), response_time_ms: 1 });
    expect(await s.firstCheckAt('api')).toBe(T0 + 54 * 60_000);
    // The first hour's raw rows pruned: the first one left (T0 + 2 h) is not the first check.
    await s.prune({ rawBeforeMs: T0 + HOUR, rollupsBeforeMs: T0 - 2 * DAY });
    expect(await s.firstCheckAt('api')).toBe(T0);
  });

  it('routes, DNS results, TLS and WHOIS results and test runs read back as written', async () => {
    const s = await storeOn(await open(), engine);
    const route = { path: '/b', status_code: 200, ok: true, checked_at: at(T0), response_time_ms: 5 };
    await s.saveRoutes('api', [route, { ...route, path: '/a', ok: false, status_code: 500, error: 'HTTP 500' }]);
    expect((await s.routes('api')).map((r) => r.path)).toEqual(['/a', '/b']);
    await s.saveRoutes('api', [route]);
    expect(await s.routes('api')).toEqual([route]);
    const dns = { name: 'example.com', record_type: 'A', expected: ['192.0.2.1'], actual: ['192.0.2.1'], matches: true, checked_at: at(T0) };
    await s.saveDns('api', [dns]);
    expect(await s.dns('api')).toEqual([dns]);
    expect(await s.dns('web')).toEqual([]);
    await s.saveResult('api', 'tls', { days_left: 30 });
    await s.saveResult('api', 'tls', { days_left: 29 });
    expect(await s.result('api', 'tls')).toEqual({ days_left: 29 });
    expect(await s.result('api', 'whois')).toBeUndefined();
    await s.recordTestRun('api', { started_at: at(T0), exit_code: 0, duration_ms: 100, passed: true });
    await s.recordTestRun('api', { started_at: at(T0 + 60_000), exit_code: 1, duration_ms: 120, passed: false, error: 'failed' });
    expect(await s.testRuns('api', 10)).toEqual([
      { started_at: at(T0 + 60_000), exit_code: 1, duration_ms: 120, passed: false, error: 'failed' },
      { started_at: at(T0), exit_code: 0, duration_ms: 100, passed: true },
    ]);
    expect(await s.lastPassingRun('api')).toEqual({ started_at: at(T0), exit_code: 0, duration_ms: 100, passed: true });
    expect(await s.lastPassingRun('web')).toBeUndefined();
  });

  it('incidents: opened once, counted, resolved, listed by overlap; the rollup prune drops old resolved ones and their alerts', async () => {
    const s = await storeOn(await open(), engine);
    const first = await s.openIncident('api', at(T0), 'HTTP 503', 3);
    await s.addIncidentCheck(first.id);
    expect(await s.currentIncident('api')).toMatchObject({ id: first.id, status: 'open', checks: 4, ended_at: null, duration_s: null });
    expect(await s.claimAlert(first.id, 'incident.opened')).toBe(true);
    expect(await s.resolveIncident(first.id, at(T0 + 90_000))).toBe(true);
    expect(await s.resolveIncident(first.id, at(T0 + 95_000))).toBe(false);
    const second = await s.openIncident('api', at(T0 + DAY), 'timeout', 3);
    expect((await s.incidents('api', 10)).map((i) => i.id)).toEqual([second.id, first.id]);
    expect((await s.incidents('api', 10))[1]).toMatchObject({ status: 'resolved', duration_s: 90 });
    expect((await s.incidentsBetween('api', T0 + HOUR, T0 + 2 * DAY, 10)).map((i) => i.id)).toEqual([second.id]);
    expect((await s.incidentsBetween('api', T0, T0 + 2 * DAY, 10)).map((i) => i.id)).toEqual([first.id, second.id]);
    // The resolved incident and its alert go; the open one stays.
    expect(await s.prune({ rawBeforeMs: T0, rollupsBeforeMs: T0 + HOUR })).toBe(2);
    expect((await s.incidents('api', 10)).map((i) => i.id)).toEqual([second.id]);
    expect(await s.alertClaimed(first.id, 'incident.opened')).toBe(false);
  });
});
