// The `stripe` payment provider: Checkout Sessions in subscription mode priced from the app's
// constants, cap changes as a re-priced subscription item with proration_behavior none, and
// webhooks verified with the endpoint's signing secret (the period of a new subscription is
// read from Stripe, since checkout.session.completed does not carry it).
import Stripe from 'stripe';
import type { BillingEvent, CheckoutRecord, SubscriptionRecord } from '../../../../src/store/sync-billing.js';
import { verifyWebhook } from '../../../../src/crypto/webhook-signature.js';
import { formatBytes } from '../../../../src/sync/pricing.js';
import { CHECKOUT_PAGE_PATH, CURRENCY, parseEventBody, reduceEvent, WebhookRejected, type PaymentProvider } from './payments.js';

export interface StripeProviderOptions {
  /** `sk_live_...` / `sk_test_...` (MKT_STRIPE_SECRET_KEY or STRIPE_SECRET_KEY). */
  secretKey: string;
  /** The webhook endpoint's signing secret, `whsec_...` (MKT_STRIPE_WEBHOOK_SECRET). */
  webhookSecret: string;
  /** Where Checkout sends the buyer back; default a page of this marketplace. */
  successUrl?: string;
  cancelUrl?: string;
  /** A different API host (a stand-in server in tests). */
  host?: string;
  port?: number;
  protocol?: 'http' | 'https';
}

export const CHECKOUT_RETURN_PATH = `${CHECKOUT_PAGE_PATH}/return`;

export function stripeOptionsFrom(given: Partial<StripeProviderOptions> | undefined, env: NodeJS.ProcessEnv): StripeProviderOptions {
  const secretKey = given?.secretKey ?? env.MKT_STRIPE_SECRET_KEY ?? env.STRIPE_SECRET_KEY;
  const webhookSecret = given?.webhookSecret ?? env.MKT_STRIPE_WEBHOOK_SECRET;
  if (!secretKey) throw new Error('the stripe payment provider needs MKT_STRIPE_SECRET_KEY (or STRIPE_SECRET_KEY)');
  if (!webhookSecret) throw new Error('the stripe payment provider needs MKT_STRIPE_WEBHOOK_SECRET (the webhook endpoint signing secret)');
  return { ...given, secretKey, webhookSecret, successUrl: given?.successUrl ?? env.MKT_STRIPE_SUCCESS_URL, cancelUrl: given?.cancelUrl ?? env.MKT_STRIPE_CANCEL_URL };
}

/** A subscription's current period: on its first item (API 2025-03 and later) or on the subscription itself (older). */
function periodOf(sub: Stripe.Subscription): { start: number; end: number } | undefined {
  const item = sub.items?.data?.[0] as (Stripe.SubscriptionItem & { current_period_start?: number; current_period_end?: number }) | undefined;
  const legacy = sub as unknown as { current_period_start?: number; current_period_end?: number };
  const start = item?.current_period_start ?? legacy.current_period_start;
  const end = item?.current_period_end ?? legacy.current_period_end;
  return Number.isInteger(start) && Number.isInteger(end) ? { start: start!, end: end! } : undefined;
}

export class StripePaymentProvider implements PaymentProvider {
  readonly kind = 'stripe';
  private readonly stripe: Stripe;

  constructor(private readonly opts: StripeProviderOptions) {
    this.stripe = new Stripe(opts.secretKey, { host: opts.host, port: opts.port, protocol: opts.protocol, maxNetworkRetries: 2, timeout: 20_000 });
  }

  async createCheckout(input: { checkout: CheckoutRecord; appName: string; email: string; baseUrl: string }): Promise<{ url: string; session_id: string }> {
    const c = input.checkout;
    const meta = { checkout_id: c.id, app_id: c.app_id, user_id: c.user_id, cap_bytes: String(c.cap_bytes) };
    const session = await this.stripe.checkout.sessions.create(
      {
        mode: 'subscription',
        client_reference_id: c.id,
        customer_email: input.email,
        line_items: [
          {
            quantity: 1,
            price_data: { currency: CURRENCY, unit_amount: c.price_cents, recurring: { interval: c.interval }, product_data: { name: `${input.appName} sync storage (${formatBytes(c.cap_bytes)})` } },
          },
        ],
        metadata: meta,
        subscription_data: { metadata: meta },
        success_url: this.opts.successUrl ?? `${input.baseUrl}${CHECKOUT_RETURN_PATH}?outcome=success`,
        cancel_url: this.opts.cancelUrl ?? `${input.baseUrl}${CHECKOUT_RETURN_PATH}?outcome=cancel`,
      },
      // A retried request creates no second session.
      { idempotencyKey: `mkt-${c.id}` },
    );
    if (!session.url) throw new Error('Stripe returned a checkout session without a URL');
    return { url: session.url, session_id: session.id };
  }

  async reprice(sub: SubscriptionRecord, capBytes: number, priceCents: number): Promise<void> {
    const s = await this.stripe.subscriptions.retrieve(sub.provider_subscription_id);
    const item = s.items.data[0];
    if (!item) throw new Error(`Stripe subscription ${sub.provider_subscription_id} has no item`);
    const product = typeof item.price.product === 'string' ? item.price.product : item.price.product.id;
    await this.stripe.subscriptions.update(sub.provider_subscription_id, {
      items: [{ id: item.id, price_data: { currency: CURRENCY, unit_amount: priceCents, recurring: { interval: sub.interval as 'month' | 'year' }, product } }],
      // The new price starts with the next invoice; the cap it pays for is promoted by that renewal.
      proration_behavior: 'none',
      metadata: { pending_cap_bytes: String(capBytes) },
    });
  }

  async parseWebhook(rawBody: string, signature: string | undefined, nowSeconds: number): Promise<BillingEvent> {
    const bad = verifyWebhook(this.opts.webhookSecret, rawBody, signature, nowSeconds);
    if (bad) throw new WebhookRejected(bad);
    const event = parseEventBody(rawBody);
    if (event.type !== 'checkout.session.completed') return reduceEvent(event);
    const o = event.data.object;
    // An asynchronous payment (bank debit) completes the session unpaid: nothing is bought yet.
    if (o.payment_status === 'unpaid') return { id: event.id, type: event.type, created: event.created, kind: 'ignored' };
    const subId = typeof o.subscription === 'string' ? o.subscription : (o.subscription as { id?: string } | null)?.id;
    if (!subId) return reduceEvent(event);
    return reduceEvent(event, periodOf(await this.stripe.subscriptions.retrieve(subId)));
  }
}
