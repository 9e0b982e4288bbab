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
