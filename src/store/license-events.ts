// The license audit trail's types (component `license-audit`): what happened to a key (events),
// who is told (webhooks) and what is still to be sent (the outbox), with the one rule webhooks
// choose events by. The SQL lives in license-events-sql.ts, the delivery in
// daemon/services/marketplace/license/webhooks.ts.

/** Every kind of change to a license key the trail records (docs/license-events.md). */
export const LICENSE_EVENT_TYPES = [
  'license.activated',
  'license.lease_renewed',
  'license.released',
  'license.lease_expired',
  'license.deactivated',
  'license.suspended',
  'license.reinstated',
  'license.revoked',
  'license.expired',
  'license.entitlements_changed',
  'license.verification_refused',
] as const;

export type LicenseEventType = (typeof LICENSE_EVENT_TYPES)[number];

/** What a change records: written inside the transaction that makes the change. */
export interface LicenseEventInput {
  type: LicenseEventType;
  key_id: string;
  item_id: string;
  machine_id?: string | null;
  code?: string | null;
  /** When it happened, ms since the epoch. */
  at_ms: number;
  /** Anything else worth keeping (JSON); never a secret. */
  data?: Record<string, unknown>;
}

/** One stored event; an aggregated kind (lease renewals, refusals) counts its repeats in one row. */
export interface LicenseEvent {
  id: string;
  type: LicenseEventType;
  key_id: string;
  item_id: string;
  machine_id: string | null;
  code: string | null;
  /** The first occurrence, ms since the epoch. */
  at_ms: number;
  /** The latest occurrence (== at_ms unless aggregated). */
  last_ms: number;
  count: number;
  data: Record<string, unknown> | null;
}

/** A webhook as listed: never its secret. */
export interface LicenseWebhook {
  id: string;
  url: string;
  /** Exact event types, or prefixes written `license.*` (or `*`). */
  events: string[];
  created_at: string;
}

/** A webhook with its signing secret, for delivery (and shown once when added). */
export interface LicenseWebhookWithSecret extends LicenseWebhook {
  secret: string;
}

/** One claimed delivery: the event to send to one webhook. */
export interface OutboxDelivery {
  seq: number;
  webhook_id: string;
  url: string;
  secret: string;
  /** undefined when the event was pruned before it could be sent (the row is dropped). */
  event: LicenseEvent | undefined;
  attempts: number;
  /** When the row was written (database clock, ms). */
  created_ms: number;
}

/** What the audit job found and did in one run. */
export interface AuditRunResult {
  leasesExpired: number;
  keysExpired: number;
  eventsPruned: number;
}

/** A webhook's event pattern: an exact type, or a prefix ending in `*` (`license.*`, `*`). */
const PATTERN = /^[a-z0-9._-]*\*?$/;

/**
 * The patterns of `--events 'license.*,license.revoked'`: split on commas and spaces, checked,
 * deduplicated and sorted. An exact pattern must name a known type, a prefix must match one, so
 * a typo is refused instead of silently matching nothing. Throws a readable Error otherwise.
 */
export function parseEventPatterns(raw: string): string[] {
  const parts = raw.split(/[\s,]+/).filter((p) => p !== '');
  if (parts.length === 0) throw new Error('no event patterns given (for example --events "license.*")');
  for (const p of parts) {
    const known = p.endsWith('*') ? LICENSE_EVENT_TYPES.some((t) => t.startsWith(p.slice(0, -1))) : (LICENSE_EVENT_TYPES as readonly string[]).includes(p);
    if (!PATTERN.test(p) || !known) throw new Error(`unknown event pattern ${JSON.stringify(p)}: give a type such as license.revoked, or a prefix such as license.*`);
  }
  return [...new Set(parts)].sort();
}

/** Whether an event type matches one pattern (the same rule the outbox's SQL applies). */
export function patternMatches(pattern: string, type: string): boolean {
  return pattern.endsWith('*') ? type.startsWith(pattern.slice(0, -1)) : pattern === type;
}
