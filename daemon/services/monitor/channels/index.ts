// One send of an alert to one channel, by the channel's type; and the secrets each channel holds,
// which no error text that reaches a log or the store may carry.
import type { AlertChannel } from '../../../../src/config/monitor-alerts.js';
import type { AlertEvent } from '../alert-event.js';
import { sendChat } from './chat.js';
import { sendEmail } from './email.js';
import { sendNtfy } from './ntfy.js';
import { sendPagerDuty } from './pagerduty.js';
import type { SendContext } from './text.js';
import { sendWebhook } from './webhook.js';

export type { SendContext } from './text.js';
export { SendError, SEND_TIMEOUT_MS } from './http.js';

/** Sends once; throws (a SendError, with a message fit to log) when the channel did not take it. */
export function deliver(ch: AlertChannel, e: AlertEvent, ctx: SendContext): Promise<void> {
  switch (ch.type) {
    case 'webhook':
      return sendWebhook(ch, e, ctx);
    case 'slack':
    case 'discord':
    case 'teams':
      return sendChat(ch, e, ctx);
    case 'ntfy':
      return sendNtfy(ch, e, ctx);
    case 'pagerduty':
      return sendPagerDuty(ch, e, ctx);
    case 'email':
      return sendEmail(ch, e, ctx);
  }
}

/** The texts of a channel that are secret: its URL and the parts of it that may be a token, keys, passwords. */
export function channelSecrets(ch: AlertChannel, env: NodeJS.ProcessEnv): string[] {
  const out: string[] = [];
  const ofUrl = (raw: string): void => {
    out.push(raw);
    try {
      const u = new URL(raw);
      if (u.pathname.length > 1) out.push(u.pathname);
      if (u.search) out.push(u.search.slice(1));
      if (u.username) out.push(u.username, decodeURIComponent(u.username));
      if (u.password) out.push(u.password, decodeURIComponent(u.password));
    } catch {
      // Checked when the config was read.
    }
  };
  if ('url' in ch) ofUrl(ch.url);
  if (ch.type === 'webhook' && ch.secret) out.push(ch.secret);
  if (ch.type === 'ntfy' && ch.token) out.push(ch.token);
  if (ch.type === 'pagerduty') out.push(ch.routingKey);
  if (ch.type === 'email') {
    ofUrl(ch.smtp);
    const v = ch.smtpPasswordEnv !== undefined ? env[ch.smtpPasswordEnv] : undefined;
    if (v) out.push(v);
  }
  // Longest first, so a URL is masked whole before its path is; tiny pieces ('/x') would mask common words.
  return [...new Set(out)].filter((s) => s.length >= 4).sort((a, b) => b.length - a.length);
}

/** `text` with every secret of the channel masked. */
export function redact(text: string, secrets: string[]): string {
  let out = text;
  for (const s of secrets) out = out.split(s).join('***');
  return out;
}
