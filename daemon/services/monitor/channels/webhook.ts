// The JSON webhook: the alert event as it is (docs/monitor.md), signed with the channel's secret
// when it has one, so a receiver can tell the monitor's POSTs from anyone else's.
import { createHmac } from 'node:crypto';
import type { WebhookChannel } from '../../../../src/config/monitor-alerts.js';
import type { AlertEvent } from '../alert-event.js';
import { post } from './http.js';
import type { SendContext } from './text.js';

/** `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`: Stripe's scheme, so receivers know it. */
export function signature(secret: string, unixSeconds: number, body: string): string {
  return `t=${unixSeconds},v1=${createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')}`;
}

export async function sendWebhook(ch: WebhookChannel, e: AlertEvent, ctx: SendContext): Promise<void> {
  const body = JSON.stringify(e);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (ch.secret !== undefined) headers['mkt-signature'] = signature(ch.secret, Math.floor(ctx.now / 1000), body);
  await post(ch.url, { headers, body, timeoutMs: ctx.timeoutMs });
}
