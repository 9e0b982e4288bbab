// Crash safety of the monitor's history (issue 14 rollups): the real `mkt serve monitor` records
// checks of 40 targets every 50 ms, is SIGKILLed while recording three times and restarted on the
// same data dir. A raw check and its rollups are written in one transaction, so after every kill
// the store must agree with itself: each `snapshots` row counted exactly once in `rollup_hour` and
// `rollup_day`, each hour's running totals (cum_*) equal to the sum of the target's hours up to it,
// and `counts` equal to the raw rows. The restarted daemon goes on recording and still agrees.
import { afterEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Snapshot } from '../../../src/store/monitor.js';
import { SqliteMonitorStore } from '../../../src/store/monitor-sqlite.js';
import { healthServer, type HealthMode } from '../../helpers/monitor-fixtures.js';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';
import { serve, type Served } from './harness.js';

const TARGETS = 40;
/** The last targets are under a maintenance window for the whole run: their checks count only as maintenance. */
const IN_MAINTENANCE = 8;
/** The first targets hold a check two hours ahead (a clock that ran fast, then was stepped back). */
const AHEAD = 5;
const KILLS = 3;
/** Checks each run records before it is killed: well past start-up, with every target checking. */
const PER_RUN = 300;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const names = Array.from({ length: TARGETS }, (_, i) => `t${String(i).padStart(2, '0')}`);

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function config(url: string): string {
  const maintained = names.slice(TARGETS - IN_MAINTENANCE);
  // timeout 2 s: a loaded machine's slow answer is still an answer, not a flood of timeouts.
  const targets = names.map((n) => `  ${n}:\n    url: ${url}\n    interval: 50ms\n    timeout: 2s\n`).join('');
  return `name: crash\ntoken: mon-token\nmaintenance:\n  - name: works\n    targets: [${maintained.join(', ')}]\n    from: 2020-01-01T00:00Z\n    to: 2099-01-01T00:00Z\ntargets:\n${targets}`;
}

/**
 * History from before the first start, through the store: yesterday and the last three hours, so
 * the live hour's running totals build on earlier hours (and across a UTC day), and for the first
 * AHEAD targets a check two hours ahead, so every live check is late and must also raise that
 * later hour's running totals in its transaction.
 */
async function seed(file: string, now: number): Promise<void> {
  const statuses = ['operational', 'degraded', 'down', 'operational'];
  const store = new SqliteMonitorStore(file);
  try {
    for (const [i, t] of names.entries()) {
      const at: number[] = [];
      for (const back of [26, 3, 2, 1]) for (let k = 0; k < 3; k++) at.push(now - back * HOUR + k * 60_000);
      if (i < AHEAD) at.push(now + 2 * HOUR);
      for (const [k, ts] of at.entries()) {
        const status = statuses[(i + k) % statuses.length]!;
        const s: Snapshot = { status, checked_at: new Date(ts).toISOString(), response_time_ms: status === 'down' ? 0 : 5 + ((i * 7 + k * 13) % 90) };
        if ((i + k) % 5 === 0) s.maintenance = true;
        await store.recordSnapshot(t, s);
      }
    }
  } finally {
    await store.close();
  }
}

function readonly(file: string): Database.Database {
  return new Database(file, { readonly: true, fileMustExist: true });
}

/** Live checks written in [sinceMs, untilMs) (the seeded history is older, or two hours ahead): how many, of how many targets, the last one, and by outcome. */
function progress(file: string, sinceMs: number, untilMs: number): { rows: number; targets: number; last: number | null } & Record<'operational' | 'degraded' | 'down' | 'maintenance', number> {
  const db = readonly(file);
  try {
    return db
      .prepare(
        `SELECT count(*) AS rows, count(DISTINCT target) AS targets, max(ts) AS last, coalesce(sum(maintenance = 0 AND status = 'operational'), 0) AS operational,
          coalesce(sum(maintenance = 0 AND status = 'degraded'), 0) AS degraded, coalesce(sum(maintenance = 0 AND status NOT IN ('operational', 'degraded')), 0) AS down,
          coalesce(sum(maintenance = 1), 0) AS maintenance FROM snapshots WHERE ts >= ? AND ts < ?`,
      )
      .get(sinceMs, untilMs) as ReturnType<typeof progress>;
  } finally {
    db.close();
  }
}

