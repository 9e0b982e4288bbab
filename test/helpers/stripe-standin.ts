// A stand-in for the few Stripe API endpoints the `stripe` payment provider calls (create a
// Checkout Session, retrieve and update a subscription), on 127.0.0.1 and an ephemeral port, so
// the real Stripe SDK runs over real HTTP. It records what the SDK sent; it is not Stripe:
// buying is simulated by `pay()`, and events are built and signed by the test.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StandInSubscription {
  id: string;
  item_id: string;
  product: string;
  unit_amount: number;
  interval: string;
  current_period_start: number;
  current_period_end: number;
}

export interface StandInStripe {
  host: string;
  port: number;
  /** Every request: method, path and decoded form fields (`a[b][c]` keys kept flat). */
  requests: { method: string; path: string; form: Record<string, string>; auth: string | undefined }[];
  /** The sessions created, by id. */
  sessions: Map<string, Record<string, string>>;
  subscriptions: Map<string, StandInSubscription>;
  /** The `url` a new Checkout Session answers (default `https://checkout.stripe.test/c/pay/<id>`). */
  checkoutUrl: (sessionId: string) => string;
  /** The buyer pays session `id`: a subscription starting at `start` for one interval. */
  pay(sessionId: string, start: number): StandInSubscription;
  close(): Promise<void>;
}

async function form(req: IncomingMessage): Promise<Record<string, string>> {
  let body = '';
  for await (const chunk of req) body += (chunk as Buffer).toString('utf8');
  return Object.fromEntries(new URLSearchParams(body));
}

export async function startStripeStandIn(): Promise<StandInStripe> {
  const requests: StandInStripe['requests'] = [];
  const sessions = new Map<string, Record<string, string>>();
  const subscriptions = new Map<string, StandInSubscription>();
  let n = 0;
  const subJson = (s: StandInSubscription) => ({
    id: s.id,
    object: 'subscription',
    status: 'active',
    items: { object: 'list', data: [{ id: s.item_id, object: 'subscription_item', price: { id: `price_${s.unit_amount}`, product: s.product, unit_amount: s.unit_amount }, current_period_start: s.current_period_start, current_period_end: s.current_period_end }] },
  });
  const server: Server = createServer((req, res) => {
    void (async () => {
      const f = await form(req);
      const path = (req.url ?? '').split('?')[0]!;
      requests.push({ method: req.method ?? '', path, form: f, auth: req.headers.authorization });
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${++n}` });
        res.end(JSON.stringify(body));
      };
      if (req.method === 'POST' && path === '/v1/checkout/sessions') {
        const id = `cs_test_${++n}`;
        sessions.set(id, f);
        return send(200, { id, object: 'checkout.session', url: standIn.checkoutUrl(id), client_reference_id: f.client_reference_id, mode: f.mode });
      }
      const m = /^\/v1\/subscriptions\/([\w]+)$/.exec(path);
      const sub = m ? subscriptions.get(m[1]!) : undefined;
      if (m && !sub) return send(404, { error: { type: 'invalid_request_error', message: `No such subscription: '${m[1]}'` } });
      if (sub && req.method === 'GET') return send(200, subJson(sub));
      if (sub && req.method === 'POST') {
        if (f['items[0][price_data][unit_amount]']) sub.unit_amount = Number(f['items[0][price_data][unit_amount]']);
        return send(200, subJson(sub));
      }
      send(404, { error: { type: 'invalid_request_error', message: `unrecognized request URL (${req.method}: ${path})` } });
    })();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const standIn: StandInStripe = {
    checkoutUrl: (id) => `https://checkout.stripe.test/c/pay/${id}`,
    host: '127.0.0.1',
    port,
    requests,
    sessions,
    subscriptions,
    pay(sessionId, start) {
      const s = sessions.get(sessionId);
      if (!s) throw new Error(`no session ${sessionId}`);
      const interval = s['line_items[0][price_data][recurring][interval]']!;
      const end = new Date(start * 1000);
      if (interval === 'year') end.setUTCFullYear(end.getUTCFullYear() + 1);
      else end.setUTCMonth(end.getUTCMonth() + 1);
      const sub: StandInSubscription = {
        id: `sub_${++n}`,
        item_id: `si_${n}`,
        product: `prod_${n}`,
        unit_amount: Number(s['line_items[0][price_data][unit_amount]']),
        interval,
        current_period_start: start,
        current_period_end: Math.floor(end.getTime() / 1000),
      };
      subscriptions.set(sub.id, sub);
      return sub;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
  return standIn;
}
