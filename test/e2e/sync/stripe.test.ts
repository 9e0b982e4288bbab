// The `stripe` payment provider with the real Stripe SDK against a stand-in API server: the
// Checkout Session priced from the app constants, the subscription period read from Stripe on
// checkout.session.completed, a cap change re-priced with proration_behavior none, and the
// renewal (invoice.paid, billing_reason subscription_cycle) promoting the pending cap.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { signWebhook } from '../../../src/crypto/webhook-signature.js';
import { startStripeStandIn, type StandInStripe } from '../../helpers/stripe-standin.js';
import { blobEnv, type BlobEnv } from './blob-helpers.js';

const GIB = 1024 ** 3;
const WHSEC = 'whsec_standin_0123456789abcdef';
const SK = 'sk_test_standin_0123456789';

describe('sync subscriptions through the stripe provider', () => {
  let stripe: StandInStripe;
  let env: BlobEnv;
  beforeEach(async () => {
    stripe = await startStripeStandIn();
    env = await blobEnv({
      flags: { syncPayments: 'stripe', syncStripe: { secretKey: SK, webhookSecret: WHSEC, host: stripe.host, port: stripe.port, protocol: 'http' } },
      pricing: { min_charge_cents: 100, per_gb_tenths_of_cent_per_month: 25, annual_multiplier: 10, min_cap_bytes: GIB, max_cap_bytes: 1024 * GIB },
    });
  });
  afterEach(async () => {
    await env.srv.close();
    await stripe.close();
  });

  const now = () => Math.floor(env.srv.clock.now() / 1000);
  async function deliver(event: unknown) {
    const raw = JSON.stringify(event);
    const res = await fetch(`${env.srv.url}/api/v1/sync/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': signWebhook(WHSEC, raw, now()) }, body: raw });
    return { status: res.status, body: (await res.json()) as { outcome?: string; error?: string } };
  }
  const status = async () => (await env.srv.call<Record<string, unknown>>('GET', '/api/v1/sync/subscription', { token: env.token })).body;

  it('checkout, completion, cap change and renewal', async () => {
    const co = await env.srv.call<{ checkout_url: string; session_id: string; price_cents: number }>('POST', '/api/v1/sync/subscription/checkout', { token: env.token, body: { cap_bytes: 50 * GIB, interval: 'month' } });
    expect(co.status).toBe(200);
    expect(co.body.checkout_url).toBe(`https://checkout.stripe.test/c/pay/${co.body.session_id}`);
    const sent = stripe.sessions.get(co.body.session_id)!;
    expect(sent).toMatchObject({
      mode: 'subscription',
      customer_email: 'ada@example.com',
      'line_items[0][price_data][unit_amount]': '125',
      'line_items[0][price_data][currency]': 'usd',
      'line_items[0][price_data][recurring][interval]': 'month',
    });
    expect(sent.success_url).toBe(`${env.srv.url}/api/v1/sync/checkout/return?outcome=success`);
    expect(stripe.requests[0]!.auth).toBe(`Bearer ${SK}`);
    const ours = sent.client_reference_id!;
    expect(ours).toMatch(/^cs_[0-9a-f]{32}$/);

    // The buyer pays; Stripe sends checkout.session.completed (built here) without the period.
    const periodStart = now() - 5;
    const sub = stripe.pay(co.body.session_id, periodStart);
    const done = { id: 'evt_1', type: 'checkout.session.completed', created: now(), data: { object: { id: co.body.session_id, object: 'checkout.session', client_reference_id: ours, subscription: sub.id, payment_status: 'paid' } } };
    expect((await deliver(done)).body.outcome).toBe('applied');
    expect(await status()).toMatchObject({ active: true, cap_bytes: 50 * GIB, price_cents: 125, current_period_start: new Date(periodStart * 1000).toISOString(), current_period_end: new Date(sub.current_period_end * 1000).toISOString() });
    expect(stripe.requests.some((r) => r.method === 'GET' && r.path === `/v1/subscriptions/${sub.id}`)).toBe(true);

    // A cap change re-prices the item for the next period, without proration; the cap stays.
    const cap = await env.srv.call<Record<string, unknown>>('POST', '/api/v1/sync/subscription/storage-cap', { token: env.token, body: { cap_bytes: 100 * GIB } });
    expect(cap.body).toMatchObject({ cap_bytes: 50 * GIB, pending_cap_bytes: 100 * GIB });
    const update = stripe.requests.find((r) => r.method === 'POST' && r.path === `/v1/subscriptions/${sub.id}`)!;
    expect(update.form).toMatchObject({ proration_behavior: 'none', 'items[0][id]': sub.item_id, 'items[0][price_data][unit_amount]': '250', 'items[0][price_data][product]': sub.product });

    // The period rolls: invoice.paid for the cycle promotes the pending cap at the invoiced amount.
    const renewal = {
      id: 'evt_2',
      type: 'invoice.paid',
      created: now() + 10,
      data: { object: { object: 'invoice', billing_reason: 'subscription_cycle', amount_paid: 250, parent: { subscription_details: { subscription: sub.id } }, lines: { data: [{ period: { start: sub.current_period_end, end: sub.current_period_end + 30 * 86400 } }] } } },
    };
    expect((await deliver(renewal)).body.outcome).toBe('applied');
    expect(await status()).toMatchObject({ cap_bytes: 100 * GIB, pending_cap_bytes: null, price_cents: 250 });
    // An invoice that is not a cycle renewal (for example the first one) changes nothing.
    expect((await deliver({ ...renewal, id: 'evt_3', data: { object: { ...renewal.data.object, billing_reason: 'subscription_create' } } })).body.outcome).toBe('ignored');
  });

  it('an unpaid completion (asynchronous payment) buys nothing; the return page answers', async () => {
    const co = await env.srv.call<{ session_id: string }>('POST', '/api/v1/sync/subscription/checkout', { token: env.token, body: { cap_bytes: 2 * GIB, interval: 'year' } });
    const ours = stripe.sessions.get(co.body.session_id)!.client_reference_id!;
    const ev = { id: 'evt_u', type: 'checkout.session.completed', created: now(), data: { object: { id: co.body.session_id, client_reference_id: ours, subscription: 'sub_x', payment_status: 'unpaid' } } };
    expect((await deliver(ev)).body.outcome).toBe('ignored');
    expect((await status()).active).toBe(false);
    const page = await fetch(`${env.srv.url}/api/v1/sync/checkout/return?outcome=cancel`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Checkout cancelled');
  });
});
