// The monitor's fixed window (spec service A Limits), on both engines: one counter for all callers,
// a new window only after more than the window has passed, concurrent takes (from one or two
// instances) never past the limit, and the window kept in the database so that a restart does not
// hand out a fresh allowance.
import { afterEach, expect, it } from 'vitest';
import { FixedWindowLimiter } from '../../../daemon/plugins/rate-limit.js';
import { SqlLimiterWindows } from '../../../src/store/limiter-windows-sql.js';
import type { SqlDatabase } from '../../../src/store/sql.js';
import { describeEngines } from '../../helpers/engines.js';
import { reopenableDatabase, type ReopenableDatabase } from '../../helpers/reopen.js';

const dbs: ReopenableDatabase[] = [];
afterEach(async () => {
  for (const d of dbs.splice(0)) await d.dispose();
});

async function limiter(db: SqlDatabase, now: () => number, limit = 60): Promise<FixedWindowLimiter> {
  return new FixedWindowLimiter({ limit, windowMs: 60_000, now, windows: await SqlLimiterWindows.open(db), scope: 'rate' });
}

describeEngines('fixed window rate limit (one counter for all callers)', (open, engine) => {
  it('allows 60 in a window, refuses the 61st, and opens a new window only after more than 60 s', async () => {
    let now = 1_000_000;
    const l = await limiter(await open(), () => now);
    for (let i = 0; i < 60; i++) expect((await l.take()).allowed).toBe(true);
    expect((await l.take()).allowed).toBe(false);
    now += 60_000; // exactly 60 s after the window start: still the same window
    expect(await l.take()).toMatchObject({ allowed: false, retryAfterS: 1 });
    now += 1; // more than 60 s: a new window, counting this request as the first
    expect(await l.take()).toMatchObject({ allowed: true, remaining: 59 });
    for (let i = 0; i < 59; i++) expect((await l.take()).allowed).toBe(true);
    expect((await l.take()).allowed).toBe(false);
  });

  it('30 concurrent takes against a limit of 10 let exactly 10 through', async () => {
    const l = await limiter(await open(), () => 5_000_000, 10);
    const decisions = await Promise.all(Array.from({ length: 30 }, () => l.take()));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
  });

  it('30 concurrent takes spread over two instances on one database let exactly 10 through', async () => {
    const d = await reopenableDatabase(engine);
    dbs.push(d);
    const first = await d.connect();
    const a = await limiter(first, () => 5_000_000, 10);
    const b = await limiter(await d.instance(first), () => 5_000_000, 10);
    const decisions = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).take()));
    expect(decisions.filter((x) => x.allowed)).toHaveLength(10);
  });

  it('the window survives a restart (a new connection to the same database)', async () => {
    const d = await reopenableDatabase(engine);
    dbs.push(d);
    const first = await d.connect();
    const l1 = await limiter(first, () => 9_000_000, 3);
    for (let i = 0; i < 3; i++) expect((await l1.take()).allowed).toBe(true);
    await first.close();
    expect(await (await limiter(await d.connect(), () => 9_030_000, 3)).take()).toMatchObject({ allowed: false, retryAfterS: 31 });
  });
});
