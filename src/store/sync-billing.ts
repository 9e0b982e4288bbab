// SyncStorageStore, the interface: blobs, upload sessions (one-shot grants and multipart),
// storage usage, checkouts, subscriptions and payment events of the sync area, as row operations
// and transactions. The adapter over SQL (both engines) is sync-billing-sql.ts.
import type { PricingConstants } from '../sync/pricing.js';
import type { Usage } from './sync-usage.js';

export type BillingInterval = 'month' | 'year';

export interface AppPlan extends PricingConstants {
  app_id: string;
  app_name: string;
  /** Storage a user of the app gets without a subscription. */
  free_bytes: number;
}

export type { Usage } from './sync-usage.js';

/**
 * `single`: a one-shot upload URL was issued; `open` → `completed`: a multipart session. Confirm
 * claims one (`promoting`) and settles it `confirmed` or `rejected` (over the cap, or another
 * upload of the hash won); `aborted` / `reaped` end the rest. See the sync area's uploads.ts.
 */
export type UploadState = 'single' | 'open' | 'completed' | 'promoting' | 'confirmed' | 'aborted' | 'reaped' | 'rejected';

export interface UploadSession {
  id: string;
  app_id: string;
  user_id: string;
  hash: string;
  size_bytes: number;
  part_size: number;
  part_count: number;
  state: UploadState;
  store_upload_id: string | null;
  /** This upload's own object (null: a session from before per-upload objects, at the blob's key). */
  object_key: string | null;
  /** One-shot grants: when the signed URL stops working (ms). */
  expires_ms: number | null;
  created_at: string;
  last_activity_ms: number;
}

export interface BlobRecord {
  size_bytes: number;
  created_at: string;
  /** The object holding the blob's bytes (null: a blob from before per-upload objects, at blobKey). */
  object_key: string | null;
}

export interface SubscriptionRecord {
  app_id: string;
  user_id: string;
  status: string;
  cap_bytes: number;
  pending_cap_bytes: number | null;
  interval: BillingInterval;
  price_cents: number;
  provider_subscription_id: string;
  current_period_start: string;
  current_period_end: string;
  last_event_created: number;
  updated_at: string;
}

export interface CheckoutRecord {
  id: string;
  app_id: string;
  user_id: string;
  cap_bytes: number;
  interval: BillingInterval;
  price_cents: number;
  /** `open` until the payment processor reports it completed. */
  state: 'open' | 'completed';
  created_at: string;
}

/** A verified payment-processor event, reduced to what the sync area acts on. */
export type BillingEvent = { id: string; type: string; created: number } & (
  | {
      kind: 'checkout_completed';
      checkout_id: string;
      provider_subscription_id: string;
      current_period_start: string;
      current_period_end: string;
    }
  | { kind: 'renewed'; provider_subscription_id: string; current_period_start: string; current_period_end: string; price_cents?: number }
  | { kind: 'canceled'; provider_subscription_id: string }
  | { kind: 'ignored' }
);

/** What became of an event: applied, seen before (same id), older than the state it would change, or not ours. */
export type EventOutcome = 'applied' | 'duplicate' | 'stale' | 'ignored';

export type ConfirmOutcome = { kind: 'created' | 'exists'; usage: Usage } | { kind: 'over_cap'; usage: Usage } | { kind: 'gone' };

/** One part the object store holds of an open multipart session (its bytes bill until the session ends). */
export interface StoredPartRow {
  part_number: number;
  size_bytes: number;
  etag: string;
}

/**
 * Row operations of the storage tables: reads, inserts and conditional updates, no rules. The
 * rules (quota at reserve and confirm, pending-upload limits, webhook events applied once and
 * never back in time) live in the sync area's domain modules (uploads.ts, subscriptions.ts), which run
 * them inside `SyncStorageStore.transaction` on the rows of that transaction.
 */
