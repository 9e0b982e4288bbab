// Availability of the PostgreSQL store: when a loss and a return are told. The rule is checked
// on the class (the order of events a shutdown produces, which a real server gives only by
// chance), and the probe that finds the server back on a real server, with no statement sent.
import { describe, expect, it } from 'vitest';
import { Availability, PgDatabase } from '../../../src/store/sql-pg.js';
import { StoreUnavailableError } from '../../../src/store/sql.js';
import { freshDatabaseUrl } from '../../helpers/pg.js';
import { waitFor } from '../../helpers/wait.js';

const cut = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });

describe('Availability', () => {
  it('an answer on a connection older than the loss does not tell the server back (PostgreSQL cuts its connections one by one)', () => {
    const a = new Availability();
    const told: string[] = [];
    a.on((up) => told.push(up ? 'up' : 'down'));
    a.connected();
    expect(a.failed(cut)).toBeInstanceOf(StoreUnavailableError);
    // A statement sent after the loss was noticed, answered by a connection the server has not cut yet.
    a.ok(performance.now());
    expect(told).toEqual(['down']);
    expect(a.available).toBe(false);
    // A second old connection cut a moment later: the same outage, not told again.
    a.failed(Object.assign(new Error('Client has encountered a connection error and is not queryable'), {}));
    expect(told).toEqual(['down']);
    // Only once a new connection opened does an answer count.
    a.connected();
    a.ok(performance.now());
    expect(told).toEqual(['down', 'up']);
    expect(a.available).toBe(true);
  });

  it('a statement sent before the loss was noticed proves nothing; one failing that was sent before the return is the old outage', () => {
    const a = new Availability();
    const told: string[] = [];
    a.on((up) => told.push(up ? 'up' : 'down'));
    const before = performance.now();
    a.failed(cut);
    a.connected();
    a.ok(before);
    expect(told).toEqual(['down']);
    const during = performance.now();
    a.ok(performance.now());
    expect(told).toEqual(['down', 'up']);
    a.failed(cut, during);
    expect(told).toEqual(['down', 'up']);
    // A new loss, on a statement sent after the return, is told.
    a.failed(cut);
    expect(told).toEqual(['down', 'up', 'down']);
  });

  it('errors that are not a lost server say nothing', () => {
    const a = new Availability();
    const told: boolean[] = [];
    a.on((up) => told.push(up));
    const bad = Object.assign(new Error('syntax error'), { code: '42601' });
    expect(a.failed(bad)).toBe(bad);
    expect(told).toEqual([]);
    expect(a.available).toBe(true);
  });
});

describe('PgDatabase availability on a real server', () => {
  it('a loss that is not a restart (one backend terminated) is told back by the probe, with no statement sent after it', async () => {
    const url = await freshDatabaseUrl();
    const db = await PgDatabase.open(url);
    const admin = await PgDatabase.open(url);
    const told: string[] = [];
    db.onAvailability((up) => told.push(up ? 'up' : 'down'));
    try {
      let inTx!: () => void;
      const held = new Promise<void>((r) => (inTx = r));
      let go!: () => void;
      const gate = new Promise<void>((r) => (go = r));
      const tx = db.transaction(async (t) => {
        const pid = await t.value<number>('SELECT pg_backend_pid()');
        inTx();
        await gate;
        await admin.value('SELECT pg_terminate_backend(?)', [pid]);
        await t.value('SELECT 1');
      });
      await held;
      go();
      await expect(tx).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(told[0]).toBe('down');
      // The pool opens nothing more (nothing is asked of it); the probe's own connection answers.
      await waitFor(async () => told.length === 2, 'the return told', 30_000);
      expect(told).toEqual(['down', 'up']);
      expect(await db.value<number>('SELECT 1')).toBe(1);
      expect(told).toEqual(['down', 'up']);
    } finally {
      await db.close();
      await admin.close();
    }
  }, 60_000);
});
