// Holds back the alerts of silenced targets: wraps whatever sends alerts and, for each alert,
// asks the store whether a silence holds the target now. A silenced alert is logged and put on
// the incident's timeline instead of being sent; the engine claimed it already (so no instance
// of a cluster sends it later either).
import type { MonitorStore } from '../../../src/store/monitor.js';
import type { Logger } from '../../logger.js';
import type { AlertEvent } from './alert-event.js';

/** What the engine calls to alert: the AlertSender, or this gate around it. */
export interface AlertSink {
  send(e: AlertEvent): void;
}

export interface SilenceGateOptions {
  store: Pick<MonitorStore, 'silences' | 'addIncidentEvent'>;
  inner: AlertSink;
  logger: Logger;
  now(): number;
}

export class SilenceGate implements AlertSink {
  /** Alerts being decided; `settled()` waits for them (tests, shutdown). */
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly opts: SilenceGateOptions) {}

  send(e: AlertEvent): void {
    const p = this.route(e)
      .catch((err: Error) => this.opts.logger.error({ target: e.target, event: e.event, err: err.message }, 'alert not handed over'))
      .finally(() => this.pending.delete(p));
    this.pending.add(p);
  }

  /** Resolves once every alert handed over so far is sent on or held back. */
  async settled(): Promise<void> {
    await Promise.all([...this.pending]);
  }

  private async route(e: AlertEvent): Promise<void> {
    const { store, inner, logger, now } = this.opts;
    let at = now();
    let silence: Awaited<ReturnType<typeof store.silences.activeFor>>;
    try {
      silence = await store.silences.activeFor(e.target, at);
    } catch (err) {
      // Better an alert during a silence than a lost one: the store failing is no reason for quiet.
      logger.warn({ target: e.target, event: e.event, err: (err as Error).message }, 'reading silences failed; sending the alert');
      inner.send(e);
      return;
    }
    if (!silence) {
      inner.send(e);
      return;
    }
    logger.info({ target: e.target, event: e.event, incident: e.incident.id, silence: silence.id, ...(e.reminder !== undefined ? { reminder: e.reminder } : {}) }, 'alert silenced');
    at = now();
    const what = e.reminder !== undefined ? `reminder ${e.reminder}` : e.event;
    await store.addIncidentEvent(e.incident.id, 'silenced', at, `${what} not sent: ${silence.reason} (${silence.id})`).catch((err: Error) => logger.warn({ target: e.target, incident: e.incident.id, err: err.message }, 'recording the silenced alert on the incident timeline failed'));
  }
}
