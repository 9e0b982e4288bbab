// PagerDuty Events API v2: `trigger` when a target goes down (a reminder triggers again, which
// PagerDuty folds into the open alert), `resolve` when it recovers, one dedup_key per incident.
import type { PagerDutyChannel } from '../../../../src/config/monitor-alerts.js';
import type { AlertEvent } from '../alert-event.js';
import { post } from './http.js';
import { headline, links, oneLine, phaseOf, type SendContext } from './text.js';

/** Stable for one incident of one target on one monitor: the trigger and its resolve share it. */
export function dedupKey(e: AlertEvent): string {
  return `mkt-${oneLine(e.instance, 100)}-${e.target}-${e.incident.id}`.slice(0, 255);
}

export function pagerDutyBody(ch: PagerDutyChannel, e: AlertEvent, ctx: Pick<SendContext, 'publicUrl'>): Record<string, unknown> {
  const resolve = phaseOf(e) === 'recovered';
  const body: Record<string, unknown> = { routing_key: ch.routingKey, event_action: resolve ? 'resolve' : 'trigger', dedup_key: dedupKey(e) };
  if (!resolve) {
    body.payload = {
      summary: `${headline(e)}: ${oneLine(e.incident.cause, 700)}`.slice(0, 1024),
      severity: ch.severity,
      source: oneLine(e.instance),
      component: e.target,
      timestamp: e.incident.started_at,
      custom_details: { target: e.target, label: oneLine(e.label), incident: e.incident.id, cause: e.incident.cause, ...(e.reminder !== undefined ? { reminder: e.reminder } : {}), ...(e.affected?.length ? { affected: e.affected } : {}) },
    };
    const l = links(e, ctx.publicUrl);
    if (l) body.links = [{ href: l.status, text: 'status' }, { href: l.dashboard, text: 'dashboard' }];
  }
  return body;
}

export async function sendPagerDuty(ch: PagerDutyChannel, e: AlertEvent, ctx: SendContext): Promise<void> {
  await post(ch.url, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(pagerDutyBody(ch, e, ctx)), timeoutMs: ctx.timeoutMs });
}
