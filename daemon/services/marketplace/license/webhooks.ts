// Webhook delivery of license events from the durable outbox (license-events-sql.ts): each row is
// claimed for a while (so instances never send one row at once, and a crashed claim is sent
// again), POSTed as signed JSON, deleted on a 2xx, else retried with exponential backoff for a
// day and then given up. At least once, in order per (webhook, key). docs/license-events.md
// shows a receiver.
import { createHmac } from 'node:crypto';
import type { Logger } from '../../../logger.js';
import type { SqlLicenseAuditStore } from '../../../../src/store/license-events-sql.js';
import type { LicenseEvent, OutboxDelivery } from '../../../../src/store/license-events.js';
import type { Clock } from '../../../../src/util/clock.js';
import { formatTimestamp } from '../../../../src/util/time.js';
import { StoreUnavailableError } from '../../../../src/store/sql.js';

export const SIGNATURE_HEADER = 'Mkt-Signature';
export const EVENT_ID_HEADER = 'Mkt-Event-Id';

export const DEFAULT_WEBHOOK_POLL_MS = 1000;
export const DEFAULT_RETRY_BASE_MS = 10_000;
export const DEFAULT_RETRY_CAP_MS = 3_600_000;
export const DEFAULT_GIVE_UP_AFTER_MS = 86_400_000;
/** The whole of one send: connecting, the request, the answer's head and body. */
export const SEND_TIMEOUT_MS = 10_000;
/** Deliveries claimed (and sent in parallel) at a time by one instance. */
const BATCH = 20;

/** What a receiver gets: the event as of sending (an aggregate's count so far). */
export interface WebhookPayload {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

export function webhookPayload(e: LicenseEvent): WebhookPayload {
  return {
    id: e.id,
    type: e.type,
    created_at: formatTimestamp(e.at_ms),
    // The fixed fields last, so an event's extra data can never stand in for them.
    data: { ...e.data, key_id: e.key_id, item_id: e.item_id, machine_id: e.machine_id, code: e.code, count: e.count, last_at: formatTimestamp(e.last_ms) },
  };
}

/**
 * Stripe's scheme: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, keyed with the
 * webhook's whole secret (`whsec_…`) as UTF-8. The time inside the signature lets a receiver
 * refuse a replay of an old delivery; the event id lets it drop a repeat.
 */
export function signatureHeader(secret: string, unixSeconds: number, body: string): string {
  const v1 = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${v1}`;
}

/** The backoff before attempt `attempts + 1`: base, doubling, capped. */
export function retryDelayMs(attempts: number, baseMs: number, capMs: number): number {
  return Math.min(capMs, baseMs * 2 ** Math.min(Math.max(attempts - 1, 0), 30));
}

/** A URL's host for logs: never its path or query, where a receiver may have put a token. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(invalid url)';
  }
}

export interface WebhookDeliveryOptions {
  audit: SqlLicenseAuditStore;
  clock: Clock;
  logger: Logger;
  pollMs?: number;
  retryBaseMs?: number;
  retryCapMs?: number;
  giveUpAfterMs?: number;
  sendTimeoutMs?: number;
}

export class WebhookDelivery {
  private readonly pollMs: number;
  private readonly retryBaseMs: number;
  private readonly retryCapMs: number;
  private readonly giveUpAfterMs: number;
  private readonly sendTimeoutMs: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private started = false;
  private stopped = false;

  constructor(private readonly o: WebhookDeliveryOptions) {
    this.pollMs = o.pollMs ?? DEFAULT_WEBHOOK_POLL_MS;
    this.retryBaseMs = o.retryBaseMs ?? DEFAULT_RETRY_BASE_MS;
    this.retryCapMs = o.retryCapMs ?? DEFAULT_RETRY_CAP_MS;
    this.giveUpAfterMs = o.giveUpAfterMs ?? DEFAULT_GIVE_UP_AFTER_MS;
    this.sendTimeoutMs = o.sendTimeoutMs ?? SEND_TIMEOUT_MS;
  }

  /** Polls the outbox until stop(). */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.schedule(0);
  }

  /** Stops polling and waits for the sends under way (each is bounded by the send timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.drain()
        .then(() => undefined)
        // A lost database is logged once by the store (PgDatabase.logAvailability), not once a poll.
        .catch((err: unknown) => this.o.logger[err instanceof StoreUnavailableError ? 'debug' : 'warn']({ err: (err as Error).message }, 'license webhooks: cannot read the outbox; retrying'))
        .finally(() => {
          this.running = undefined;
          this.schedule(this.pollMs);
        });
    }, ms);
    this.timer.unref();
  }

  /** Sends what is due until nothing is; returns how many sends were tried. */
  async drain(): Promise<number> {
    let tried = 0;
    while (!this.stopped) {
      // A claim outlasts the send's timeout, so it lapses only when its instance died.
      const batch = await this.o.audit.claimDeliveries(BATCH, this.sendTimeoutMs + 50_000);
      if (batch.length === 0) break;
      // Each is the oldest of its (webhook, key): they may go in parallel without reordering a key.
      await Promise.all(batch.map((d) => this.deliver(d)));
      tried += batch.length;
    }
    return tried;
  }

  private async deliver(d: OutboxDelivery): Promise<void> {
    if (!d.event) {
      // Pruned before it could be sent (it outlived the retention): nothing left to say.
      await this.o.audit.delivered(d.seq, d.attempts);
      return;
    }
    const outcome = await this.send(d.url, d.secret, d.event);
    if (outcome === undefined) {
      await this.o.audit.delivered(d.seq, d.attempts);
      return;
    }
    const host = hostOf(d.url);
    const result = await this.o.audit.failed(d.seq, retryDelayMs(d.attempts, this.retryBaseMs, this.retryCapMs), this.giveUpAfterMs, outcome);
    if (result === 'given-up') {
      this.o.logger.error({ webhook_id: d.webhook_id, host, event_id: d.event.id, attempts: d.attempts, last_error: outcome }, 'license webhook delivery given up');
    } else {
      this.o.logger.warn({ webhook_id: d.webhook_id, host, event_id: d.event.id, attempt: d.attempts, error: outcome }, 'license webhook delivery failed; will retry');
    }
  }

  /** undefined when the receiver answered 2xx; else why not, in words safe to log. */
  private async send(url: string, secret: string, e: LicenseEvent): Promise<string | undefined> {
    const body = JSON.stringify(webhookPayload(e));
    const t = Math.floor(this.o.clock.now() / 1000);
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'mkt-webhooks',
          [SIGNATURE_HEADER]: signatureHeader(secret, t, body),
          [EVENT_ID_HEADER]: e.id,
        },
        body,
        // A redirect is an answer, not a place to go: the secret-signed body stays with the URL given.
        redirect: 'manual',
        signal: AbortSignal.timeout(this.sendTimeoutMs),
      });
      // Read the answer (within the timeout) so the connection can be reused; its content is ignored.
      await res.arrayBuffer();
      return res.status >= 200 && res.status < 300 ? undefined : `HTTP ${res.status}`;
    } catch (err) {
      const e2 = err as Error & { cause?: { code?: string } };
      if (e2.name === 'TimeoutError') return `no answer within ${this.sendTimeoutMs} ms`;
      return e2.cause?.code ?? e2.name;
    }
  }
}
