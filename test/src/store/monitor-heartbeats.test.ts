// Heartbeat state in the monitor store, on both engines: the ping key is made once per target
// (ten concurrent first calls agree on one), is at least 16 URL-safe characters, and a signal
// answers the state as it was before it.
import { expect, it } from 'vitest';
import type { MonitorStore } from '../../../src/store/monitor.js';
import { SqliteMonitorStore } from '../../../src/store/monitor-sqlite.js';
import { PgMonitorStore } from '../../../src/store/monitor-pg.js';
import type { SqliteDatabase } from '../../../src/store/sql-sqlite.js';
import type { Engine, SqlDatabase } from '../../../src/store/sql.js';
import { describeEngines } from '../../helpers/engines.js';

const T0 = Date.UTC(2026, 9, 24, 12, 0, 0);

async function storeOn(db: SqlDatabase, engine: Engine): Promise<MonitorStore> {
  return engine === 'sqlite' ? new SqliteMonitorStore(db as SqliteDatabase) : PgMonitorStore.open(db);
}

describeEngines('heartbeat state', (open, engine) => {
  it('ensure() makes the state once: the same key and first sighting on every later call', async () => {
    const s = await storeOn(await open(), engine);
    const first = await s.heartbeats.ensure('backup', T0);
    expect(first).toEqual({ target: 'backup', key: first.key, since: T0 });
    expect(first.key).toMatch(/^[A-Za-z0-9_-]{16,}$/);
    expect(await s.heartbeats.ensure('backup', T0 + 60_000)).toEqual(first);
    expect(await s.heartbeats.get('backup')).toEqual(first);
    // Another target has a key of its own.
    const other = await s.heartbeats.ensure('timer', T0);
    expect(other.key).toMatch(/^[A-Za-z0-9_-]{16,}$/);
    expect(other.key).not.toBe(first.key);
    expect((await s.heartbeats.states(['backup', 'timer', 'none'])).map((x) => x.target).sort()).toEqual(['backup', 'timer']);
  });

  it('ten concurrent first ensure() calls for one target all answer the one key that won', async () => {
    const s = await storeOn(await open(), engine);
    const all = await Promise.all([...Array(10)].map((_, i) => s.heartbeats.ensure('race', T0 + i)));
    const keys = new Set(all.map((x) => x.key));
    expect(keys.size).toBe(1);
    expect(new Set(all.map((x) => x.since)).size).toBe(1);
    expect((await s.heartbeats.get('race'))?.key).toBe(all[0]!.key);
  });

  it('signal() records start and end and answers the state before it', async () => {
    const s = await storeOn(await open(), engine);
    const made = await s.heartbeats.ensure('job', T0);
    expect(await s.heartbeats.signal('job', { kind: 'start' }, T0 + 1000)).toEqual(made);
    const started = { ...made, lastStart: T0 + 1000 };
    expect(await s.heartbeats.signal('job', { kind: 'end', ok: true }, T0 + 5000)).toEqual(started);
    const ok = { ...started, lastEnd: T0 + 5000, lastOk: true };
    expect(await s.heartbeats.signal('job', { kind: 'end', ok: false, error: 'the job exited with status 3' }, T0 + 9000)).toEqual(ok);
    expect(await s.heartbeats.get('job')).toEqual({ ...started, lastEnd: T0 + 9000, lastOk: false, lastError: 'the job exited with status 3' });
    // A success after a failure clears its error.
    await s.heartbeats.signal('job', { kind: 'end', ok: true }, T0 + 12_000);
    expect(await s.heartbeats.get('job')).toEqual({ ...started, lastEnd: T0 + 12_000, lastOk: true });
    // A signal for a target never ensured records nothing and answers undefined.
    expect(await s.heartbeats.signal('ghost', { kind: 'start' }, T0)).toBeUndefined();
    expect(await s.heartbeats.get('ghost')).toBeUndefined();
  });
});

