// The monitor's fixed window (spec service A Limits): one counter for all callers, a new window only
// after more than the window has passed, concurrent takes never past the limit, and the window
// kept in the database so that a restart does not hand out a fresh allowance.
import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { FixedWindowLimiter } from '../../../daemon/plugins/rate-limit.js';
import { SqliteLimiterWindows } from '../../../src/store/limiter-windows.js';
import { openDatabase, type Db } from '../../../src/store/sqlite.js';
import { tempDir } from '../../helpers/tmp.js';

const dir = tempDir('mkt-rate-');
afterAll(() => dir.remove());

function limiter(db: Db, now: () => number, limit = 60): FixedWindowLimiter {
  return new FixedWindowLimiter({ limit, windowMs: 60_000, now, windows: new SqliteLimiterWindows(db), scope: 'rate' });
}

describe('fixed window rate limit (one counter for all callers)', () => {
  it('allows 60 in a window, refuses the 61st, and opens a new window only after more than 60 s', async () => {
    const db = openDatabase(join(dir.path, 'a.db'));
    let now = 1_000_000;
    const l = limiter(db, () => now);
    for (let i = 0; i < 60; i++) expect((await l.take()).allowed).toBe(true);
    expect((await l.take()).allowed).toBe(false);
    now += 60_000; // exactly 60 s after the window start: still the same window
    expect(await l.take()).toMatchObject({ allowed: false, retryAfterS: 1 });
    now += 1; // more than 60 s: a new window, counting this request as the first
    expect(await l.take()).toMatchObject({ allowed: true, remaining: 59 });
    for (let i = 0; i < 59; i++) expect((await l.take()).allowed).toBe(true);
    expect((await l.take()).allowed).toBe(false);
    db.close();
  });

  it('30 concurrent takes against a limit of 10 let exactly 10 through', async () => {
    const db = openDatabase(join(dir.path, 'b.db'));
    const l = limiter(db, () => 5_000_000, 10);
    const decisions = await Promise.all(Array.from({ length: 30 }, () => l.take()));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
    db.close();
  });

  it('the window survives a restart (a new connection to the same file)', async () => {
    const file = join(dir.path, 'c.db');
    const first = openDatabase(file);
    const l1 = limiter(first, () => 9_000_000, 3);
    for (let i = 0; i < 3; i++) expect((await l1.take()).allowed).toBe(true);
    first.close();
    const second = openDatabase(file);
    expect(await limiter(second, () => 9_030_000, 3).take()).toMatchObject({ allowed: false, retryAfterS: 31 });
    second.close();
  });
});
