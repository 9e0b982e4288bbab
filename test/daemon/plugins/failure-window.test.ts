// The failure-window guard and its store (ARCHITECTURE "Limiters reserve before they spend"), on
// both engines: 30 concurrent attempts never get past the limit, successes give their slot back,
// the window ends on time, windows live in the database, so a restart (a new connection) keeps
// them, and two instances on one database share one window.
import { afterEach, expect, it } from 'vitest';
import { FailureWindow } from '../../../daemon/plugins/failure-window.js';
import { HttpError } from '../../../daemon/plugins/errors.js';
import { takenNow } from '../../../daemon/plugins/limiter-window.js';
import { SqlLimiterWindows } from '../../../src/store/limiter-windows-sql.js';
import type { SqlDatabase } from '../../../src/store/sql.js';
import { ManualClock } from '../../../src/util/clock.js';
import { describeEngines } from '../../helpers/engines.js';
import { reopenableDatabase, type ReopenableDatabase } from '../../helpers/reopen.js';

const dbs: ReopenableDatabase[] = [];
afterEach(async () => {
  for (const d of dbs.splice(0)) await d.dispose();
});

async function guard(db: SqlDatabase, clock: ManualClock, failures = 10): Promise<FailureWindow> {
  return new FailureWindow(await SqlLimiterWindows.open(db), clock, { scope: `t-${failures}`, limit: { failures, windowSeconds: 900 }, refusal: (s) => `slow down; retry after ${s} s` });
}

/** Each attempt does "expensive work" (a macrotask) before failing, like a password hash. */
async function failingAttempt(g: FailureWindow, client: string): Promise<'failed' | number> {
  try {
    await g.reserve(client);
  } catch (err) {
    return (err as HttpError).statusCode;
  }
  await new Promise((r) => setTimeout(r, 5));
  return 'failed';
}

/** A cheap lookup answered after a macrotask: a guess fails, a real key does not. */
async function lookup(g: FailureWindow, client: string, real: boolean): Promise<'answered' | number> {
  try {
    await g.answer(client, () => new Promise<{ ok: boolean }>((r) => setTimeout(() => r({ ok: real }), 5)), (res) => !res.ok);
    return 'answered';
  } catch (err) {
    return (err as HttpError).statusCode;
  }
}

describeEngines('FailureWindow.answer (lookups whose answer is the secret)', (open) => {
  it('30 concurrent guesses: exactly the limit get their answer, the rest 429; then even a real key waits', async () => {
    const clock = new ManualClock(Date.parse('2026-03-01T12:00:00Z'));
    const g = await guard(await open(), clock, 7);
    const outcomes = await Promise.all(Array.from({ length: 30 }, () => lookup(g, '10.0.0.9', false)));
    expect(outcomes.filter((o) => o === 'answered')).toHaveLength(7);
    expect(outcomes.filter((o) => o === 429)).toHaveLength(23);
    expect(await lookup(g, '10.0.0.9', true)).toBe(429);
    expect(await lookup(g, '10.0.0.10', false)).toBe('answered');
  });

  it('real keys take no slot: any number of them leave the window empty', async () => {
    const clock = new ManualClock(Date.parse('2026-03-01T12:00:00Z'));
    const db = await open();
    const g = await guard(db, clock, 3);
    const outcomes = await Promise.all(Array.from({ length: 30 }, () => lookup(g, '10.0.0.11', true)));
    expect(outcomes.every((o) => o === 'answered')).toBe(true);
    expect(await takenNow(await SqlLimiterWindows.open(db), 't-3', '10.0.0.11', 0)).toBe(0);
  });
});

describeEngines('FailureWindow', (open, engine) => {
  it('30 concurrent failing attempts: exactly the limit get through, the rest 429 with Retry-After', async () => {
    const clock = new ManualClock(Date.parse('2026-03-01T12:00:00Z'));
    const g = await guard(await open(), clock);
    const outcomes = await Promise.all(Array.from({ length: 30 }, () => failingAttempt(g, '10.0.0.1')));
    expect(outcomes.filter((o) => o === 'failed')).toHaveLength(10);
    expect(outcomes.filter((o) => o === 429)).toHaveLength(20);
    const err = await g.reserve('10.0.0.1').catch((e: unknown) => e as HttpError);
    expect(err).toBeInstanceOf(HttpError);
    expect((err as HttpError).headers).toEqual({ 'retry-after': '900' });
    expect((err as HttpError).message).toBe('slow down; retry after 900 s');
    // Another address has its own window.
    await expect(g.reserve('10.0.0.2')).resolves.toBeDefined();
  });

  it('a released attempt (a success) does not count; the window ends on time', async () => {
    const clock = new ManualClock(Date.parse('2026-03-01T12:00:00Z'));
    const g = await guard(await open(), clock, 3);
    for (let i = 0; i < 10; i++) await (await g.reserve('a')).release();
    for (let i = 0; i < 3; i++) await g.reserve('a');
    await expect(g.reserve('a')).rejects.toMatchObject({ statusCode: 429 });
    clock.advance(899_000);
    await expect(g.reserve('a')).rejects.toMatchObject({ statusCode: 429, headers: { 'retry-after': '1' } });
    clock.advance(1_000);
    await expect(g.reserve('a')).resolves.toBeDefined();
  });

  it('windows survive a restart: a new connection to the same database sees them', async () => {
    const d = await reopenableDatabase(engine);
    dbs.push(d);
    const clock = new ManualClock(Date.parse('2026-03-01T12:00:00Z'));
    const before = await d.connect();
    const g1 = await guard(before, clock, 4);
    for (let i = 0; i < 4; i++) await g1.reserve('c');
    await before.close();
    const g2 = await guard(await d.connect(), clock, 4);
    await expect(g2.reserve('c')).rejects.toMatchObject({ statusCode: 429 });
  });

  it('two instances sharing one database share one window', async () => {
    const d = await reopenableDatabase(engine);
    dbs.push(d);
    const clock = new ManualClock(Date.parse('2026-03-01T12:00:00Z'));
    const first = await d.connect();
    const a = await guard(first, clock, 5);
    const b = await guard(await d.instance(first), clock, 5);
    const outcomes = await Promise.all(Array.from({ length: 30 }, (_, i) => failingAttempt(i % 2 ? a : b, 'shared')));
    expect(outcomes.filter((o) => o === 'failed')).toHaveLength(5);
  });
});