describeEngines('heartbeat pings written as a group', (open, engine) => {
  it('answers the state before each ping and after the last, and folds rollups as one-by-one recording does, across an hour', async () => {
    const grouped = await storeOn(await open(), engine);
    const single = await storeOn(await open(), engine);
    await grouped.heartbeats.ensure('job', T0);
    // 12:59:58 start, 12:59:59 success, 13:00:01 exit 3, 13:00:02 start: two hours, two days' worth of one day.
    const at = [T0 + 3_598_000, T0 + 3_599_000, T0 + 3_601_000, T0 + 3_602_000];
    const pings = [
      { signal: { kind: 'start' as const }, at: at[0]! },
      { signal: { kind: 'end' as const, ok: true }, at: at[1]! },
      { signal: { kind: 'end' as const, ok: false, error: 'the job exited with status 3' }, at: at[2]! },
      { signal: { kind: 'start' as const }, at: at[3]! },
    ];
    const snapshotOf = (_before: unknown, i: number) => ({ status: i === 2 ? ('down' as const) : ('operational' as const), checked_at: new Date(at[i]!).toISOString(), response_time_ms: i === 1 ? 1000 : 0, details: { signal: String(i) } });
    const seen: unknown[] = [];
    const { snapshots, state } = await grouped.recordHeartbeatPings('job', pings, (before, i) => {
      seen.push(before && { lastStart: before.lastStart, lastEnd: before.lastEnd, lastOk: before.lastOk });
      return snapshotOf(before, i);
    });
    expect(seen).toEqual([
      { lastStart: undefined, lastEnd: undefined, lastOk: undefined },
      { lastStart: at[0], lastEnd: undefined, lastOk: undefined },
      { lastStart: at[0], lastEnd: at[1], lastOk: true },
      { lastStart: at[0], lastEnd: at[2], lastOk: false },
    ]);
    expect(state).toMatchObject({ lastStart: at[3], lastEnd: at[2], lastOk: false, lastError: 'the job exited with status 3' });
    expect(await grouped.heartbeats.get('job')).toEqual(state);
    for (let i = 0; i < snapshots.length; i++) await single.recordSnapshot('job', snapshotOf(undefined, i));
    for (const s of [grouped, single]) expect((await s.recent('job', 10)).map((x) => x.checked_at)).toEqual([...at].reverse().map((x) => new Date(x).toISOString()));
    for (const grain of ['hour', 'day'] as const) expect(await grouped.rollups('job', grain, T0 - 86_400_000, T0 + 86_400_000)).toEqual(await single.rollups('job', grain, T0 - 86_400_000, T0 + 86_400_000));
    expect(await grouped.counts('job', T0, T0 + 7_200_000)).toEqual(await single.counts('job', T0, T0 + 7_200_000));
    // A target the store never saw: no state, and its snapshots are still recorded.
    const unseen = await grouped.recordHeartbeatPings('ghost', [pings[1]!], () => snapshotOf(undefined, 1));
    expect(unseen.state).toBeUndefined();
    expect(await grouped.recent('ghost', 1)).toHaveLength(1);
  });

  it('a group larger than one INSERT statement (250 pings) records every row and counts each once', async () => {
    const s = await storeOn(await open(), engine);
    await s.heartbeats.ensure('burst', T0);
    const pings = Array.from({ length: 250 }, (_, i) => ({ signal: { kind: 'end' as const, ok: i % 5 !== 0, error: 'failed' }, at: T0 + i * 10 }));
    const { snapshots, state } = await s.recordHeartbeatPings('burst', pings, (_b, i) => ({ status: i % 5 === 0 ? ('down' as const) : ('operational' as const), checked_at: new Date(pings[i]!.at).toISOString(), response_time_ms: 0 }));
    expect(snapshots).toHaveLength(250);
    expect(state).toMatchObject({ lastEnd: T0 + 2490, lastOk: true });
    expect(await s.recent('burst', 1000)).toHaveLength(250);
    expect(await s.counts('burst', T0, T0 + 3_600_000)).toMatchObject({ operational: 200, down: 50 });
  });
});