export interface StorageRows {
  /**
   * Inside a transaction: serialises every transaction that locks the same key until this one
   * ends (SqlExecutor.lock). Keys: `sync:<app>:<user>` before weighing an owner's usage (the
   * changelog push takes it too), `sync-upload:<id>` for one upload's parts and state.
   */
  lock(key: string): Promise<void>;
  app(appId: string): Promise<AppPlan | undefined>;
  /** By id, or by name compared case-insensitively (ASCII); the id wins. */
  appByNameOrId(nameOrId: string): Promise<AppPlan | undefined>;
  blob(appId: string, userId: string, hash: string): Promise<BlobRecord | undefined>;
  insertBlob(b: { app_id: string; user_id: string; hash: string; size_bytes: number; created_at: string; object_key: string }): Promise<void>;
  usage(appId: string, userId: string): Promise<Usage>;
  /** Uploads of a hash that reserve room (granted, promoting, rejected, open or completed). */
  pendingUploads(appId: string, userId: string, hash: string): Promise<number>;
  /** Inserts an upload (and its object-store upload id, when it has one). */
  insertUpload(s: UploadSession): Promise<void>;
  upload(id: string): Promise<UploadSession | undefined>;
  /** The session of an object-store upload id. */
  uploadByStoreId(storeUploadId: string): Promise<UploadSession | undefined>;
  /** Uploads of a hash that may hold bytes to confirm (granted or completed), newest first. */
  confirmable(appId: string, userId: string, hash: string): Promise<UploadSession[]>;
  /** Open multipart sessions by id after `afterId` (for the billing refresh of their parts). */
  openUploads(limit: number, afterId?: string): Promise<UploadSession[]>;
  /** Unsettled uploads (granted, open, completed or promoting) idle since before `beforeMs`, oldest first. */
  idleUploads(beforeMs: number, limit: number): Promise<UploadSession[]>;
  /**
   * Granted, rejected, completed (any) and confirmed one-shot uploads whose URL expired before
   * `beforeMs`, by id after `afterId`.
   */
  settleCandidates(beforeMs: number, limit: number, afterId: string): Promise<UploadSession[]>;
  /** Moves an upload from one of `from` to `to` (one conditional update); false when it was in another state. */
  setUploadState(id: string, from: readonly UploadState[], to: UploadState, nowMs: number): Promise<boolean>;
  /** Activity on a session that is still open; false when it is not. */
  touchOpenUpload(id: string, nowMs: number): Promise<boolean>;
  /** Replaces the recorded parts of an upload (none: clears them). */
  replaceParts(id: string, parts: readonly StoredPartRow[]): Promise<void>;
  /** A confirmed grant's staging object is gone: it needs no more settling. */
  clearExpiry(id: string): Promise<void>;

  subscription(appId: string, userId: string): Promise<SubscriptionRecord | undefined>;
  subscriptionByProvider(providerSubscriptionId: string): Promise<SubscriptionRecord | undefined>;
  /** Subscriptions of an app and/or user (every one without a filter), by app and user. */
  subscriptions(filter: { app_id?: string; user_id?: string }): Promise<SubscriptionRecord[]>;
  /** Writes the (app, user)'s subscription as given, inserting or replacing it. */
  putSubscription(s: SubscriptionRecord): Promise<void>;
  /** Records (or clears, with null) the cap of the next period of an active subscription; false when there is none. */
  setPendingCap(appId: string, userId: string, capBytes: number | null, at: string): Promise<boolean>;
  createCheckout(c: CheckoutRecord): Promise<void>;
  checkout(id: string): Promise<CheckoutRecord | undefined>;
  /** Moves an open checkout to completed; false when it was completed already. */
  completeCheckout(id: string): Promise<boolean>;
  /** Records a payment event's id; false when it was recorded before (a redelivery). */
  recordEvent(id: string, type: string, at: string): Promise<boolean>;
}

/** The storage store: row operations on the database, and transactions that bind them to one. */
export interface SyncStorageStore extends StorageRows {
  /**
   * Runs `fn` on the rows of one transaction (committed when it resolves). On PostgreSQL it may
   * run again after a serialization failure, so `fn` touches nothing but `tx`. Inside, call only
   * `tx`: a store method outside the transaction would wait for it on SQLite.
   */
  transaction<T>(fn: (tx: StorageRows) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** The end of a billing period that starts at `iso`. */
export function addInterval(iso: string, interval: BillingInterval): string {
  const d = new Date(iso);
  if (interval === 'year') d.setUTCFullYear(d.getUTCFullYear() + 1);
  else d.setUTCMonth(d.getUTCMonth() + 1);
  return d.toISOString();
}
