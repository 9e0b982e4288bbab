// The monitor's rollups against the raw rows they summarise: counts by outcome exactly and
// percentiles within the histogram's 1 %, for windows that start and end on and around hour and
// day boundaries, after a restart, a late check, a raw prune, a rollup prune, and for a database
// made before rollups existed (the migration folds its raw rows).
import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { CheckCounts, MonitorStore } from '../../../src/store/monitor.js';
import { planWindow } from '../../../src/store/monitor-rollups.js';
import { MONITOR_MIGRATIONS } from '../../../src/store/monitor-migrations-sqlite.js';
import { SqliteMonitorStore } from '../../../src/store/monitor-sqlite.js';
import { PgMonitorStore } from '../../../src/store/monitor-pg.js';
import { PgDatabase } from '../../../src/store/sql-pg.js';
import type { Engine } from '../../../src/store/sql.js';
import { ENGINES } from '../../helpers/engines.js';
import { freshDatabaseUrl } from '../../helpers/pg.js';
import { LatencyHistogram, bucketOf, rankOf, valueOf } from '../../../src/store/latency-histogram.js';
import { migrate, openDatabase } from '../../../src/store/sqlite.js';
import type { Snapshot } from '../../../src/schemas/monitor.js';
import { tempDir } from '../../helpers/tmp.js';

const HOUR = 3_600_000;
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 1, 0, 0, 0);

/** A small deterministic generator (mulberry32), so a failure replays. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Raw {
  ts: number;
  snap: Snapshot;
}

/** Checks every 3-11 minutes over `days`, mixed outcomes, some in maintenance, latencies 1 ms to 9 s. */
function history(seed: number, from: number, days: number): Raw[] {
  const r = rng(seed);
  const out: Raw[] = [];
  for (let ts = from; ts < from + days * DAY; ts += Math.floor((3 + r() * 8) * 60_000) + Math.floor(r() * 1000)) {
    const x = r();
    const status = x < 0.8 ? 'operational' : x < 0.9 ? 'degraded' : 'down';
    const rt = status === 'down' ? 0 : Math.max(1, Math.round(r() < 0.5 ? r() * 120 : Math.exp(r() * 9)));
    const snap: Snapshot = { status, checked_at: new Date(ts).toISOString(), response_time_ms: rt };
    if (r() < 0.05) snap.maintenance = true;
    out.push({ ts, snap });
  }
  return out;
}

function expected(rows: Raw[], since: number, until: number): CheckCounts {
  const c: CheckCounts = { operational: 0, degraded: 0, down: 0, maintenance: 0 };
  for (const { ts, snap } of rows) {
    if (ts < since || ts >= until) continue;
    if (snap.maintenance) c.maintenance++;
    else if (snap.status === 'operational') c.operational++;
    else if (snap.status === 'degraded') c.degraded++;
    else c.down++;
  }
  return c;
}

function exactLatency(rows: Raw[], since: number): number[] {
  return rows
    .filter((x) => x.ts >= since && !x.snap.maintenance && x.snap.response_time_ms > 0)
    .map((x) => x.snap.response_time_ms)
    .sort((a, b) => a - b);
}

/** Windows on, just before and just after hour and day boundaries, and ragged ones. */
function windows(from: number, to: number, seed: number): [number, number][] {
  const r = rng(seed);
  const out: [number, number][] = [
    [from, to],
    [from + DAY, from + 2 * DAY],
    [from + DAY - 1, from + 2 * DAY + 1],
    [from + DAY + 1, from + 2 * DAY - 1],
    [from + 3 * HOUR, from + 3 * HOUR + 1],
    [from + 5 * HOUR - 1, from + 5 * HOUR + 1],
    [from + 2 * HOUR + 17, from + 2 * HOUR + 59_000],
  ];
  for (let i = 0; i < 40; i++) {
    const a = from + Math.floor(r() * (to - from));
    const b = a + Math.floor(r() * (to - a)) + 1;
    out.push([a, b]);
  }
  return out;
}

