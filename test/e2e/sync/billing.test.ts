// Spec marketplace-sync, "Storage subscription" states, endpoint rules 4-5 and the pricing limits:
// status without a subscription, quotes from the app constants only, checkout through the local
// provider's page (which delivers a signed checkout.session.completed to the webhook), the cap
// applied at blob confirm, a queued cap promoted by `mkt admin billing renew`.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import { BillingAdmin } from '../../../daemon/services/marketplace/sync/billing-admin.js';
import { openMarketplaceStores } from '../../../src/store/marketplace.js';
import { quoteCents } from '../../../src/sync/pricing.js';
import { blobEnv, put, randomHash, type BlobEnv } from './blob-helpers.js';

const GIB = 1024 ** 3;
const PRICING = { min_charge_cents: 100, per_gb_tenths_of_cent_per_month: 25, annual_multiplier: 10, min_cap_bytes: 1000, max_cap_bytes: 1024 * GIB, free_bytes: 1000 };

interface Status {
  active: boolean;
  status: string | null;
  cap_bytes: number | null;
  pending_cap_bytes: number | null;
  interval: string | null;
  price_cents: number | null;
  current_period_start: string | null;
  current_period_end: string | null;
  error?: string;
}

describe('sync subscriptions (local payment provider)', () => {
  let env: BlobEnv;
  beforeEach(async () => {
    env = await blobEnv({ pricing: PRICING });
  });
  afterEach(async () => env.srv.close());

  const call = <T = Status,>(method: string, path: string, body?: unknown) => env.srv.call<T & { error?: string }>(method, `/api/v1/sync/subscription${path}`, { token: env.token, body });

  async function buy(cap: number, interval: 'month' | 'year'): Promise<Status> {
    const co = await call<{ checkout_url: string; session_id: string; price_cents: number }>('POST', '/checkout', { cap_bytes: cap, interval });
    expect(co.status).toBe(200);
    expect(co.body.price_cents).toBe(quoteCents(PRICING, cap, interval));
    const pageRes = await fetch(co.body.checkout_url);
    expect(pageRes.status).toBe(200);
    const html = await pageRes.text();
    expect(html).toContain('Confirm purchase');
    expect(html).toContain(`${(co.body.price_cents / 100).toFixed(2)} USD per ${interval}`);
    const confirm = await fetch(`${co.body.checkout_url}/confirm`, { method: 'POST' });
    expect(confirm.status).toBe(200);
    expect(await confirm.text()).toContain('Purchase confirmed');
    return (await call('GET', '')).body;
  }

  it('a user without a subscription gets 200 with active false and null fields', async () => {
    const r = await call('GET', '');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ active: false, status: null, cap_bytes: null, pending_cap_bytes: null, interval: null, price_cents: null, current_period_start: null, current_period_end: null });
  });

  it('quotes with the shared formula: monthly floor, per-GiB rate rounded up, annual multiplier; cap bounds checked; bearer only', async () => {
    const q = async (cap_bytes: number, interval: string) => call<{ price_cents: number; monthly_cents: number; currency: string }>('POST', '/quote', { cap_bytes, interval });
    // 50 GiB × 2.5¢ = 125¢ a month, 1250¢ a year.
    expect((await q(50 * GIB, 'month')).body).toEqual({ cap_bytes: 50 * GIB, interval: 'month', price_cents: 125, monthly_cents: 125, currency: 'usd' });
    expect((await q(50 * GIB, 'year')).body.price_cents).toBe(1250);
    // 1 GiB × 2.5¢ rounds up to 3¢, below the 100¢ floor.
    expect((await q(GIB, 'month')).body.price_cents).toBe(100);
    expect((await q(GIB, 'year')).body.price_cents).toBe(1000);
    // 41 GiB + 1 byte: 102.5¢ and a little, rounded up.
    expect((await q(41 * GIB + 1, 'month')).body.price_cents).toBe(103);
    const low = await q(999, 'month');
    expect(low.status).toBe(400);
    expect(low.body.error).toMatch(/cap_bytes must be between 1000 \(1000 B\) and 1099511627776 \(1 TiB\)/);
    expect((await q(1024 * GIB + 1, 'year')).status).toBe(400);
    expect((await env.srv.call('POST', '/api/v1/sync/subscription/quote', { body: { cap_bytes: GIB, interval: 'month' } })).status).toBe(401);
  });

  it('checkout → confirmation page → signed webhook → active subscription; the cap then governs blob confirm', async () => {
    // Over the 1000-byte free allowance before subscribing.
    const big = randomBytes(5000);
    const hash = randomHash();
    expect((await env.srv.call('POST', '/api/v1/sync/blobs/upload', { token: env.token, body: { hash, size_bytes: big.length } })).status).toBe(413);

    const sub = await buy(50 * GIB, 'month');
    expect(sub).toMatchObject({ active: true, status: 'active', cap_bytes: 50 * GIB, pending_cap_bytes: null, interval: 'month', price_cents: 125 });
    expect(sub.current_period_start).toBe('2026-03-01T12:00:00.000Z');
    expect(sub.current_period_end).toBe('2026-04-01T12:00:00.000Z');

    const u = await env.srv.call<{ upload_url: string }>('POST', '/api/v1/sync/blobs/upload', { token: env.token, body: { hash, size_bytes: big.length } });
    expect(u.status).toBe(200);
    expect((await put(u.body.upload_url, big)).status).toBe(200);
    expect((await env.srv.call('POST', '/api/v1/sync/blobs/confirm', { token: env.token, body: { hash } })).status).toBe(204);

    // One subscription at a time; the other user is unaffected.
    expect((await call('POST', '/checkout', { cap_bytes: 2 * GIB, interval: 'year' })).status).toBe(409);
    expect((await env.srv.call<Status>('GET', '/api/v1/sync/subscription', { token: env.otherToken })).body.active).toBe(false);
  });

  it('the confirmation is delivered to this server even when the client names another Host', async () => {
    const co = await call<{ checkout_url: string }>('POST', '/checkout', { cap_bytes: 2 * GIB, interval: 'month' });
    const res = await request(`${co.body.checkout_url}/confirm`, { method: 'POST', headers: { host: 'attacker.example:9' } });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    expect((await call('GET', '')).body.active).toBe(true);
  });

  it('a checkout page confirms once; unknown and expired checkouts say so', async () => {
    const co = await call<{ checkout_url: string }>('POST', '/checkout', { cap_bytes: 2 * GIB, interval: 'year' });
    expect((await fetch(`${co.body.checkout_url}/confirm`, { method: 'POST' })).status).toBe(200);
    const before = (await call('GET', '')).body;
    const again = await fetch(`${co.body.checkout_url}/confirm`, { method: 'POST' });
    expect(await again.text()).toContain('already complete');
    expect((await call('GET', '')).body).toEqual(before);
    expect(before).toMatchObject({ interval: 'year', price_cents: 1000, current_period_end: '2027-03-01T12:00:00.000Z' });

    expect((await fetch(`${env.srv.url}/api/v1/sync/checkout/cs_${'0'.repeat(32)}`)).status).toBe(404);
    const other = await env.srv.call<{ checkout_url: string }>('POST', '/api/v1/sync/subscription/checkout', { token: env.otherToken, body: { cap_bytes: 2 * GIB, interval: 'month' } });
    env.srv.clock.advance(25 * 3600 * 1000);
    const late = await fetch(`${other.body.checkout_url}/confirm`, { method: 'POST' });
    expect(late.status).toBe(404);
    expect(await late.text()).toContain('expired');
  });

  it('a queued cap stays pending until the renewal promotes it at the new price (mkt admin billing renew)', async () => {
    expect((await call('POST', '/storage-cap', { cap_bytes: 100 * GIB })).status).toBe(409);
    await buy(50 * GIB, 'month');
    expect((await call('POST', '/storage-cap', { cap_bytes: 2048 * GIB })).status).toBe(400);
    const queued = await call('POST', '/storage-cap', { cap_bytes: 100 * GIB });
    expect(queued.status).toBe(200);
    expect(queued.body).toMatchObject({ active: true, cap_bytes: 50 * GIB, pending_cap_bytes: 100 * GIB, price_cents: 125 });

    // The admin's own stores beside the running server, as `mkt admin billing renew` opens them.
    const stores = await openMarketplaceStores({ dataDir: env.srv.dataDir, databaseUrl: env.srv.databaseUrl });
    const admin = new BillingAdmin(stores, () => env.srv.clock.now());
    try {
      // The period has not ended: nothing happens without --early.
      expect((await admin.renew())[0]).toMatchObject({ outcome: 'not_due', cap_bytes: 50 * GIB });
      env.srv.clock.set('2026-04-01T12:00:01.000Z');
      const [r] = await admin.renew({ app: 'Notes App', user: 'ada@example.com' });
      expect(r).toMatchObject({ app: 'Notes App', user: 'ada@example.com', outcome: 'applied', cap_bytes: 100 * GIB, price_cents: 250, current_period_end: '2026-05-01T12:00:00.000Z' });
      await expect(admin.renew({ user: 'nobody@example.com' })).rejects.toThrow(/no user/);
    } finally {
      await stores.close();
    }
    // A month on, the old token has expired.
    env.token = await env.srv.signIn(env.apiKey, 'ada@example.com', 'correct horse battery');
    const now = (await call('GET', '')).body;
    expect(now).toMatchObject({ cap_bytes: 100 * GIB, pending_cap_bytes: null, price_cents: 250, current_period_start: '2026-04-01T12:00:00.000Z' });
  });

  it('a cap below the storage in use is refused; asking for the current cap clears a pending change', async () => {
    await buy(GIB, 'month');
    const hash = randomHash();
    const u = await env.srv.call<{ upload_url: string }>('POST', '/api/v1/sync/blobs/upload', { token: env.token, body: { hash, size_bytes: 2000 } });
    await put(u.body.upload_url, randomBytes(2000));
    expect((await env.srv.call('POST', '/api/v1/sync/blobs/confirm', { token: env.token, body: { hash } })).status).toBe(204);
    const below = await call('POST', '/storage-cap', { cap_bytes: 1500 });
    expect(below.status).toBe(409);
    expect(below.body.error).toMatch(/below the 2000 bytes in use/);
    expect((await call('POST', '/storage-cap', { cap_bytes: 3 * GIB })).body.pending_cap_bytes).toBe(3 * GIB);
    expect((await call('POST', '/storage-cap', { cap_bytes: GIB })).body.pending_cap_bytes).toBeNull();
  });
});
