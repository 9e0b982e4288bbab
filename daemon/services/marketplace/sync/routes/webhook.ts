// The payment webhook (POST /api/v1/sync/webhook): verifies the Stripe-Signature of the raw
// body, then applies the event at most once (replays by event id and stale, out-of-order events
// are acknowledged with 200 and change nothing, so the processor stops retrying them). The
// rules of applying an event live here (applyEvent), for the webhook and `mkt admin billing renew`.
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { ErrorSchema } from '../../../../src/schemas/sync.js';
import type { BillingEvent, EventOutcome, StorageRows, SubscriptionRecord, SyncStorageStore } from '../../../../src/store/sync-billing.js';
import { quoteCents } from '../../../../src/sync/pricing.js';
import { ownerLock } from './uploads.js';
import { HttpError } from '../../../plugins/errors.js';
import { WEBHOOK_PATH, WebhookRejected } from './payments.js';
import { nowIso, type StorageContext } from './storage-context.js';

const WebhookResponseSchema = Type.Object({
  received: Type.Boolean(),
  outcome: Type.Union([Type.Literal('applied'), Type.Literal('duplicate'), Type.Literal('stale'), Type.Literal('ignored')]),
});

export async function webhookRoutes(app: FastifyInstance, c: StorageContext): Promise<void> {
  await app.register(async (scope) => {
    // The signature covers the exact bytes, so the body is kept as text and parsed after checking.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: 1024 * 1024 }, (_req, body, done) => done(null, body));

    scope.post<{ Body: string }>(
      WEBHOOK_PATH,
      {
        schema: {
          operationId: 'payment_webhook',
          summary: 'Payment processor events',
          description:
            'Stripe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">, within 300 s of the server clock; 400 when missing or wrong. Acts on checkout.session.completed, invoice.paid (billing_reason subscription_cycle) and customer.subscription.deleted; answers 200 with the outcome (applied, duplicate, stale or ignored).',
          tags: ['sync'],
          security: [],
          response: { 200: WebhookResponseSchema, 400: ErrorSchema },
        },
      },
      async (req) => {
        const raw = typeof req.body === 'string' ? req.body : '';
        const sig = req.headers['stripe-signature'];
        let event;
        try {
          event = await c.payments.parseWebhook(raw, Array.isArray(sig) ? sig[0] : sig, Math.floor(c.clock.now() / 1000));
        } catch (err) {
          if (err instanceof WebhookRejected) throw new HttpError(400, `webhook rejected: ${err.message}`);
          throw err;
        }
        const outcome = await applyEvent(c.store, event, nowIso(c.clock));
        req.log.info({ event_id: event.id, type: event.type, outcome }, 'payment event');
        return { received: true, outcome };
      },
    );
  });
}

/**
 * Applies a verified event at most once (by event id) and never back in time, in one
 * transaction: a redelivery is `duplicate`; an event older than the subscription's state, a
 * renewal that does not move the period forward, or a checkout completed before is `stale`.
 * The subscription is decided under its owner's lock (its cap weighs in every quota decision).
 */
export async function applyEvent(store: SyncStorageStore, e: BillingEvent, at: string): Promise<EventOutcome> {
  return store.transaction(async (tx) => {
    if (!(await tx.recordEvent(e.id, e.type, at))) return 'duplicate';
    return applyOnce(tx, e, at);
  });
}

/** The subscription of a provider id, read again under its owner's lock (another event may have just changed it). */
async function lockedByProvider(tx: StorageRows, providerId: string): Promise<SubscriptionRecord | undefined> {
  const seen = await tx.subscriptionByProvider(providerId);
  if (!seen) return undefined;
  await tx.lock(ownerLock(seen.app_id, seen.user_id));
  const now = await tx.subscription(seen.app_id, seen.user_id);
  return now?.provider_subscription_id === providerId ? now : undefined;
}

/** The effect of a first-seen event. Out-of-order rules: see docs/sync-storage.md. */
async function applyOnce(tx: StorageRows, e: BillingEvent, at: string): Promise<EventOutcome> {
  switch (e.kind) {
    case 'ignored':
      return 'ignored';
    case 'checkout_completed': {
      const c = await tx.checkout(e.checkout_id);
      if (!c) return 'ignored';
      await tx.lock(ownerLock(c.app_id, c.user_id));
      // Another event already completed this checkout: never apply a purchase twice.
      if (!(await tx.completeCheckout(c.id))) return 'stale';
      const sub = await tx.subscription(c.app_id, c.user_id);
      if (sub && sub.last_event_created > e.created) return 'stale';
      await tx.putSubscription({
        app_id: c.app_id,
        user_id: c.user_id,
        status: 'active',
        cap_bytes: c.cap_bytes,
        pending_cap_bytes: null,
        interval: c.interval,
        price_cents: c.price_cents,
        provider_subscription_id: e.provider_subscription_id,
        current_period_start: e.current_period_start,
        current_period_end: e.current_period_end,
        last_event_created: e.created,
        updated_at: at,
      });
      return 'applied';
    }
    case 'renewed': {
      const sub = await lockedByProvider(tx, e.provider_subscription_id);
      if (!sub) return 'ignored';
      // A period that does not move the subscription forward is an old or repeated renewal.
      if (Date.parse(e.current_period_end) <= Date.parse(sub.current_period_end)) return 'stale';
      const app = await tx.app(sub.app_id);
      const cap = sub.pending_cap_bytes ?? sub.cap_bytes;
      const price = e.price_cents ?? (app ? quoteCents(app, cap, sub.interval) : sub.price_cents);
      await tx.putSubscription({
        ...sub,
        status: 'active',
        cap_bytes: cap,
        pending_cap_bytes: null,
        price_cents: price,
        current_period_start: e.current_period_start,
        current_period_end: e.current_period_end,
        last_event_created: Math.max(sub.last_event_created, e.created),
        updated_at: at,
      });
      return 'applied';
    }
    case 'canceled': {
      const sub = await lockedByProvider(tx, e.provider_subscription_id);
      if (!sub) return 'ignored';
      if (sub.last_event_created > e.created) return 'stale';
      await tx.putSubscription({ ...sub, status: 'canceled', last_event_created: e.created, updated_at: at });
      return 'applied';
    }
  }
}
