// ntfy (ntfy.sh or a self-hosted server): the details as the message body, the headline as its
// Title, an urgent Priority while down. Header values are one line and ASCII (RFC 2047 otherwise).
import type { NtfyChannel } from '../../../../src/config/monitor-alerts.js';
import type { AlertEvent } from '../alert-event.js';
import { post } from './http.js';
import { detailLines, headline, links, oneLine, phaseOf, type SendContext } from './text.js';

/** A header value: one line; non-ASCII text as an RFC 2047 encoded word, which ntfy decodes. */
export function headerValue(s: string): string {
  const flat = oneLine(s);
  return /^[\x20-\x7e]*$/.test(flat) ? flat : `=?UTF-8?B?${Buffer.from(flat, 'utf8').toString('base64')}?=`;
}

export function ntfyRequest(ch: NtfyChannel, e: AlertEvent, ctx: Pick<SendContext, 'now' | 'publicUrl'>): { headers: Record<string, string>; body: string } {
  const recovered = phaseOf(e) === 'recovered';
  const headers: Record<string, string> = {
    'content-type': 'text/plain; charset=utf-8',
    title: headerValue(`[mkt] ${headline(e)}`),
    priority: recovered ? '3' : '5',
    tags: recovered ? 'white_check_mark' : 'rotating_light',
  };
  const l = links(e, ctx.publicUrl);
  if (l) headers.click = l.status;
  if (ch.token !== undefined) headers.authorization = `Bearer ${ch.token}`;
  return { headers, body: detailLines(e, ctx).join('\n') };
}

export async function sendNtfy(ch: NtfyChannel, e: AlertEvent, ctx: SendContext): Promise<void> {
  await post(ch.url, { ...ntfyRequest(ch, e, ctx), timeoutMs: ctx.timeoutMs });
}
