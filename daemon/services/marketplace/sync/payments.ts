// The payment-provider interface of sync subscriptions, the reduction of Stripe-shaped webhook
// events to billing events, and the `local` provider (checkout on a page of this marketplace,
// events signed with a secret derived from the sync secret, delivered to our own webhook).
import { randomBytes } from 'node:crypto';
import { addInterval, type BillingEvent, type BillingInterval, type CheckoutRecord, type SubscriptionRecord } from '../../../../src/store/sync-billing.js';
import { signWebhook, verifyWebhook } from '../../../../src/crypto/webhook-signature.js';
import { deriveSyncKey } from './auth.js';

export const WEBHOOK_PATH = '/api/v1/sync/webhook';
export const CHECKOUT_PAGE_PATH = '/api/v1/sync/checkout';
/** What every price is in: quotes answer it, and the Stripe provider charges in it. */
export const CURRENCY = 'usd';

export interface PaymentProvider {
  readonly kind: string;
  /** A hosted checkout for the (already priced) checkout record; returns the URL to send the buyer to. */
  createCheckout(input: { checkout: CheckoutRecord; appName: string; email: string; baseUrl: string }): Promise<{ url: string; session_id: string }>;
  /** Re-prices the subscription for its next period, with no proration (the current cap stays). */
  reprice(sub: SubscriptionRecord, capBytes: number, priceCents: number): Promise<void>;
  /** Verifies a webhook delivery's signature and reduces it; throws WebhookRejected when it is not authentic. */
  parseWebhook(rawBody: string, signature: string | undefined, nowSeconds: number): Promise<BillingEvent>;
}

export class WebhookRejected extends Error {}

/** The parts of a Stripe event this area reads. */
export interface StripeLikeEvent {
  id: string;
  type: string;
  created: number;
  data: { object: Record<string, unknown> };
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : typeof v === 'object' && v !== null && typeof (v as { id?: unknown }).id === 'string' ? (v as { id: string }).id : undefined;
}
const iso = (seconds: number): string => new Date(seconds * 1000).toISOString();

/** Parses and shape-checks a webhook body. */
export function parseEventBody(raw: string): StripeLikeEvent {
  let e: unknown;
  try {
    e = JSON.parse(raw);
  } catch {
    throw new WebhookRejected('the event body is not JSON');
  }
  const o = e as Partial<StripeLikeEvent>;
  if (!o || typeof o.id !== 'string' || typeof o.type !== 'string' || !Number.isInteger(o.created) || typeof o.data?.object !== 'object' || o.data.object === null) {
    throw new WebhookRejected('the event lacks id, type, created or data.object');
  }
  return o as StripeLikeEvent;
}

/**
 * checkout.session.completed → checkout_completed (the session's client_reference_id is our
 * checkout id; its period comes from metadata or, for Stripe, the subscription); invoice.paid
 * with billing_reason subscription_cycle → renewed; customer.subscription.deleted → canceled.
 */
