// The payment webhook (spec marketplace-sync "Events"; path and authentication are ours, see
// docs/sync-storage.md): Stripe-Signature verification, replays ignored by event id, stale
// out-of-order events ignored, nothing ever applied twice.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadSyncSecret } from '../../../daemon/services/marketplace/sync/auth.js';
import { localWebhookSecret } from '../../../daemon/services/marketplace/sync/payments.js';
import { signWebhook } from '../../../src/crypto/webhook-signature.js';
import { blobEnv, type BlobEnv } from './blob-helpers.js';

const GIB = 1024 ** 3;
const T0 = Date.parse('2026-03-01T12:00:00.000Z') / 1000;
const MONTH1_END = Date.parse('2026-04-01T12:00:00.000Z') / 1000;
const MONTH2_END = Date.parse('2026-05-01T12:00:00.000Z') / 1000;
const MONTH3_END = Date.parse('2026-06-01T12:00:00.000Z') / 1000;

interface Status {
  active: boolean;
  status: string | null;
  cap_bytes: number | null;
  pending_cap_bytes: number | null;
  price_cents: number | null;
  current_period_end: string | null;
}

describe('sync payment webhook', () => {
  let env: BlobEnv;
  let secret: string;
  beforeEach(async () => {
    env = await blobEnv();
    secret = localWebhookSecret(loadSyncSecret(env.srv.dataDir));
  });
  afterEach(async () => env.srv.close());

  const now = () => Math.floor(env.srv.clock.now() / 1000);
  async function deliver(event: unknown, opts: { signature?: string; raw?: string } = {}) {
    const raw = opts.raw ?? JSON.stringify(event);
    const res = await fetch(`${env.srv.url}/api/v1/sync/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(opts.signature === '' ? {} : { 'stripe-signature': opts.signature ?? signWebhook(secret, raw, now()) }) },
      body: raw,
    });
    return { status: res.status, body: (await res.json()) as { outcome?: string; error?: string } };
  }
  const status = async () => (await env.srv.call<Status>('GET', '/api/v1/sync/subscription', { token: env.token })).body;

  async function checkout(cap: number): Promise<string> {
    const r = await env.srv.call<{ session_id: string }>('POST', '/api/v1/sync/subscription/checkout', { token: env.token, body: { cap_bytes: cap, interval: 'month' } });
    return r.body.session_id;
  }
  const completed = (id: string, session: string, created: number) => ({
    id,
    type: 'checkout.session.completed',
    created,
    data: { object: { id: session, client_reference_id: session, subscription: 'sub_local_test', metadata: { current_period_start: created, current_period_end: MONTH1_END } } },
  });
  const renewal = (id: string, created: number, start: number, end: number) => ({
    id,
    type: 'invoice.paid',
    created,
    data: { object: { billing_reason: 'subscription_cycle', subscription: 'sub_local_test', amount_paid: 500, lines: { data: [{ period: { start, end } }] } } },
  });

  it('applies a validly signed checkout.session.completed', async () => {
    const session = await checkout(10 * GIB);
    const r = await deliver(completed('evt_1', session, T0));
    expect(r).toEqual({ status: 200, body: { received: true, outcome: 'applied' } });
    expect(await status()).toMatchObject({ active: true, cap_bytes: 10 * GIB, current_period_end: '2026-04-01T12:00:00.000Z' });
  });

  it('rejects a missing, malformed, wrong, tampered or outdated signature with 400 and changes nothing', async () => {
    const session = await checkout(10 * GIB);
    const event = completed('evt_1', session, T0);
    const raw = JSON.stringify(event);
    expect((await deliver(event, { signature: '' })).body.error).toMatch(/missing Stripe-Signature/);
    expect((await deliver(event, { signature: 'v1=abc' })).status).toBe(400);
    expect((await deliver(event, { signature: signWebhook('whsec_wrong', raw, now()) })).body.error).toMatch(/signature does not match/);
    // Signed, then altered in transit.
    const tampered = await deliver(event, { signature: signWebhook(secret, raw, now()), raw: raw.replace('sub_local_test', 'sub_local_evil') });
    expect(tampered.status).toBe(400);
    const old = await deliver(event, { signature: signWebhook(secret, raw, now() - 301) });
    expect(old.status).toBe(400);
    expect(old.body.error).toMatch(/outside the tolerance/);
    expect((await status()).active).toBe(false);
    // A rejected delivery does not burn the event id: the genuine one still applies.
    expect((await deliver(event)).body.outcome).toBe('applied');
  });

  it('a replayed event is acknowledged and not applied again', async () => {
    await deliver(completed('evt_1', await checkout(10 * GIB), T0));
    const renew = renewal('evt_2', T0 + 10, MONTH1_END, MONTH2_END);
    await env.srv.call('POST', '/api/v1/sync/subscription/storage-cap', { token: env.token, body: { cap_bytes: 20 * GIB } });
    expect((await deliver(renew)).body.outcome).toBe('applied');
    const after = await status();
    expect(after).toMatchObject({ cap_bytes: 20 * GIB, pending_cap_bytes: null, price_cents: 500, current_period_end: '2026-05-01T12:00:00.000Z' });
    // Queue another cap; replaying the renewal must not promote it or move the period again.
    await env.srv.call('POST', '/api/v1/sync/subscription/storage-cap', { token: env.token, body: { cap_bytes: 30 * GIB } });
    expect(await deliver(renew)).toEqual({ status: 200, body: { received: true, outcome: 'duplicate' } });
    expect(await status()).toMatchObject({ cap_bytes: 20 * GIB, pending_cap_bytes: 30 * GIB, current_period_end: '2026-05-01T12:00:00.000Z' });
  });

  it('stale, out-of-order events are acknowledged and ignored', async () => {
    const session = await checkout(10 * GIB);
    await deliver(completed('evt_1', session, T0));
    // Renewals arrive out of order: the later period first.
    expect((await deliver(renewal('evt_3', T0 + 30, MONTH2_END, MONTH3_END))).body.outcome).toBe('applied');
    expect((await deliver(renewal('evt_2', T0 + 20, MONTH1_END, MONTH2_END))).body.outcome).toBe('stale');
    expect((await status()).current_period_end).toBe('2026-06-01T12:00:00.000Z');
    // The same checkout completed under another event id is not a second purchase.
    expect((await deliver(completed('evt_1b', session, T0))).body.outcome).toBe('stale');
    // A cancellation older than the newest applied event is stale; a newer one applies.
    const cancel = (id: string, created: number) => ({ id, type: 'customer.subscription.deleted', created, data: { object: { id: 'sub_local_test' } } });
    expect((await deliver(cancel('evt_4', T0 + 5))).body.outcome).toBe('stale');
    expect((await status()).active).toBe(true);
    expect((await deliver(cancel('evt_5', T0 + 40))).body.outcome).toBe('applied');
    expect(await status()).toMatchObject({ active: false, status: 'canceled' });
    // Events this area does not act on are acknowledged.
    expect((await deliver({ id: 'evt_6', type: 'customer.created', created: T0, data: { object: {} } })).body.outcome).toBe('ignored');
  });
});
