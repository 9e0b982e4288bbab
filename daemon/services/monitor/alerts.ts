// Alert hooks: a JSON (or Slack-compatible) POST on incident open and resolve, retried with
// backoff in the background so that a slow or broken hook never delays a check.
import { request } from 'undici';
import type { AlertHook } from '../../../src/config/monitor.js';
import type { Incident } from '../../../src/store/monitor.js';
import type { Logger } from '../../logger.js';
import { dispatcherFor } from './checks/http.js';

export interface AlertEvent {
  event: 'incident.opened' | 'incident.resolved';
  instance: string;
  target: string;
  label: string;
  incident: Incident;
  /** A reminder of an incident still open (`remind_every`): its ordinal, from 1. */
  reminder?: number;
  /** Children (`depends_on`) down because of this target: their incidents sent no alert of their own. */
  affected?: string[];
}

export function alertBody(hook: AlertHook, e: AlertEvent): unknown {
  if (hook.format === 'slack') {
    const icon = e.event === 'incident.opened' ? ':red_circle:' : ':large_green_circle:';
    const what = e.event === 'incident.opened' ? `is down: ${e.incident.cause}` : `recovered after ${e.incident.duration_s ?? 0} s`;
    return { text: `${icon} ${e.label} (${e.target}) on ${e.instance} ${what}` };
  }
  return e;
}

export class AlertSender {
  constructor(
    private hooks: AlertHook[],
    private readonly logger: Logger,
    private readonly backoffMs = [1000, 5000, 30000],
  ) {}

  setHooks(hooks: AlertHook[]): void {
    this.hooks = hooks;
  }

  send(e: AlertEvent): void {
    for (const hook of this.hooks) void this.deliver(hook, e);
  }

  private async deliver(hook: AlertHook, e: AlertEvent): Promise<void> {
    const body = JSON.stringify(alertBody(hook, e));
    for (let attempt = 0; attempt <= this.backoffMs.length; attempt++) {
      try {
        const res = await request(hook.url, { method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': 'mkt-monitor' }, body, dispatcher: dispatcherFor(10_000), signal: AbortSignal.timeout(10_000) });
        await res.body.dump();
        if (res.statusCode < 300) return;
        throw new Error(`HTTP ${res.statusCode}`);
      } catch (err) {
        const wait = this.backoffMs[attempt];
        // The hook URL can hold a secret (Slack's does): log only its host.
        this.logger.warn({ hook: new URL(hook.url).host, event: e.event, target: e.target, attempt: attempt + 1, err: (err as Error).message }, wait === undefined ? 'alert hook failed; giving up' : 'alert hook failed; retrying');
        if (wait === undefined) return;
        await new Promise((r) => setTimeout(r, wait).unref());
      }
    }
  }
}
