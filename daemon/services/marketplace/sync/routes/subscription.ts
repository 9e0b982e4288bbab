// Subscription routes (spec: sync_subscription_status, quote, checkout, storage-cap). Prices come
// from the app's constants through the one formula in src/sync/pricing.ts; the payment provider
// only collects them. Payment events (webhook.ts, applied by ../subscriptions.ts) write the subscription record.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, preHandlerHookHandler } from 'fastify';
import {
  SyncCapChangeRequestSchema,
  SyncCheckoutResponseSchema,
  SyncQuoteRequestSchema,
  SyncQuoteResponseSchema,
  SyncSubscribeRequestSchema,
  SyncSubscriptionStatusResponseSchema,
  type BillingInterval,
  type SyncSubscriptionStatus,
} from '../../../../../src/schemas/sync.js';
import { ErrorSchema } from '../../../../../src/schemas/common.js';
import type { AccountsStore } from '../../../../../src/store/accounts.js';
import type { AppPlan, SubscriptionRecord } from '../../../../../src/store/sync-billing.js';
import { capInRange, formatBytes, quoteCents } from '../../../../../src/sync/pricing.js';
import { timestampNow } from '../../../../../src/util/time.js';
import { HttpError } from '../../../../plugins/errors.js';
import { syncCaller, type SyncCaller } from '../auth.js';
import type { StorageContext } from '../storage-context.js';
import { CURRENCY } from '../payments.js';
import { BEARER, TAGS } from './common.js';

const errors = { 400: ErrorSchema, 401: ErrorSchema, 409: ErrorSchema };

export function subscriptionStatus(sub: SubscriptionRecord | undefined): SyncSubscriptionStatus {
  if (!sub) {
    return { active: false, status: null, cap_bytes: null, pending_cap_bytes: null, interval: null, price_cents: null, current_period_start: null, current_period_end: null };
  }
  return {
    active: sub.status === 'active',
    status: sub.status,
    cap_bytes: sub.cap_bytes,
    pending_cap_bytes: sub.pending_cap_bytes,
    interval: sub.interval,
    price_cents: sub.price_cents,
    current_period_start: sub.current_period_start,
    current_period_end: sub.current_period_end,
  };
}