/** Per target and period: the checks by outcome as the store classifies them, and the latency of the timed ones outside maintenance. */
const FROM_RAW = (unit: number): string => `SELECT target, ts / ${unit} * ${unit} AS start,
    sum(maintenance = 0 AND status = 'operational') AS operational,
    sum(maintenance = 0 AND status = 'degraded') AS degraded,
    sum(maintenance = 0 AND status NOT IN ('operational', 'degraded')) AS down,
    sum(maintenance = 1) AS maintenance,
    sum(maintenance = 0 AND response_time_ms > 0) AS rt_count,
    coalesce(sum(CASE WHEN maintenance = 0 AND response_time_ms > 0 THEN response_time_ms END), 0) AS rt_sum,
    min(CASE WHEN maintenance = 0 AND response_time_ms > 0 THEN response_time_ms END) AS rt_min,
    max(CASE WHEN maintenance = 0 AND response_time_ms > 0 THEN response_time_ms END) AS rt_max
  FROM snapshots GROUP BY target, start ORDER BY target, start`;
const ROLLUP = (grain: 'hour' | 'day'): string =>
  `SELECT target, start, operational, degraded, down, maintenance, rt_count, rt_sum, rt_min, rt_max FROM rollup_${grain} ORDER BY target, start`;
/** Days as the sum of their hours (min and max of the hours' extremes). */
const DAYS_FROM_HOURS = `SELECT target, start / ${DAY} * ${DAY} AS day_start, sum(operational) AS operational, sum(degraded) AS degraded, sum(down) AS down,
    sum(maintenance) AS maintenance, sum(rt_count) AS rt_count, sum(rt_sum) AS rt_sum, min(rt_min) AS rt_min, max(rt_max) AS rt_max
  FROM rollup_hour GROUP BY target, day_start ORDER BY target, day_start`;
/** Hourly rows whose running totals are not the sum of the target's hours up to and including them. */
const BAD_CUM = `SELECT * FROM (SELECT target, start, cum_operational, cum_degraded, cum_down, cum_maintenance,
    sum(operational) OVER w AS want_operational, sum(degraded) OVER w AS want_degraded, sum(down) OVER w AS want_down, sum(maintenance) OVER w AS want_maintenance
  FROM rollup_hour WINDOW w AS (PARTITION BY target ORDER BY start ROWS UNBOUNDED PRECEDING))
  WHERE cum_operational != want_operational OR cum_degraded != want_degraded OR cum_down != want_down OR cum_maintenance != want_maintenance`;

type Row = Record<string, unknown>;

/** Rows of `got` and `want` (keyed by target and start) that differ or are missing on one side; the first 10. */
function differences(got: Row[], want: Row[], label: string): string[] {
  const key = (r: Row): string => `${String(r.target)}@${new Date(Number(r.start ?? r.day_start)).toISOString()}`;
  const norm = (r: Row): string => JSON.stringify({ ...r, start: undefined, day_start: undefined });
  const g = new Map(got.map((r) => [key(r), norm(r)]));
  const w = new Map(want.map((r) => [key(r), norm(r)]));
  const out: string[] = [];
  for (const k of new Set([...g.keys(), ...w.keys()])) if (g.get(k) !== w.get(k)) out.push(`${label} ${k}: stored ${g.get(k) ?? 'none'}, expected ${w.get(k) ?? 'none'}`);
  return out.slice(0, 10);
}

interface Totals {
  rows: number;
  operational: number;
  degraded: number;
  down: number;
  maintenance: number;
}

/** Checks the whole store as a crash left it; returns the raw totals for the sanity checks. */
async function expectConsistent(file: string, when: string): Promise<Totals> {
  const db = readonly(file);
  let totals: Totals;
  let perTarget: Map<string, number[]>;
  try {
    expect(db.pragma('integrity_check', { simple: true }), when).toBe('ok');
    const hours = db.prepare(ROLLUP('hour')).all() as Row[];
    const days = db.prepare(ROLLUP('day')).all() as Row[];
    expect(differences(hours, db.prepare(FROM_RAW(HOUR)).all() as Row[], 'hour'), `${when}: rollup_hour against snapshots`).toEqual([]);
    expect(differences(days, db.prepare(FROM_RAW(DAY)).all() as Row[], 'day'), `${when}: rollup_day against snapshots`).toEqual([]);
    expect(differences(days, db.prepare(DAYS_FROM_HOURS).all() as Row[], 'day'), `${when}: rollup_day against the sum of its hours`).toEqual([]);
    expect((db.prepare(BAD_CUM).all() as Row[]).slice(0, 10), `${when}: running totals of rollup_hour`).toEqual([]);
    totals = db.prepare(`SELECT count(*) AS rows, sum(maintenance = 0 AND status = 'operational') AS operational, sum(maintenance = 0 AND status = 'degraded') AS degraded,
      sum(maintenance = 0 AND status NOT IN ('operational', 'degraded')) AS down, sum(maintenance = 1) AS maintenance FROM snapshots`).get() as Totals;
    expect(hours.length, when).toBeGreaterThanOrEqual(TARGETS * 4); // the four seeded hours at least
    // Each target's timestamps, to cut its history at a raw row below.
    perTarget = new Map(names.map((t) => [t, (db.prepare('SELECT ts FROM snapshots WHERE target = ? ORDER BY ts').pluck().all(t) as number[])]));
  } finally {
    db.close();
  }

  // The store's own reading: every check once over all time, and split at a raw row mid-hour,
  // where the window's ragged edges are read from raw rows and the rest from running totals.
  const store = new SqliteMonitorStore(file);
  try {
    const raw = readonly(file);
    try {
      const count = raw.prepare(`SELECT coalesce(sum(maintenance = 0 AND status = 'operational'), 0) AS operational, coalesce(sum(maintenance = 0 AND status = 'degraded'), 0) AS degraded,
        coalesce(sum(maintenance = 0 AND status NOT IN ('operational', 'degraded')), 0) AS down, coalesce(sum(maintenance = 1), 0) AS maintenance
        FROM snapshots WHERE target = ? AND ts >= ? AND ts < ?`);
      for (const t of names) {
        const ts = perTarget.get(t)!;
        const cut = ts[Math.floor(ts.length / 2)]! + 1;
        expect(await store.counts(t, 0, Infinity), `${when}: counts of ${t}`).toEqual(count.get(t, 0, Number.MAX_SAFE_INTEGER));
        expect(await store.counts(t, 0, cut), `${when}: counts of ${t} before ${cut}`).toEqual(count.get(t, 0, cut));
        expect(await store.counts(t, cut, Infinity), `${when}: counts of ${t} from ${cut}`).toEqual(count.get(t, cut, Number.MAX_SAFE_INTEGER));
      }
    } finally {
      raw.close();
    }
  } finally {
    await store.close();
  }
  return totals;
}

