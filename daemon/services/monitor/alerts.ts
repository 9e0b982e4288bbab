// Alerts on incident open, reminder and resolve: each to the channels its target routes to, in the
// background (a slow or broken channel never delays a check), retried with backoff. A failing
// channel is logged once per incident, by name only; each channel's last send is kept in the store
// and each incident's timeline says which channels were alerted and which failed.
import type { AlertChannel, MonitorConfig } from '../../../src/config/monitor.js';
import type { MonitorStore } from '../../../src/store/monitor.js';
import type { Logger } from '../../logger.js';
import { channelSecrets, deliver, redact, SendError, SEND_TIMEOUT_MS, type SendContext } from './channels/index.js';
import type { AlertEvent } from './alert-event.js';

export type { AlertEvent } from './alert-event.js';

/** What of the config decides where alerts go: each target's `alerts:` names, and the links. */
export type AlertRouting = Pick<MonitorConfig, 'targets' | 'publicUrl'>;

export interface AlertSenderDeps {
  /** Where each channel's last send and the incidents' timeline events are written. */
  store?: Pick<MonitorStore, 'addIncidentEvent' | 'alertSends'>;
  /** The routing and links; without it every alert goes to every channel, with no links. */
  config?: AlertRouting;
  /** Read for `smtp_password_env`. */
  env?: NodeJS.ProcessEnv;
  now?: () => number;
  /** One attempt's limit (10 s). */
  timeoutMs?: number;
  /** CA certificates to trust besides the system's (SMTP over TLS to a private CA). */
  tlsCa?: string;
}

/** The outcome of one channel's send, all attempts together. */
export interface ChannelOutcome {
  channel: string;
  ok: boolean;
  attempts: number;
  at: number;
  error?: string;
}

/** How many (channel, incident) pairs are remembered as already logged: old ones are forgotten first. */
const LOGGED_MAX = 10_000;

export class AlertSender {
  private routing: AlertRouting | undefined;
  /** `channel \0 incident id` of failures already logged: once per incident, not per retry. */
  private readonly logged = new Set<string>();
  private readonly inFlight = new Set<Promise<ChannelOutcome[]>>();

  constructor(
    private channels: AlertChannel[],
    private readonly logger: Logger,
    private readonly backoffMs = [1000, 5000, 30000],
    private readonly deps: AlertSenderDeps = {},
  ) {
    this.routing = deps.config;
  }

  /** A reload: the new channels and routing; sends in flight finish with the old. */
  setHooks(channels: AlertChannel[], config?: AlertRouting): void {
    this.channels = channels;
    if (config) this.routing = config;
  }

  /** Every configured channel, in config order. */
  list(): readonly AlertChannel[] {
    return this.channels;
  }

  /** The channels a target's alerts go to: its `alerts:` names, or every channel when it has none. */
  channelsFor(target: string): AlertChannel[] {
    const names = this.routing?.targets.find((t) => t.name === target)?.alerts;
    return names === undefined ? this.channels : this.channels.filter((c) => names.includes(c.name));
  }

  send(e: AlertEvent): void {
    void this.sendNow(e);
  }

  /** Sends to every channel of the target; resolves when each has succeeded or given up. */
  sendNow(e: AlertEvent): Promise<ChannelOutcome[]> {
    const p = this.sendAll(e).finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
    return p;
  }

  /** Resolves once the sends in flight have finished (tests; a clean shutdown). */
  async idle(): Promise<void> {
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
  }

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  private async sendAll(e: AlertEvent): Promise<ChannelOutcome[]> {
    const channels = this.channelsFor(e.target);
    if (channels.length === 0) return [];
    const outcomes = await Promise.all(channels.map((ch) => this.deliverWithRetry(ch, e)));
    await this.timeline(e, outcomes);
    return outcomes;
  }

  private async deliverWithRetry(ch: AlertChannel, e: AlertEvent): Promise<ChannelOutcome> {
    const env = this.deps.env ?? process.env;
    const secrets = channelSecrets(ch, env);
    let error = '';
    let attempts = 0;
    for (let attempt = 0; attempt <= this.backoffMs.length; attempt++) {
      attempts++;
      const ctx: SendContext = { now: this.now(), env, timeoutMs: this.deps.timeoutMs ?? SEND_TIMEOUT_MS, ...(this.routing?.publicUrl ? { publicUrl: this.routing.publicUrl } : {}), ...(this.deps.tlsCa ? { tlsCa: this.deps.tlsCa } : {}) };
      try {
        await deliver(ch, e, ctx);
        return await this.finish(ch, e, { channel: ch.name, ok: true, attempts, at: this.now() });
      } catch (err) {
        // A channel's own errors are written to be logged; anything else is masked all the same.
        error = redact(err instanceof SendError ? err.message : `failed: ${(err as Error).message}`, secrets);
        this.logOnce(ch, e, error);
        const wait = this.backoffMs[attempt];
        if (wait === undefined) break;
        await new Promise((r) => setTimeout(r, wait).unref());
      }
    }
    return this.finish(ch, e, { channel: ch.name, ok: false, attempts, at: this.now(), error });
  }

  /** The first failure of a channel for an incident is logged; its retries and later events are not. */
  private logOnce(ch: AlertChannel, e: AlertEvent, error: string): void {
    const key = `${ch.name}\0${e.incident.id}`;
    if (this.logged.has(key)) return;
    this.logged.add(key);
    if (this.logged.size > LOGGED_MAX) this.logged.delete(this.logged.values().next().value!);
    // The channel's name only: its URL may be the secret (Slack's, Discord's), its userinfo a password.
    this.logger.warn({ channel: ch.name, type: ch.type, event: e.event, target: e.target, incident: e.incident.id, err: error, retries: this.backoffMs.length }, 'alert channel failing');
  }

  private async finish(ch: AlertChannel, e: AlertEvent, o: ChannelOutcome): Promise<ChannelOutcome> {
    try {
      await this.deps.store?.alertSends.record({ channel: ch.name, event: e.reminder !== undefined ? 'incident.reminder' : e.event, target: e.target, incidentId: e.incident.id, at: o.at, ok: o.ok, attempts: o.attempts, ...(o.error !== undefined ? { error: o.error } : {}) });
    } catch (err) {
      this.logger.warn({ channel: ch.name, err: (err as Error).message }, 'recording an alert send failed');
    }
    return o;
  }

  /** `alerted` with the channels that took the alert, `alert_failed` for each that did not. */
  private async timeline(e: AlertEvent, outcomes: ChannelOutcome[]): Promise<void> {
    const store = this.deps.store;
    if (!store) return;
    const prefix = e.event === 'incident.resolved' ? 'resolved: ' : e.reminder !== undefined ? `reminder ${e.reminder}: ` : '';
    try {
      const ok = outcomes.filter((o) => o.ok);
      if (ok.length) await store.addIncidentEvent(e.incident.id, 'alerted', Math.max(...ok.map((o) => o.at)), prefix + ok.map((o) => o.channel).join(', '));
      for (const o of outcomes.filter((x) => !x.ok)) await store.addIncidentEvent(e.incident.id, 'alert_failed', o.at, `${prefix}${o.channel}: ${o.error ?? 'failed'}`);
    } catch (err) {
      this.logger.warn({ incident: e.incident.id, err: (err as Error).message }, 'recording the alert in the incident timeline failed');
    }
  }
}