export function reduceEvent(e: StripeLikeEvent, period?: { start: number; end: number }): BillingEvent {
  const base = { id: e.id, type: e.type, created: e.created };
  const o = e.data.object;
  if (e.type === 'checkout.session.completed') {
    const meta = (o.metadata ?? {}) as Record<string, unknown>;
    const checkoutId = str(o.client_reference_id) ?? str(meta.checkout_id);
    const sub = str(o.subscription);
    const start = period?.start ?? Number(meta.current_period_start);
    const end = period?.end ?? Number(meta.current_period_end);
    if (!checkoutId || !sub || !Number.isInteger(start) || !Number.isInteger(end)) return { ...base, kind: 'ignored' };
    return { ...base, kind: 'checkout_completed', checkout_id: checkoutId, provider_subscription_id: sub, current_period_start: iso(start), current_period_end: iso(end) };
  }
  if (e.type === 'invoice.paid' && o.billing_reason === 'subscription_cycle') {
    const sub = str(o.subscription) ?? str((o.parent as { subscription_details?: { subscription?: unknown } } | undefined)?.subscription_details?.subscription);
    const line = ((o.lines as { data?: { period?: { start?: unknown; end?: unknown } }[] } | undefined)?.data ?? [])[0];
    const start = Number(line?.period?.start);
    const end = Number(line?.period?.end);
    if (!sub || !Number.isInteger(start) || !Number.isInteger(end)) return { ...base, kind: 'ignored' };
    const paid = Number(o.amount_paid);
    return { ...base, kind: 'renewed', provider_subscription_id: sub, current_period_start: iso(start), current_period_end: iso(end), ...(Number.isInteger(paid) ? { price_cents: paid } : {}) };
  }
  if (e.type === 'customer.subscription.deleted') {
    const sub = str(o.id);
    return sub ? { ...base, kind: 'canceled', provider_subscription_id: sub } : { ...base, kind: 'ignored' };
  }
  return { ...base, kind: 'ignored' };
}

/** The webhook signing secret of the local provider (Stripe's `whsec_` form). */
export function localWebhookSecret(syncSecret: Buffer): string {
  return `whsec_${deriveSyncKey(syncSecret, 'payment-webhook').toString('base64url')}`;
}

const seconds = (iso: string): number => Math.floor(Date.parse(iso) / 1000);
export const newEventId = (): string => `evt_${randomBytes(12).toString('hex')}`;

/** The event the local checkout page sends when a purchase is confirmed. */
export function localCheckoutEvent(c: CheckoutRecord, nowSeconds: number): StripeLikeEvent {
  const end = seconds(addInterval(iso(nowSeconds), c.interval));
  return {
    id: newEventId(),
    type: 'checkout.session.completed',
    created: nowSeconds,
    data: {
      object: {
        id: c.id,
        object: 'checkout.session',
        mode: 'subscription',
        client_reference_id: c.id,
        subscription: `sub_local_${c.id.replace(/^cs_/, '')}`,
        amount_total: c.price_cents,
        metadata: { checkout_id: c.id, current_period_start: nowSeconds, current_period_end: end },
      },
    },
  };
}

/** A renewal invoice for the period after the subscription's current one (`mkt admin billing renew`). */
export function localRenewalEvent(sub: SubscriptionRecord, nowSeconds: number, priceCents: number): StripeLikeEvent {
  const start = sub.current_period_end;
  const end = addInterval(start, sub.interval as BillingInterval);
  return {
    id: newEventId(),
    type: 'invoice.paid',
    created: nowSeconds,
    data: {
      object: {
        object: 'invoice',
        billing_reason: 'subscription_cycle',
        subscription: sub.provider_subscription_id,
        amount_paid: priceCents,
        lines: { data: [{ period: { start: seconds(start), end: seconds(end) } }] },
      },
    },
  };
}

export class LocalPaymentProvider implements PaymentProvider {
  readonly kind = 'local';
  constructor(readonly webhookSecret: string) {}

  async createCheckout(input: { checkout: CheckoutRecord; baseUrl: string }): Promise<{ url: string; session_id: string }> {
    return { url: `${input.baseUrl}${CHECKOUT_PAGE_PATH}/${input.checkout.id}`, session_id: input.checkout.id };
  }

  async reprice(): Promise<void> {
    // The local provider bills nothing: the renewal prices the promoted cap from the app's constants.
  }

  async parseWebhook(rawBody: string, signature: string | undefined, nowSeconds: number): Promise<BillingEvent> {
    const bad = verifyWebhook(this.webhookSecret, rawBody, signature, nowSeconds);
    if (bad) throw new WebhookRejected(bad);
    return reduceEvent(parseEventBody(rawBody));
  }

  sign(rawBody: string, nowSeconds: number): string {
    return signWebhook(this.webhookSecret, rawBody, nowSeconds);
  }
}
