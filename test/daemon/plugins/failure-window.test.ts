// The failure-window guard and its store (ARCHITECTURE "Limiters reserve before they spend"): 30
// concurrent attempts never get past the limit, successes give their slot back, the window ends on
// time, and windows live in the database file, so a restart (a new connection) keeps them.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { FailureWindow } from '../../../daemon/plugins/failure-window.js';
import { HttpError } from '../../../daemon/plugins/errors.js';
import { SqliteLimiterWindows } from '../../../src/store/limiter-windows.js';
import { openDatabase, type Db } from '../../../src/store/sqlite.js';
import { ManualClock } from '../../../src/util/clock.js';
import { tempDir } from '../../helpers/tmp.js';

const dir = tempDir('mkt-windows-');
const open: Db[] = [];
function database(): Db {
  const db = openDatabase(join(dir.path, 'limits.db'));
  open.push(db);
  return db;
}
afterEach(() => {
  for (const db of open.splice(0)) db.close();
});
afterAll(() => dir.remove());

function guard(db: Db, clock: ManualClock, failures = 10): FailureWindow {
  return new FailureWindow(new SqliteLimiterWindows(db), clock, { scope: `t-${failures}`, limit: { failures, windowSeconds: 900 }, refusal: (s) => `slow down; retry after ${s} s` });
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

describe('FailureWindow.answer (lookups whose answer is the secret)', () => {
  it('30 concurrent guesses: exactly the limit get their answer, the rest 429; then even a real key waits', async () => {
    const clock = new ManualClock(Date.parse('2026-03-01T12:00:00Z'));
    const g = guard(database(), clock, 7);
    const outcomes = await Promise.all(Array.from({ length: 30 }, () => lookup(g, '10.0.0.9', false)));
    expect(outcomes.filter((o) => o === 'answered')).toHaveLength(7);
    expect(outcomes.filter((o) => o === 429)).toHaveLength(23);
    expect(await lookup(g, '10.0.0.9', true)).toBe(429);
    expect(await lookup(g, '10.0.0.10', false)).toBe('answered');
  });

  it('real keys take no slot: any number of them leave the window empty', async () => {
    const clock = new ManualClock(Date.parse('2026-03-01T12:00:00Z'));
    const db = database();
    const g = guard(db, clock, 3);
    const outcomes = await Promise.all(Array.from({ length: 30 }, () => lookup(g, '10.0.0.11', true)));
    expect(outcomes.every((o) => o === 'answered')).toBe(true);
    expect(await new SqliteLimiterWindows(db).taken('t-3', '10.0.0.11', 0)).toBe(0);
  });
});

describe('FailureWindow', () => {
  it('30 concurrent failing attempts: exactly the limit get through, the rest 429 with Retry-After', async () => {
    const clock = new ManualClock(Date.parse('2026-03-01T12:00:00Z'));
    const g = guard(database(), clock);
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
    const g = guard(database(), clock, 3);
    for (let i = 0; i < 10; i++) await (await g.reserve('a')).release();
    for (let i = 0; i < 3; i++) await g.reserve('a');
    await expect(g.reserve('a')).rejects.toMatchObject({ statusCode: 429 });
    clock.advance(899_000);
    await expect(g.reserve('a')).rejects.toMatchObject({ statusCode: 429, headers: { 'retry-after': '1' } });
    clock.advance(1_000);
    await expect(g.reserve('a')).resolves.toBeDefined();
  });

  it('windows survive a restart: a new connection to the same file sees them', async () => {
    const clock = new ManualClock(Date.parse('2026-03-01T12:00:00Z'));
    const before = database();
    const g1 = guard(before, clock, 4);
    for (let i = 0; i < 4; i++) await g1.reserve('c');
    before.close();
    const g2 = guard(database(), clock, 4);
    await expect(g2.reserve('c')).rejects.toMatchObject({ statusCode: 429 });
  });

  it('two instances sharing one database share one window', async () => {
    const clock = new ManualClock(Date.parse('2026-03-01T12:00:00Z'));
    const a = guard(database(), clock, 5);
    const b = guard(database(), clock, 5);
    const outcomes = await Promise.all(Array.from({ length: 30 }, (_, i) => failingAttempt(i % 2 ? a : b, 'shared')));
    expect(outcomes.filter((o) => o === 'failed')).toHaveLength(5);
  });
});
