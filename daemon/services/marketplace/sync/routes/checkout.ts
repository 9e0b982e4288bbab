// Checkout pages: the local payment provider's page (shows the purchase, and on confirmation
// delivers a signed checkout.session.completed to this server's webhook over HTTP, like a
// processor would), and the page a hosted checkout (Stripe) sends the buyer back to.
import type { FastifyInstance } from 'fastify';
import { request } from 'undici';
import type { CheckoutRecord } from '../../../../../src/store/sync-billing.js';
import { formatBytes, formatCents } from '../../../../../src/sync/pricing.js';
import { CHECKOUT_PAGE_PATH, localCheckoutEvent, WEBHOOK_PATH, type LocalPaymentProvider } from '../payments.js';
import type { StorageContext } from '../storage-context.js';
import { socketUrl } from '../exposure.js';
import { escapeMarkup as esc } from '../../../../../src/util/markup.js';

/** A checkout session can be confirmed for this long (Stripe's default). */
export const CHECKOUT_LIFETIME_MS = 24 * 3600 * 1000;


function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}table{border-collapse:collapse}td{padding:.25rem 1rem .25rem 0}button{font:inherit;padding:.5rem 1.5rem}</style>
</head><body><h1>${esc(title)}</h1>
${body}
</body></html>
`;
}

function summary(c: CheckoutRecord, appName: string): string {
  return `<table>
<tr><td>App</td><td>${esc(appName)}</td></tr>
<tr><td>Storage cap</td><td>${esc(formatBytes(c.cap_bytes))}</td></tr>
<tr><td>Billed</td><td>${c.interval === 'year' ? 'yearly' : 'monthly'}</td></tr>
<tr><td>Price</td><td>${esc(formatCents(c.price_cents))} USD per ${c.interval}</td></tr>
</table>`;
}

export async function localCheckoutRoutes(app: FastifyInstance, c: StorageContext, provider: LocalPaymentProvider): Promise<void> {
  const params = { type: 'object', properties: { id: { type: 'string', pattern: '^cs_[0-9a-f]{32}$' } }, required: ['id'] } as const;

  async function load(id: string): Promise<{ checkout: CheckoutRecord; appName: string } | { gone: string }> {
    const checkout = await c.store.checkout(id);
    if (!checkout) return { gone: 'This checkout does not exist.' };
    const app = await c.store.app(checkout.app_id);
    if (checkout.state === 'completed') return { gone: 'This purchase is already complete.' };
    if (Date.parse(checkout.created_at) + CHECKOUT_LIFETIME_MS < c.clock.now()) return { gone: 'This checkout has expired; start a new one from the app.' };
    return { checkout, appName: app?.app_name ?? checkout.app_id };
  }

  app.get<{ Params: { id: string } }>(`${CHECKOUT_PAGE_PATH}/:id`, { schema: { hide: true, params } }, async (req, reply) => {
    const found = await load(req.params.id);
    reply.type('text/html; charset=utf-8').header('cache-control', 'no-store');
    if ('gone' in found) return reply.code(found.gone.startsWith('This purchase') ? 200 : 404).send(page('Checkout', `<p>${esc(found.gone)}</p>`));
    const form = `<form method="post" action="${CHECKOUT_PAGE_PATH}/${esc(found.checkout.id)}/confirm"><button type="submit">Confirm purchase</button></form>`;
    return reply.send(page('Confirm your storage subscription', `${summary(found.checkout, found.appName)}\n<p>This marketplace bills through its built-in (local) payment provider.</p>\n${form}`));
  });

  app.post<{ Params: { id: string } }>(`${CHECKOUT_PAGE_PATH}/:id/confirm`, { schema: { hide: true, params } }, async (req, reply) => {
    reply.type('text/html; charset=utf-8').header('cache-control', 'no-store');
    const found = await load(req.params.id);
    if ('gone' in found) return reply.code(found.gone.startsWith('This purchase') ? 200 : 404).send(page('Checkout', `<p>${esc(found.gone)}</p>`));
    const now = Math.floor(c.clock.now() / 1000);
    const body = JSON.stringify(localCheckoutEvent(found.checkout, now));
    let status: number;
    try {
      // To the socket this request came in on: never to the Host header a client chose.
      const res = await request(`${socketUrl(req)}${WEBHOOK_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'stripe-signature': provider.sign(body, now) },
        body,
        signal: AbortSignal.timeout(10_000),
      });
      status = res.statusCode;
      await res.body.dump();
    } catch (err) {
      req.log.error({ err: (err as Error).message }, 'checkout event delivery failed');
      status = 0;
    }
    if (status !== 200) return reply.code(502).send(page('Checkout', '<p>The purchase could not be recorded; please try again.</p>'));
    return reply.send(page('Purchase confirmed', `${summary(found.checkout, found.appName)}\n<p>Your subscription is active. You can close this page.</p>`));
  });
}

/** Where Stripe Checkout returns the buyer (`?outcome=success|cancel`) unless other URLs are configured. */
export async function checkoutReturnRoutes(app: FastifyInstance, path: string): Promise<void> {
  app.get<{ Querystring: { outcome?: string } }>(
    path,
    { schema: { hide: true, querystring: { type: 'object', properties: { outcome: { type: 'string', enum: ['success', 'cancel'] } } } } },
    async (req, reply) => {
      reply.type('text/html; charset=utf-8').header('cache-control', 'no-store');
      if (req.query.outcome === 'cancel') return reply.send(page('Checkout cancelled', '<p>Nothing was bought. You can close this page.</p>'));
      return reply.send(page('Thank you', '<p>Your storage subscription becomes active as soon as the payment is confirmed. You can close this page.</p>'));
    },
  );
}