const dirs: { remove(): void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

/** A store of the engine, opened again on the same data by each `open()` (a restart). */
function store(engine: Engine = 'sqlite'): { file: string; open(): Promise<MonitorStore> } {
  const d = tempDir();
  dirs.push(d);
  const file = join(d.path, 'monitor.db');
  if (engine === 'sqlite') return { file, open: async () => new SqliteMonitorStore(file) };
  const url = freshDatabaseUrl();
  return { file, open: async () => PgMonitorStore.open(await PgDatabase.open(await url)) };
}

async function record(s: MonitorStore, target: string, rows: Raw[]): Promise<void> {
  for (const { snap } of rows) await s.recordSnapshot(target, snap);
}

describe('latency histogram', () => {
  it('is exact below 128 ms and within 1 % (plus rounding to the ms) above, up to an hour', () => {
    for (let v = 1; v < 128; v++) expect(valueOf(bucketOf(v))).toBe(v);
    for (let v = 128; v < 3_600_000; v = Math.ceil(v * 1.003)) {
      expect(Math.abs(valueOf(bucketOf(v)) - v)).toBeLessThanOrEqual(0.01 * v + 0.5);
    }
  });

  it('survives encoding, merges, and refuses a corrupt blob', () => {
    const a = new LatencyHistogram();
    const b = new LatencyHistogram();
    [5, 5, 300, 70000, 1].forEach((v) => a.add(v));
    [2, 900_000].forEach((v) => b.add(v));
    const c = new LatencyHistogram();
    c.addEncoded(a.encode(), a.count, a.sum, a.min, a.max);
    c.addEncoded(b.encode(), b.count, b.sum, b.min, b.max);
    a.merge(b);
    expect(c.stats()).toEqual(a.stats());
    expect(c.stats()).toMatchObject({ count: 7, min: 1, max: 900_000 });
    const blob = a.encode();
    expect(() => new LatencyHistogram().addEncoded(blob.subarray(0, blob.length - 1), a.count, a.sum, a.min, a.max)).toThrow(/corrupt/);
    expect(() => new LatencyHistogram().addEncoded(blob, a.count + 1, a.sum, a.min, a.max)).toThrow(/corrupt/);
    // A bucket past any response time (a forged delta of 2^35) is refused before it sizes anything.
    expect(() => new LatencyHistogram().addEncoded(Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x01]), 1, 5, 5, 5)).toThrow(/corrupt/);
  });
});

describe('planWindow', () => {
  it('reads ragged edges raw, whole hours and days from rollups, and cuts an edge before the raw floor to the hour', () => {
    const since = T0 + 5 * HOUR + 10;
    const until = T0 + 3 * DAY + 2 * HOUR + 7;
    expect(planWindow(since, until, 0)).toEqual({
      raw: [
        [since, T0 + 6 * HOUR],
        [T0 + 3 * DAY + 2 * HOUR, until],
      ],
      hour: [
        [T0 + 6 * HOUR, T0 + DAY],
        [T0 + 3 * DAY, T0 + 3 * DAY + 2 * HOUR],
      ],
      day: [[T0 + DAY, T0 + 3 * DAY]],
    });
    expect(planWindow(since, until, T0 + DAY).raw).toEqual([[T0 + 3 * DAY + 2 * HOUR, until]]);
    expect(planWindow(T0 + 10, T0 + 20, 0)).toEqual({ raw: [[T0 + 10, T0 + 20]], hour: [], day: [] });
    expect(planWindow(T0 + 10, T0 + 20, T0 + HOUR)).toEqual({ raw: [], hour: [], day: [] });
  });
});

