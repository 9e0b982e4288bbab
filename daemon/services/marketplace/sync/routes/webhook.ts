// The payment webhook (POST /api/v1/sync/webhook): verifies the Stripe-Signature of the raw
// body, then applies the event at most once (../subscriptions.ts); replays by event id and stale,
// out-of-order events are acknowledged with 200 and change nothing, so the processor stops
// retrying them.
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { ErrorSchema } from '../../../../../src/schemas/common.js';
import { timestampNow } from '../../../../../src/util/time.js';
import { HttpError } from '../../../../plugins/errors.js';
import { WEBHOOK_PATH, WebhookRejected } from '../payments.js';
import type { StorageContext } from '../storage-context.js';
import { applyEvent } from '../subscriptions.js';
import { TAGS } from './common.js';

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
          tags: TAGS,
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
        const outcome = await applyEvent(c.store, event, timestampNow(c.clock));
        req.log.info({ event_id: event.id, type: event.type, outcome }, 'payment event');
        return { received: true, outcome };
      },
    );
  });
}
