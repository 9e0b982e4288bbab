// How a payment event changes a sync subscription: applied at most once (by event id) and never
// back in time, under the owner's lock. The webhook (routes/webhook.ts) and `mkt admin billing
// renew` (billing-admin.ts) both apply events through applyEvent.
import type { BillingEvent, EventOutcome, StorageRows, SubscriptionRecord, SyncStorageStore } from '../../../../src/store/sync-billing.js';
import { quoteCents } from '../../../../src/sync/pricing.js';
import { ownerLock } from './uploads.js';

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