for (const engine of ENGINES) describe(`monitor rollups [${engine}]`, () => {
  it('agree with the raw rows across hour and day boundaries, a restart and a late check', async () => {
    const db = store(engine);
    // Two hours without checks (the target was not checked), filled later by one late check.
    const hole = T0 + 4 * DAY + 6 * HOUR;
    const rowsA = history(1, T0, 9).filter((x) => x.ts < hole || x.ts >= hole + 2 * HOUR);
    const rowsB = history(2, T0 + 7 * HOUR, 5);
    let s = await db.open();
    await record(s, 'a', rowsA.slice(0, 1500));
    await record(s, 'b', rowsB);
    await s.close();
    s = await db.open(); // a restart halfway through a's history
    await record(s, 'a', rowsA.slice(1500));
    // A late check: recorded now for an hour that already has its rollup.
    const late: Raw = { ts: T0 + 2 * DAY + 30 * 60_000 + 5, snap: { status: 'down', checked_at: new Date(T0 + 2 * DAY + 30 * 60_000 + 5).toISOString(), response_time_ms: 0 } };
    await s.recordSnapshot('a', late.snap);
    rowsA.push(late);
    // And a late check in an hour that had none, between hours that have rollups.
    const lateTs = hole + HOUR + 7;
    const late2: Raw = { ts: lateTs, snap: { status: 'degraded', checked_at: new Date(lateTs).toISOString(), response_time_ms: 40 } };
    await s.recordSnapshot('a', late2.snap);
    rowsA.push(late2);
    for (const [target, rows] of [['a', rowsA], ['b', rowsB]] as const) {
      const ws = windows(T0, T0 + 9 * DAY, target.charCodeAt(0));
      for (const [a, b] of ws) {
        expect(await s.counts(target, a, b), `${target} [${new Date(a).toISOString()}, ${new Date(b).toISOString()})`).toEqual(expected(rows, a, b));
      }
      // All windows at once, open-ended ones included, read as one.
      const many: [number, number][] = [...ws, ...ws.slice(0, 10).map(([a]): [number, number] => [a, Infinity])];
      expect(await s.countsMany(target, many)).toEqual(many.map(([a, b]) => expected(rows, a, b)));
      const since = T0 + DAY + 13 * 60_000 + 1;
      const up = expected(rows, since, Infinity);
      expect(await s.uptime(target, since)).toEqual({ total: up.operational + up.degraded + up.down, up: up.operational + up.degraded });
      const values = exactLatency(rows, since);
      const lat = (await s.latency(target, since))!;
      expect(lat.count).toBe(values.length);
      expect(lat.min).toBe(values[0]);
      expect(lat.max).toBe(values[values.length - 1]);
      expect(lat.mean).toBeCloseTo(values.reduce((x, y) => x + y, 0) / values.length, 0);
      for (const p of [50, 95, 99] as const) {
        const exact = values[rankOf(values.length, p)]!;
        expect(Math.abs(lat[`p${p}`] - exact), `p${p}`).toBeLessThanOrEqual(0.01 * exact + 0.5);
      }
    }
    // Each day's rollup is the sum of its hours.
    const days = await s.rollups('a', 'day', T0, T0 + 10 * DAY);
    const hours = await s.rollups('a', 'hour', T0, T0 + 10 * DAY);
    expect(days.length).toBe(9);
    for (const d of days) {
      const hs = hours.filter((h) => h.start >= d.start && h.start < d.start + DAY);
      expect(hs.reduce((n, h) => n + h.down, 0)).toBe(d.down);
      expect(hs.reduce((n, h) => n + (h.latency?.count ?? 0), 0)).toBe(d.latency?.count ?? 0);
    }
    await s.close();
  });

  it('after a raw prune: whole hours from rollups, a ragged start cut to the hour, nothing lost beyond', async () => {
    const db = store(engine);
    const rows = history(3, T0, 8);
    const s = await db.open();
    await record(s, 'a', rows);
    const rawBefore = T0 + 3 * DAY + 5 * HOUR + 20 * 60_000;
    const removed = await s.prune({ rawBeforeMs: rawBefore, rollupsBeforeMs: T0 });
    expect(removed).toBe(rows.filter((x) => x.ts < T0 + 3 * DAY + 5 * HOUR).length);
    for (const [a, b] of windows(T0, T0 + 8 * DAY, 9)) {
      const floor = T0 + 3 * DAY + 5 * HOUR;
      const start = a < floor ? Math.ceil(a / HOUR) * HOUR : a;
      const end = b < floor ? Math.floor(b / HOUR) * HOUR : b;
      expect(await s.counts('a', a, b)).toEqual(end > start ? expected(rows, start, end) : expected([], 0, 0));
    }
    // Raw edges in the kept part are still exact after the prune.
    const since = T0 + 6 * DAY + 7;
    expect(await s.counts('a', since, Infinity)).toEqual(expected(rows, since, Infinity));
    // Trends reaching before the raw floor come from hourly rollups.
    const trend = await s.trend('a', T0 + DAY, 6 * HOUR, 8);
    expect(trend.reduce((n, b) => n + b.count, 0)).toBe(exactLatency(rows, T0 + DAY).length - exactLatency(rows, T0 + 3 * DAY).length);
    await s.close();
  });

  it('a rollup prune drops whole hours and days before its cut-off', async () => {
    const db = store(engine);
    const rows = history(4, T0, 4);
    const s = await db.open();
    await record(s, 'a', rows);
    await s.prune({ rawBeforeMs: T0 + 2 * DAY, rollupsBeforeMs: T0 + DAY + 3 * HOUR });
    expect((await s.rollups('a', 'day', 0, Infinity)).map((d) => d.start)).toEqual([T0 + DAY, T0 + 2 * DAY, T0 + 3 * DAY]);
    expect((await s.rollups('a', 'hour', 0, Infinity))[0]!.start).toBe(T0 + DAY + 3 * HOUR);
    // Windows reaching before the cut-off count the hours kept, nothing pruned.
    for (const since of [0, T0, T0 + DAY + 3 * HOUR, T0 + DAY + 3 * HOUR + 1]) {
      const kept = Math.max(since, T0 + DAY + 3 * HOUR);
      expect(await s.counts('a', since, T0 + 2 * DAY)).toEqual(expected(rows, Math.ceil(kept / HOUR) * HOUR, T0 + 2 * DAY));
      expect(await s.counts('a', since, Infinity)).toEqual(expected(rows, Math.ceil(kept / HOUR) * HOUR, Infinity));
    }
    await s.close();
  });

});

describe('monitor store migrations', () => {
  it('the migration folds the raw rows of a database made before rollups', async () => {
    const db = store();
    const rows = history(5, T0, 3);
    const old = openDatabase(db.file);
    migrate(old, 'monitor', MONITOR_MIGRATIONS.slice(0, 1));
    const ins = old.prepare('INSERT INTO snapshots (target, ts, checked_at, status, response_time_ms) VALUES (?, ?, ?, ?, ?)');
    for (const { ts, snap } of rows) ins.run('a', ts, snap.checked_at, snap.status, snap.response_time_ms);
    old.close();
    const s = await db.open();
    // Old rows have no maintenance flag: they count by their status.
    const plain = rows.map((x) => ({ ts: x.ts, snap: { ...x.snap, maintenance: undefined } }));
    for (const [a, b] of windows(T0, T0 + 3 * DAY, 11)) expect(await s.counts('a', a, b)).toEqual(expected(plain, a, b));
    await s.prune({ rawBeforeMs: T0 + 3 * DAY, rollupsBeforeMs: T0 });
    expect(await s.counts('a', T0, T0 + 3 * DAY)).toEqual(expected(plain, T0, T0 + 3 * DAY));
    await s.close();
  });
});
