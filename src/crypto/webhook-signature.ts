// Payment webhook signatures in Stripe's scheme: `Stripe-Signature: t=<unix>,v1=<hex>` where
// v1 = HMAC-SHA256(secret, "<t>.<raw body>"); a timestamp tolerance bounds replays.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const WEBHOOK_TOLERANCE_SECONDS = 300;

export function signWebhook(secret: string, payload: string, nowSeconds: number): string {
  const v1 = createHmac('sha256', secret).update(`${nowSeconds}.${payload}`).digest('hex');
  return `t=${nowSeconds},v1=${v1}`;
}

/** undefined when valid, else the reason (never includes the secret). */
export function verifyWebhook(secret: string, payload: string, header: string | undefined, nowSeconds: number, tolerance = WEBHOOK_TOLERANCE_SECONDS): string | undefined {
  if (!header) return 'missing Stripe-Signature header';
  let t: number | undefined;
  const v1: string[] = [];
  for (const item of header.split(',')) {
    const [k, v] = item.split('=', 2).map((s) => s.trim());
    if (k === 't') t = Number(v);
    else if (k === 'v1' && v) v1.push(v);
  }
  if (t === undefined || !Number.isInteger(t) || v1.length === 0) return 'malformed Stripe-Signature header';
  if (Math.abs(nowSeconds - t) > tolerance) return 'signature timestamp outside the tolerance';
  const expected = createHmac('sha256', secret).update(`${t}.${payload}`).digest();
  const ok = v1.some((s) => {
    const given = Buffer.from(s, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  return ok ? undefined : 'signature does not match';
}