describe('monitor history survives SIGKILL', () => {
  it('after each kill mid-recording, every raw check is counted once in the hourly and daily rollups and the running totals hold; restarts keep recording', async () => {
    const dir = tempDir('mkt-crash-monitor-');
    cleanups.push(() => dir.remove());
    const up = await healthServer();
    cleanups.push(() => up.close());
    // Outcomes vary: the endpoint cycles through up, degraded (its body says so), HTTP 500 and
    // down (its body says so), so every outcome column is written while the kills land.
    const modes: HealthMode[] = ['operational', 'degraded', 'failing', 'body-down'];
    let m = 0;
    const flip = setInterval(() => (up.mode = modes[++m % modes.length]!), 30);
    cleanups.push(() => clearInterval(flip));

    const file = join(dir.path, 'monitor.db');
    const seededAt = Date.now();
    await seed(file, seededAt);
    const ahead = seededAt + HOUR; // seeded rows two hours ahead are not live checks
    writeFileSync(join(dir.path, 'monitor.yaml'), config(up.url));

    let before = await expectConsistent(file, 'seeded');
    expect(before.rows).toBe(TARGETS * 12 + AHEAD);

    const run = async (label: string): Promise<{ server: Served; since: number }> => {
      const since = Date.now();
      const server = await serve('monitor', dir.path);
      cleanups.push(() => server.child.kill('SIGKILL'));
      // Checks flowing: this run has recorded PER_RUN checks, of every target.
      await waitFor(async () => {
        const p = progress(file, since, ahead);
        return p.rows >= PER_RUN && p.targets === TARGETS;
      }, `${label}: ${PER_RUN} checks of all ${TARGETS} targets`);
      return { server, since };
    };

    let firstSince = Infinity;
    for (let k = 1; k <= KILLS; k++) {
      const { server, since } = await run(`run ${k}`);
      firstSince = Math.min(firstSince, since);
      const killedAt = Date.now();
      server.child.kill('SIGKILL');
      expect(await server.exited).toBe('SIGKILL');
      // Killed while recording: it had written checks until just before the kill.
      const p = progress(file, since, ahead);
      expect(p.rows).toBeGreaterThanOrEqual(PER_RUN);
      expect(p.last!, `run ${k}: last check ${killedAt - p.last!} ms before the kill`).toBeGreaterThan(killedAt - 2_000);
      const after = await expectConsistent(file, `after kill ${k}`);
      expect(after.rows).toBeGreaterThanOrEqual(before.rows + PER_RUN);
      before = after;
    }

    // A last run on the same data dir records on and stops cleanly; the store still agrees.
    const { server, since } = await run('after the kills');
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(progress(file, since, ahead).rows).toBeGreaterThanOrEqual(PER_RUN);
    const end = await expectConsistent(file, 'after a clean stop');
    expect(end.rows).toBeGreaterThanOrEqual(before.rows + PER_RUN);
    // The live checks (not only the seed) wrote every outcome column.
    const live = progress(file, firstSince, ahead);
    for (const c of ['operational', 'degraded', 'down', 'maintenance'] as const) expect(live[c], c).toBeGreaterThan(TARGETS);
    expect(live.rows).toBe(end.rows - (TARGETS * 12 + AHEAD));
  });
});
