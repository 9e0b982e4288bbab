// Chat incoming webhooks: Slack (`{text}`), Discord (`{content}`) and Microsoft Teams (an
// Adaptive Card message, as Teams workflows take). One line, plus reminder and affected children.
import type { ChatChannel } from '../../../../src/config/monitor-alerts.js';
import type { AlertEvent } from '../alert-event.js';
import { post } from './http.js';
import { duration, downSeconds, links, oneLine, phaseOf, type SendContext } from './text.js';

/** The message in words: `🔴 API (api) on mon-1 is down: HTTP 500`. */
export function chatText(e: AlertEvent, ctx: Pick<SendContext, 'now' | 'publicUrl'>, icons: { down: string; up: string }): string {
  const label = oneLine(e.label);
  const phase = phaseOf(e);
  const what =
    phase === 'recovered'
      ? `recovered after ${duration(downSeconds(e, ctx.now))}`
      : `${phase === 'reminder' ? `is still down (reminder ${e.reminder})` : 'is down'}: ${oneLine(e.incident.cause, 500)}`;
  let text = `${phase === 'recovered' ? icons.up : icons.down} ${label} (${e.target}) on ${oneLine(e.instance)} ${what}`;
  if (e.affected?.length) text += `\nAffected: ${e.affected.join(', ')}`;
  const l = links(e, ctx.publicUrl);
  if (l) text += `\n${l.status}`;
  return text;
}

/** Slack's mrkdwn reads `<`, `>` and `&` as markup: a label must not make a link of its own. */
function slackEscape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function chatBody(ch: Pick<ChatChannel, 'type'>, e: AlertEvent, ctx: Pick<SendContext, 'now' | 'publicUrl'>): unknown {
  switch (ch.type) {
    case 'slack':
      return { text: slackEscape(chatText(e, ctx, { down: ':red_circle:', up: ':large_green_circle:' })) };
    case 'discord':
      // Discord caps content at 2000 characters; no @everyone from a label.
      return { content: chatText(e, ctx, { down: '🔴', up: '🟢' }).slice(0, 2000), allowed_mentions: { parse: [] } };
    case 'teams':
      return {
        type: 'message',
        attachments: [
          {
            contentType: 'application/vnd.microsoft.card.adaptive',
            content: { $schema: 'http://adaptivecards.io/schemas/adaptive-card.json', type: 'AdaptiveCard', version: '1.4', body: [{ type: 'TextBlock', wrap: true, text: chatText(e, ctx, { down: '🔴', up: '🟢' }) }] },
          },
        ],
      };
  }
}

export async function sendChat(ch: ChatChannel, e: AlertEvent, ctx: SendContext): Promise<void> {
  await post(ch.url, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(chatBody(ch, e, ctx)), timeoutMs: ctx.timeoutMs });
}
