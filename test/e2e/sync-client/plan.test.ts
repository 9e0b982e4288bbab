// Issue 7 "Subscription": `plan quote` computed locally from the app's pricing constants and
// checked against the server's quote; `plan status` with no subscription (active false);
// `plan buy` prints the checkout URL, confirmed on the local provider's page; `plan cap` queues a
// new cap for the next cycle (and is refused without a subscription).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSyncWorld, type Device, type SyncWorld } from './harness.js';

const GIB = 1024 ** 3;
let w: SyncWorld;
let a: Device;

beforeAll(async () => {
  w = await startSyncWorld();
  a = w.device('a');
  expect((await a.mkt(['login', '--app-key', w.appKey, '--email', w.email], `${w.password}\n`)).code).toBe(0);
});
afterAll(async () => w?.close());

describe('mkt sync plan', () => {
  it('quote: the local price agrees with the server, monthly and annual; out-of-range caps are usage errors', async () => {
    const month = await a.mkt(['plan', 'quote', '--cap', '50GiB', '--json']);
    expect(month.code, month.err).toBe(0);
    const m = JSON.parse(month.out) as { price_cents: number; server_price_cents: number; agrees: boolean; pricing: { per_gb_tenths_of_cent_per_month: number; min_charge_cents: number } };
    expect(m.agrees).toBe(true);
    expect(m.price_cents).toBe(Math.max(m.pricing.min_charge_cents, Math.ceil((50 * m.pricing.per_gb_tenths_of_cent_per_month) / 10)));
    const year = await a.mkt(['plan', 'quote', '--cap', '50GiB', '--annual', '--json']);
    expect(JSON.parse(year.out)).toMatchObject({ interval: 'year', agrees: true });
    const table = await a.mkt(['plan', 'quote', '--cap', '200GiB']);
    expect(table.out).toMatch(/server quote\tagrees/);
    expect(table.err).toBe('');
    expect((await a.mkt(['plan', 'quote', '--cap', '10PiB'])).code).toBe(2);
    const small = await a.mkt(['plan', 'quote', '--cap', '1MB']);
    expect(small.code).toBe(2);
    expect(small.err).toMatch(/between 1 GiB and 1 TiB/);
  });

  it('status without a subscription: active false; cap is refused (exit 1)', async () => {
    const st = await a.mkt(['plan', 'status', '--json']);
    expect(st.code, st.err).toBe(0);
    expect(JSON.parse(st.out)).toMatchObject({ active: false, cap_bytes: null });
    const cap = await a.mkt(['plan', 'cap', '--cap', '20GiB']);
    expect(cap.code).toBe(1);
    expect(cap.err).toMatch(/no active subscription/);
  });

  it('buy prints the checkout URL; once confirmed the plan is active; cap queues the change for the next cycle', async () => {
    const buy = await a.mkt(['plan', 'buy', '--cap', '10GiB']);
    expect(buy.code, buy.err).toBe(0);
    const url = buy.out.trim();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    const page = await fetch(url);
    expect(page.status).toBe(200);
    const action = /<form method="post" action="([^"]+)"/.exec(await page.text())?.[1];
    expect(action).toBeDefined();
    expect((await fetch(new URL(action!, url), { method: 'POST' })).status).toBeLessThan(400);
    const st = JSON.parse((await a.mkt(['plan', 'status', '--json'])).out) as { active: boolean; cap_bytes: number };
    expect(st).toMatchObject({ active: true, cap_bytes: 10 * GIB });
    const cap = await a.mkt(['plan', 'cap', '--cap', '20GiB', '--json']);
    expect(cap.code, cap.err).toBe(0);
    expect(JSON.parse(cap.out)).toMatchObject({ active: true, cap_bytes: 10 * GIB, pending_cap_bytes: 20 * GIB });
    // A second purchase is refused while one is active.
    expect((await a.mkt(['plan', 'buy', '--cap', '10GiB'])).code).toBe(1);
  });
});
