// The status cache against a status built straight from the store: recent snapshots kept in
// memory (late ones in the store's order), uptime counted in as checks arrive, windows warmed by
// the background refresh so a request reads none, and a read racing a check not cached as current.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseMonitorConfig } from '../../../../src/config/monitor.js';
import type { Snapshot } from '../../../../src/store/monitor.js';
import { SqliteMonitorStore } from '../../../../src/store/monitor-sqlite.js';
import { StatusCache, withRecent } from '../../../../daemon/services/monitor/status-cache.js';
import { buildTargetStatus } from '../../../../daemon/services/monitor/status.js';
import { waitFor } from '../../../helpers/wait.js';

const T0 = Date.UTC(2026, 10, 20, 12, 0, 0);
const snap = (ms: number, status = 'operational', rt = 12): Snapshot => ({ status, checked_at: new Date(ms).toISOString(), response_time_ms: rt });

const stores: SqliteMonitorStore[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const s of stores.splice(0)) await s.close();
});

function setup(names = ['api', 'web']) {
  const store = new SqliteMonitorStore(':memory:');
  stores.push(store);
  const config = parseMonitorConfig(`targets:\n${names.map((n) => `  ${n}:\n    url: http://127.0.0.1/h\n`).join('')}`);
  let now = T0;
  const cache = new StatusCache(store, () => now);
  /** Records as the engine does: the store, then the cache. */
  const record = async (target: string, s: Snapshot): Promise<void> => {
    await store.recordSnapshot(target, s);
    cache.invalidate(target, [s]);
  };
  return { store, config, cache, record, tick: (ms: number) => (now += ms), now: () => now };
}

describe('withRecent', () => {
  it('keeps the store order: newest first, a late check in its place, at most ten', () => {
    let r: Snapshot[] = [];
    for (let i = 0; i < 12; i++) r = withRecent(r, [snap(T0 + i * 1000)]);
    expect(r.map((s) => Date.parse(s.checked_at))).toEqual(Array.from({ length: 10 }, (_, i) => T0 + (11 - i) * 1000));
    const late = withRecent(r, [snap(T0 + 5500, 'down', 0)]);
    expect(late.map((s) => Date.parse(s.checked_at) - T0)).toEqual([11000, 10000, 9000, 8000, 7000, 6000, 5500, 5000, 4000, 3000]);
    expect(withRecent(r, [snap(T0 - 1)])).toEqual(r); // older than all ten: not among the last ten
    expect(r).toHaveLength(10); // the input is left as it was
    const tie = withRecent(r, [{ ...snap(T0 + 11000, 'down', 0), error: 'x', maintenance: true }]);
    expect(tie[0]).toEqual({ status: 'down', checked_at: new Date(T0 + 11000).toISOString(), response_time_ms: 0, error: 'x', maintenance: true });
  });

  it('takes a group in the order it was recorded, and a time of another form in its place', () => {
    const r = [snap(T0 + 3000), snap(T0 + 2000), snap(T0 + 1000)];
    const group = withRecent(r, [snap(T0 + 4000, 'down', 0), snap(T0 + 4000), snap(T0 + 1500, 'degraded', 5)]);
    expect(group.map((s) => [Date.parse(s.checked_at) - T0, s.status])).toEqual([[4000, 'operational'], [4000, 'down'], [3000, 'operational'], [2000, 'operational'], [1500, 'degraded'], [1000, 'operational']]);
    // Not toISOString's form: compared by the time it names, not by its text.
    const offset = withRecent(r, [{ ...snap(0), checked_at: new Date(T0 + 2500).toISOString().replace('Z', '+00:00') }]);
    expect(offset.map((s) => Date.parse(s.checked_at) - T0)).toEqual([3000, 2500, 2000, 1000]);
    const big = withRecent(r, Array.from({ length: 12 }, (_, i) => snap(T0 + 10_000 + i)));
    expect(big).toHaveLength(10);
    expect(Date.parse(big[0]!.checked_at) - T0).toBe(10_011);
  });
});

describe('StatusCache', () => {
  it('serves what a status built from the store says, through checks, late checks and time', async () => {
    const { store, config, cache, record, tick, now } = setup();
    const [api] = config.targets;
    for (let i = 0; i < 30; i++) await record('api', snap(T0 - (30 - i) * 60_000, i % 7 === 0 ? 'down' : 'operational', i % 7 === 0 ? 0 : 10 + i));
    await cache.get(api!); // recent and windows now cached
    for (let i = 0; i < 20; i++) {
      tick(61_000);
      await record('api', snap(now() - 1000, i % 5 === 0 ? 'degraded' : 'operational', 20 + i));
      if (i % 6 === 0) await record('api', snap(now() - 600_000 - i, 'down', 0)); // late
      const cached = await cache.get(api!);
      const fresh = await buildTargetStatus(store, api!, now());
      expect(cached.recent).toEqual(fresh.recent);
      expect(cached.latest).toEqual(fresh.latest);
      expect(cached.uptime_24h).toEqual(fresh.uptime_24h);
      expect(cached.uptime_365d).toEqual(fresh.uptime_365d);
    }
  });

  it('refresh warms every target: a request then reads no windows from the store', async () => {
    const { store, config, cache, record } = setup(['a', 'b', 'c']);
    for (const t of config.targets) for (let i = 0; i < 5; i++) await record(t.name, snap(T0 - i * 60_000));
    let reads = 0;
    const countsMany = store.countsMany.bind(store);
    store.countsMany = async (...args) => {
      reads++;
      return countsMany(...args);
    };
    await cache.refresh(config.targets);
    expect(reads).toBe(3);
    const all = await cache.all(config);
    expect(reads).toBe(3);
    expect(all.b!.uptime_24h).toBe(100);
    expect(all.c!.recent).toHaveLength(5);
    // A second pass within the refresh age rebuilds nothing.
    await cache.refresh(config.targets);
    expect(reads).toBe(3);
  });

  it('a check recorded while a status is read is not lost: the next read has it', async () => {
    const { store, config, cache, record, now } = setup(['a']);
    const [a] = config.targets;
    await record('a', snap(now() - 5000));
    // The check lands between the store read and the cache fill.
    const recent = store.recent.bind(store);
    let once = true;
    store.recent = async (...args) => {
      const r = await recent(...args);
      if (once) {
        once = false;
        await record('a', snap(now() - 1000, 'down', 0));
      }
      return r;
    };
    await cache.get(a!);
    const s = await cache.get(a!);
    expect(s.recent.map((x) => x.status)).toEqual(['down', 'operational']);
    expect(s.uptime_24h).toBe(50);
  });

  it('the background refresh warms at start, then runs only while statuses are read', async () => {
    const store = new SqliteMonitorStore(':memory:');
    stores.push(store);
    const config = parseMonitorConfig('targets:\n  a:\n    url: http://127.0.0.1/h\n  b:\n    url: http://127.0.0.1/h\n');
    let now = T0;
    const cache = new StatusCache(store, () => now, undefined, 10);
    let reads = 0;
    const countsMany = store.countsMany.bind(store);
    store.countsMany = async (...args) => {
      reads++;
      return countsMany(...args);
    };
    // The refresh's interval runs on a fake clock stepped by the test: with a real 10 ms timer a
    // loaded machine let a tick land inside the reader's get() below (the reader had just made the
    // refresh due), which rebuilt b early and made the counts race. Other timers stay real.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    /** 20 ticks of the 10 ms refresh: enough for a pass nobody asked for to show. */
    const quiet = async (): Promise<void> => {
      vi.advanceTimersByTime(200);
      await new Promise((r) => setTimeout(r, 50));
    };
    cache.start(() => config.targets, (e) => {
      throw e;
    });
    await waitFor(async () => reads === 2, 'the warm-up pass');
    now += 60_000; // windows aged, but nobody has read a status
    await quiet();
    expect(reads).toBe(2);
    await cache.get(config.targets[0]!); // a reader: a's windows were 60 s old, rebuilt inline
    expect(reads).toBe(3);
    now += 25_000; // older than the refresh age: the background pass rebuilds both
    vi.advanceTimersByTime(10);
    await waitFor(async () => reads === 5, 'the refresh of both targets');
    now += 10 * 60_000; // the reader has gone
    await quiet();
    expect(reads).toBe(5);
    await cache.stop();
  });

  it('stop() ends the background refresh; the store can close after it', async () => {
    const { store, config, cache, record } = setup(['a', 'b']);
    await record('a', snap(T0 - 1000));
    const errors: unknown[] = [];
    cache.start(() => config.targets, (e) => errors.push(e));
    await cache.stop();
    await store.close();
    await new Promise((r) => setTimeout(r, 20));
    expect(errors).toEqual([]);
  });
});
