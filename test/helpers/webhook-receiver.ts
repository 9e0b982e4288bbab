// A webhook receiver on 127.0.0.1 as a vendor's backend would write one (docs/license-events.md):
// it verifies `Mkt-Signature` with the secret in constant time, refuses a signature time more than
// five minutes from its own clock, and drops an event id it has seen (a replay or a repeat). Tests
// script its answers (fail the first N, hang, redirect) and read what it accepted, in order.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const TOLERANCE_SECONDS = 300;

export interface ReceivedDelivery {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
  /** The raw request, to replay it. */
  raw: { body: string; headers: Record<string, string> };
}

export type Verdict = { ok: true; event: ReceivedDelivery } | { ok: false; status: number; reason: 'no signature' | 'bad signature' | 'stale' | 'replayed' };

/** The receiver's check, usable on its own: signature, then time, then the id. */
export function verifyDelivery(secret: string, body: string, headers: Record<string, string | undefined>, nowSeconds: number, seen: Set<string>): Verdict {
  const header = headers['mkt-signature'];
  const m = header ? /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header) : null;
  if (!m) return { ok: false, status: 400, reason: 'no signature' };
  const expected = createHmac('sha256', secret).update(`${m[1]}.${body}`).digest();
  const given = Buffer.from(m[2]!, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, status: 400, reason: 'bad signature' };
  if (Math.abs(nowSeconds - Number(m[1])) > TOLERANCE_SECONDS) return { ok: false, status: 400, reason: 'stale' };
  const event = JSON.parse(body) as Omit<ReceivedDelivery, 'raw'>;
  if (headers['mkt-event-id'] !== event.id) return { ok: false, status: 400, reason: 'bad signature' };
  if (seen.has(event.id)) return { ok: false, status: 200, reason: 'replayed' };
  seen.add(event.id);
  return { ok: true, event: { ...event, raw: { body, headers: headers as Record<string, string> } } };
}

export interface Receiver {
  url: string;
  /** Deliveries accepted (verified, fresh, first of their id), in arrival order. */
  accepted: ReceivedDelivery[];
  /** Every request's outcome: 'accepted', a refusal reason, or the scripted answer given. */
  log: string[];
  /** Answers the next `n` requests (any path) with `status` instead of checking them. */
  failNext(n: number, status?: number): void;
  /** Holds the next `n` requests without answering. */
  hangNext(n: number): void;
  /** Answers the next `n` with a 302 to /elsewhere (which accepts everything and records it). */
  redirectNext(n: number): void;
  /** Requests that reached /elsewhere. */
  elsewhere: number;
  /** The receiver's clock offset (seconds), to test the staleness check. */
  skewSeconds: number;
  /** Sends a raw request again, as an attacker replaying a captured delivery would. */
  replay(raw: ReceivedDelivery['raw']): Promise<number>;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startReceiver(secret: () => string): Promise<Receiver> {
  const seen = new Set<string>();
  let fail: { n: number; status: number } = { n: 0, status: 500 };
  let hang = 0;
  let redirect = 0;
  const hung: (() => void)[] = [];
  const r: Omit<Receiver, 'url' | 'close' | 'replay'> = {
    accepted: [],
    log: [],
    failNext: (n, status = 500) => (fail = { n, status }),
    hangNext: (n) => (hang = n),
    redirectNext: (n) => (redirect = n),
    elsewhere: 0,
    skewSeconds: 0,
  };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      if (req.url === '/elsewhere') {
        r.elsewhere++;
        res.end('ok');
        return;
      }
      if (hang > 0) {
        hang--;
        r.log.push('hung');
        hung.push(() => res.destroy());
        return;
      }
      if (redirect > 0) {
        redirect--;
        r.log.push('redirected');
        res.writeHead(302, { location: '/elsewhere' }).end();
        return;
      }
      if (fail.n > 0) {
        fail.n--;
        r.log.push(`answered ${fail.status}`);
        res.writeHead(fail.status).end('try later');
        return;
      }
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      const v = verifyDelivery(secret(), body, headers, Math.floor(Date.now() / 1000) + r.skewSeconds, seen);
      r.log.push(v.ok ? 'accepted' : v.reason);
      if (v.ok) r.accepted.push(v.event);
      res.writeHead(v.ok ? 200 : v.status).end();
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/mkt`;
  return Object.assign(r, {
    url,
    async replay(raw: ReceivedDelivery['raw']): Promise<number> {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'mkt-signature': raw.headers['mkt-signature']!, 'mkt-event-id': raw.headers['mkt-event-id']! }, body: raw.body });
      await res.arrayBuffer();
      return res.status;
    },
    async close() {
      for (const h of hung.splice(0)) h();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}