export async function subscriptionRoutes(app: FastifyInstance, c: StorageContext, auth: preHandlerHookHandler, accounts: AccountsStore): Promise<void> {
  async function plan(caller: SyncCaller): Promise<AppPlan> {
    const p = await c.store.app(caller.appId);
    if (!p) throw new HttpError(401, 'the app of this token no longer exists');
    return p;
  }
  function checkCap(p: AppPlan, cap: number): void {
    if (!capInRange(p, cap)) throw new HttpError(400, `cap_bytes must be between ${p.min_cap_bytes} (${formatBytes(p.min_cap_bytes)}) and ${p.max_cap_bytes} (${formatBytes(p.max_cap_bytes)})`);
  }

  app.get(
    '/api/v1/sync/subscription',
    {
      preValidation: auth,
      schema: {
        operationId: 'sync_subscription_status',
        summary: "The caller's storage subscription",
        description: 'A user without a subscription gets 200 with active false and null fields.',
        tags: TAGS,
        security: BEARER,
        response: { 200: SyncSubscriptionStatusResponseSchema, 401: ErrorSchema },
      },
    },
    async (req) => {
      const { appId, userId } = syncCaller(req);
      return subscriptionStatus(await c.store.subscription(appId, userId));
    },
  );

  app.post<{ Body: { cap_bytes: number; interval: BillingInterval } }>(
    '/api/v1/sync/subscription/quote',
    {
      preValidation: auth,
      schema: {
        operationId: 'quote_subscription_price',
        summary: 'Price of a storage cap',
        description:
          'monthly = max(min_charge_cents, ceil(cap_bytes / 2^30 × per_gb_tenths_of_cent_per_month / 10)); annual = max(min_charge_cents, monthly × annual_multiplier). Cents. 400 when the cap is outside the app range.',
        tags: TAGS,
        security: BEARER,
        body: SyncQuoteRequestSchema,
        response: { 200: SyncQuoteResponseSchema, ...errors },
      },
    },
    async (req) => {
      const p = await plan(syncCaller(req));
      const { cap_bytes, interval } = req.body;
      checkCap(p, cap_bytes);
      return { cap_bytes, interval, price_cents: quoteCents(p, cap_bytes, interval), monthly_cents: quoteCents(p, cap_bytes, 'month'), currency: CURRENCY };
    },
  );

  app.post<{ Body: { cap_bytes: number; interval: BillingInterval } }>(
    '/api/v1/sync/subscription/checkout',
    {
      preValidation: auth,
      schema: {
        operationId: 'create_subscription_checkout',
        summary: 'Start buying a storage subscription',
        description:
          "Prices the cap with the quote formula and opens a checkout session at the payment provider; the subscription is written when the provider's checkout.session.completed event reaches the webhook. 409 when the caller already has an active subscription (change its cap instead).",
        tags: TAGS,
        security: BEARER,
        body: SyncSubscribeRequestSchema,
        response: { 200: SyncCheckoutResponseSchema, ...errors },
      },
    },
    async (req) => {
      const caller = syncCaller(req);
      const p = await plan(caller);
      const { cap_bytes, interval } = req.body;
      checkCap(p, cap_bytes);
      const sub = await c.store.subscription(caller.appId, caller.userId);
      if (sub?.status === 'active') throw new HttpError(409, 'this account already has an active subscription: change its cap with POST /api/v1/sync/subscription/storage-cap');
      const user = await accounts.getUser(caller.userId);
      if (!user) throw new HttpError(401, 'the user of this token no longer exists');
      const checkout = {
        id: `cs_${randomBytes(16).toString('hex')}`,
        app_id: caller.appId,
        user_id: caller.userId,
        cap_bytes,
        interval,
        price_cents: quoteCents(p, cap_bytes, interval),
        state: 'open' as const,
        created_at: timestampNow(c.clock),
      };
      await c.store.createCheckout(checkout);
      const session = await c.payments.createCheckout({ checkout, appName: p.app_name, email: user.email, baseUrl: c.baseUrl(req) });
      return { checkout_url: session.url, session_id: session.session_id, price_cents: checkout.price_cents };
    },
  );

  app.post<{ Body: { cap_bytes: number } }>(
    '/api/v1/sync/subscription/storage-cap',
    {
      preValidation: auth,
      schema: {
        operationId: 'queue_storage_cap_change',
        summary: 'Queue a storage cap for the next billing period',
        description:
          'The payment provider re-prices the subscription for the next period with no proration, then the pending cap is recorded; the current cap stays active until the renewal promotes it. Asking for the current cap clears a pending change. 409 without an active subscription, or when the new cap is below the storage in use.',
        tags: TAGS,
        security: BEARER,
        body: SyncCapChangeRequestSchema,
        response: { 200: SyncSubscriptionStatusResponseSchema, ...errors },
      },
    },
    async (req) => {
      const caller = syncCaller(req);
      const p = await plan(caller);
      const { cap_bytes } = req.body;
      checkCap(p, cap_bytes);
      const sub = await c.store.subscription(caller.appId, caller.userId);
      if (sub?.status !== 'active') throw new HttpError(409, 'no active subscription: buy one with POST /api/v1/sync/subscription/checkout');
      const usage = await c.store.usage(caller.appId, caller.userId);
      if (cap_bytes < usage.used_bytes) throw new HttpError(409, `cap_bytes ${cap_bytes} is below the ${usage.used_bytes} bytes in use: delete blobs first`);
      const pending = cap_bytes === sub.cap_bytes ? null : cap_bytes;
      await c.payments.reprice(sub, pending ?? sub.cap_bytes, quoteCents(p, pending ?? sub.cap_bytes, sub.interval));
      await c.store.setPendingCap(caller.appId, caller.userId, pending, timestampNow(c.clock));
      return subscriptionStatus(await c.store.subscription(caller.appId, caller.userId));
    },
  );
}
