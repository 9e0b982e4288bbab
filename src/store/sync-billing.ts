// SyncStorageStore: blobs, upload sessions (one-shot grants and multipart), storage usage,
// checkouts, subscriptions and payment events of the sync area. Interface first, then the
// SQLite adapter over the `sync` tables (sync-schema.ts) plus its own component `sync-storage`.
import { migrate, type Db, type Migration } from './sqlite.js';
import { migrateSync } from './sync-schema.js';
import { quoteCents, type PricingConstants } from '../sync/pricing.js';
import { UsageReader, type Usage } from './sync-usage.js';

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

export type ReserveOutcome = { kind: 'reserved' } | { kind: 'exists' } | { kind: 'refused'; reason: string; usage: Usage };

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

export interface SyncStorageStore {
  app(appId: string): Promise<AppPlan | undefined>;
  appByNameOrId(nameOrId: string): Promise<AppPlan | undefined>;
  blob(appId: string, userId: string, hash: string): Promise<BlobRecord | undefined>;
  usage(appId: string, userId: string): Promise<Usage>;
  /**
   * Records upload `s` (a one-shot grant or a multipart session) unless the blob exists, in one
   * transaction with `admit` (the domain's quota rule), which gets the usage and how many
   * uploads of this hash are pending and answers a refusal reason or undefined.
   */
  reserveUpload(s: UploadSession, admit: (usage: Usage, pendingForBlob: number) => string | undefined): Promise<ReserveOutcome>;
  /** Uploads of a hash that may hold bytes to confirm (granted or completed), newest first. */
  confirmable(appId: string, userId: string, hash: string): Promise<UploadSession[]>;
  /**
   * Records the blob from the `promoting` upload `upload_id` (its object, its authoritative size)
   * unless it exists, in one transaction with `admit(usage, released)`, where `released` is the
   * upload's own reservation. The upload becomes `confirmed`, or `rejected` (over the cap, or
   * the blob already exists); `gone` when the upload is no longer `promoting`.
   */
  confirmBlob(input: { upload_id: string; app_id: string; user_id: string; hash: string; size_bytes: number; object_key: string; at: string; now_ms: number }, admit: (usage: Usage, released: number) => boolean): Promise<ConfirmOutcome>;
  upload(id: string): Promise<UploadSession | undefined>;
  /** Activity on an open session; `parts` (when given) is what the object store holds now. */
  touchUpload(id: string, nowMs: number, parts?: { part_number: number; size_bytes: number; etag: string }[]): Promise<void>;
  /** Records what the object store holds of an open session, without counting it as activity. */
  recordParts(id: string, parts: { part_number: number; size_bytes: number; etag: string }[]): Promise<void>;
  /** The session of an object-store upload id. */
  uploadByStoreId(storeUploadId: string): Promise<UploadSession | undefined>;
  /** Open multipart sessions, oldest activity first (for the billing refresh of their parts). */
  openUploads(limit: number, afterId?: string): Promise<UploadSession[]>;
  /** Moves a session from one of `from` to `to`; false when it was in another state. */
  moveUpload(id: string, from: UploadState[], to: UploadState, nowMs: number): Promise<boolean>;
  /** Unsettled uploads (granted, open, completed or promoting) idle since before `beforeMs`. */
  idleUploads(beforeMs: number, limit: number): Promise<UploadSession[]>;
  /**
   * Granted, rejected, completed (any) and confirmed one-shot uploads whose URL expired before
   * `beforeMs`, by id after `afterId`.
   */
  settleCandidates(beforeMs: number, limit: number, afterId: string): Promise<UploadSession[]>;
  /** A confirmed grant's staging object is gone: it needs no more settling. */
  clearExpiry(id: string): Promise<void>;

  subscription(appId: string, userId: string): Promise<SubscriptionRecord | undefined>;
  createCheckout(c: CheckoutRecord): Promise<void>;
  checkout(id: string): Promise<CheckoutRecord | undefined>;
  /** Applies a verified event at most once (event id), never going back in time. */
  applyEvent(e: BillingEvent, at: string): Promise<EventOutcome>;
  /** Records (or clears, with null) the cap that takes effect at the next renewal. */
  queueCap(appId: string, userId: string, capBytes: number | null, at: string): Promise<SubscriptionRecord | undefined>;
  /** Subscriptions of an app (or every app) for `mkt admin billing renew`. */
  subscriptions(filter: { app_id?: string; user_id?: string }): Promise<SubscriptionRecord[]>;
  close(): Promise<void>;
}

const MIGRATIONS: Migration[] = [
  // The object store's own id of a multipart upload (S3's UploadId can be long).
  `CREATE TABLE sync_upload_objects (
     upload_id TEXT PRIMARY KEY,
     store_upload_id TEXT NOT NULL
   ) WITHOUT ROWID;
   CREATE INDEX sync_uploads_idle ON sync_uploads (state, last_activity_ms);
   CREATE INDEX sync_uploads_hash ON sync_uploads (app_id, user_id, hash, state);
   CREATE INDEX sync_subscriptions_provider ON sync_subscriptions (provider_subscription_id);
   CREATE INDEX sync_upload_objects_store ON sync_upload_objects (store_upload_id);`,
  // Issue 11: every upload writes its own object, and a blob records which one holds its bytes;
  // one-shot grants remember when their URL expires (they reserve room until then).
  `ALTER TABLE sync_uploads ADD COLUMN object_key TEXT;
   ALTER TABLE sync_uploads ADD COLUMN expires_ms INTEGER;
   ALTER TABLE sync_blobs ADD COLUMN object_key TEXT;`,
];

function addInterval(iso: string, interval: BillingInterval): string {
  const d = new Date(iso);
  if (interval === 'year') d.setUTCFullYear(d.getUTCFullYear() + 1);
  else d.setUTCMonth(d.getUTCMonth() + 1);
  return d.toISOString();
}
export { addInterval };

export class SqliteSyncStorageStore implements SyncStorageStore {
  private readonly s;
  private readonly usageReader: UsageReader;

  constructor(private readonly db: Db) {
    migrateSync(db);
    migrate(db, 'sync-storage', MIGRATIONS);
    const APP_COLS = `id AS app_id, name AS app_name, min_charge_cents, per_gb_tenths_of_cent_per_month, annual_multiplier, min_cap_bytes, max_cap_bytes, free_bytes`;
    const UPLOAD_COLS = `u.id, u.app_id, u.user_id, u.hash, u.size_bytes, u.part_size, u.part_count, u.state, o.store_upload_id, u.object_key, u.expires_ms, u.created_at, u.last_activity_ms`;
    this.usageReader = UsageReader.for(db);
    this.s = {
      app: db.prepare(`SELECT ${APP_COLS} FROM sync_apps WHERE id = ?`),
      appByName: db.prepare(`SELECT ${APP_COLS} FROM sync_apps WHERE id = ? OR name = ? ORDER BY id = ? DESC LIMIT 1`),
      blob: db.prepare('SELECT size_bytes, created_at, object_key FROM sync_blobs WHERE app_id = ? AND user_id = ? AND hash = ?'),
      subscription: db.prepare('SELECT * FROM sync_subscriptions WHERE app_id = ? AND user_id = ?'),
      subByProvider: db.prepare('SELECT * FROM sync_subscriptions WHERE provider_subscription_id = ?'),
      insertBlob: db.prepare('INSERT INTO sync_blobs (app_id, user_id, hash, size_bytes, created_at, object_key) VALUES (?, ?, ?, ?, ?, ?)'),
      pendingForBlob: db.prepare(`SELECT COUNT(*) FROM sync_uploads WHERE app_id = ? AND user_id = ? AND hash = ? AND state IN ('single', 'promoting', 'rejected', 'open', 'completed')`).pluck(),
      confirmable: db.prepare(
        `SELECT ${UPLOAD_COLS} FROM sync_uploads u LEFT JOIN sync_upload_objects o ON o.upload_id = u.id
         WHERE u.app_id = ? AND u.user_id = ? AND u.hash = ? AND u.state IN ('single', 'completed') ORDER BY u.last_activity_ms DESC, u.id LIMIT 16`,
      ),
      setState: db.prepare('UPDATE sync_uploads SET state = ?, last_activity_ms = ? WHERE id = ?'),
      insertUpload: db.prepare(
        `INSERT INTO sync_uploads (id, app_id, user_id, hash, size_bytes, part_size, part_count, state, created_at, last_activity_ms, object_key, expires_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      insertUploadObject: db.prepare('INSERT INTO sync_upload_objects (upload_id, store_upload_id) VALUES (?, ?)'),
      upload: db.prepare(`SELECT ${UPLOAD_COLS} FROM sync_uploads u LEFT JOIN sync_upload_objects o ON o.upload_id = u.id WHERE u.id = ?`),
      uploadByStore: db.prepare(`SELECT ${UPLOAD_COLS} FROM sync_upload_objects o JOIN sync_uploads u ON u.id = o.upload_id WHERE o.store_upload_id = ?`),
      openUploads: db.prepare(
        `SELECT ${UPLOAD_COLS} FROM sync_uploads u LEFT JOIN sync_upload_objects o ON o.upload_id = u.id WHERE u.state = 'open' AND u.id > ? ORDER BY u.id LIMIT ?`,
      ),
      isOpen: db.prepare(`SELECT 1 FROM sync_uploads WHERE id = ? AND state = 'open'`),
      touch: db.prepare(`UPDATE sync_uploads SET last_activity_ms = ? WHERE id = ? AND state = 'open'`),
      clearParts: db.prepare('DELETE FROM sync_upload_parts WHERE upload_id = ?'),
      insertPart: db.prepare('INSERT INTO sync_upload_parts (upload_id, part_number, size_bytes, etag) VALUES (?, ?, ?, ?)'),
      idle: db.prepare(
        `SELECT ${UPLOAD_COLS} FROM sync_uploads u LEFT JOIN sync_upload_objects o ON o.upload_id = u.id
         WHERE u.state IN ('open', 'single', 'completed', 'promoting') AND u.last_activity_ms < ? ORDER BY u.last_activity_ms LIMIT ?`,
      ),
      settle: db.prepare(
        `SELECT ${UPLOAD_COLS} FROM sync_uploads u LEFT JOIN sync_upload_objects o ON o.upload_id = u.id
         WHERE (u.state IN ('single', 'rejected', 'completed') OR (u.state = 'confirmed' AND u.expires_ms IS NOT NULL))
           AND COALESCE(u.expires_ms, 0) < ? AND u.id > ? ORDER BY u.id LIMIT ?`,
      ),
      clearExpiry: db.prepare(`UPDATE sync_uploads SET expires_ms = NULL WHERE id = ? AND state = 'confirmed'`),
      insertCheckout: db.prepare('INSERT INTO sync_checkouts (id, app_id, user_id, cap_bytes, interval, price_cents, state, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)'),
      checkout: db.prepare('SELECT * FROM sync_checkouts WHERE id = ?'),
      completeCheckout: db.prepare(`UPDATE sync_checkouts SET state = 'completed' WHERE id = ?`),
      seenEvent: db.prepare('SELECT 1 FROM sync_webhook_events WHERE id = ?'),
      insertEvent: db.prepare('INSERT INTO sync_webhook_events (id, type, received_at) VALUES (?, ?, ?)'),
      upsertSub: db.prepare(
        `INSERT INTO sync_subscriptions (app_id, user_id, status, cap_bytes, pending_cap_bytes, interval, price_cents, provider_subscription_id,
           current_period_start, current_period_end, last_event_created, updated_at)
         VALUES (@app_id, @user_id, 'active', @cap_bytes, NULL, @interval, @price_cents, @provider_subscription_id, @current_period_start, @current_period_end, @created, @at)
         ON CONFLICT (app_id, user_id) DO UPDATE SET status = 'active', cap_bytes = excluded.cap_bytes, pending_cap_bytes = NULL,
           interval = excluded.interval, price_cents = excluded.price_cents, provider_subscription_id = excluded.provider_subscription_id,
           current_period_start = excluded.current_period_start, current_period_end = excluded.current_period_end,
           last_event_created = excluded.last_event_created, updated_at = excluded.updated_at`,
      ),
      renew: db.prepare(
        `UPDATE sync_subscriptions SET status = 'active', cap_bytes = COALESCE(pending_cap_bytes, cap_bytes), pending_cap_bytes = NULL, price_cents = ?,
           current_period_start = ?, current_period_end = ?, last_event_created = MAX(last_event_created, ?), updated_at = ? WHERE app_id = ? AND user_id = ?`,
      ),
      cancel: db.prepare(`UPDATE sync_subscriptions SET status = 'canceled', last_event_created = ?, updated_at = ? WHERE app_id = ? AND user_id = ?`),
      queueCap: db.prepare(`UPDATE sync_subscriptions SET pending_cap_bytes = ?, updated_at = ? WHERE app_id = ? AND user_id = ? AND status = 'active'`),
      subsAll: db.prepare('SELECT * FROM sync_subscriptions WHERE (@app_id IS NULL OR app_id = @app_id) AND (@user_id IS NULL OR user_id = @user_id) ORDER BY app_id, user_id'),
    };
  }

  async app(appId: string): Promise<AppPlan | undefined> {
    return this.s.app.get(appId) as AppPlan | undefined;
  }

  async appByNameOrId(nameOrId: string): Promise<AppPlan | undefined> {
    return this.s.appByName.get(nameOrId, nameOrId, nameOrId) as AppPlan | undefined;
  }

  async blob(appId: string, userId: string, hash: string): Promise<BlobRecord | undefined> {
    return this.s.blob.get(appId, userId, hash) as BlobRecord | undefined;
  }

  async usage(appId: string, userId: string): Promise<Usage> {
    return this.usageReader.read(appId, userId);
  }

  async reserveUpload(u: UploadSession, admit: (usage: Usage, pendingForBlob: number) => string | undefined): Promise<ReserveOutcome> {
    return this.db.transaction((): ReserveOutcome => {
      if (this.s.blob.get(u.app_id, u.user_id, u.hash)) return { kind: 'exists' };
      const usage = this.usageReader.read(u.app_id, u.user_id);
      const reason = admit(usage, this.s.pendingForBlob.get(u.app_id, u.user_id, u.hash) as number);
      if (reason !== undefined) return { kind: 'refused', reason, usage };
      this.s.insertUpload.run(u.id, u.app_id, u.user_id, u.hash, u.size_bytes, u.part_size, u.part_count, u.state, u.created_at, u.last_activity_ms, u.object_key, u.expires_ms);
      if (u.store_upload_id !== null) this.s.insertUploadObject.run(u.id, u.store_upload_id);
      return { kind: 'reserved' };
    }).immediate();
  }

  async confirmable(appId: string, userId: string, hash: string): Promise<UploadSession[]> {
    return this.s.confirmable.all(appId, userId, hash) as UploadSession[];
  }

  async confirmBlob(
    input: { upload_id: string; app_id: string; user_id: string; hash: string; size_bytes: number; object_key: string; at: string; now_ms: number },
    admit: (usage: Usage, released: number) => boolean,
  ): Promise<ConfirmOutcome> {
    const { app_id, user_id, hash } = input;
    return this.db.transaction((): ConfirmOutcome => {
      const up = this.s.upload.get(input.upload_id) as UploadSession | undefined;
      if (!up || up.state !== 'promoting') return { kind: 'gone' };
      if (this.s.blob.get(app_id, user_id, hash)) {
        this.s.setState.run('rejected', input.now_ms, up.id);
        return { kind: 'exists', usage: this.usageReader.read(app_id, user_id) };
      }
      const usage = this.usageReader.read(app_id, user_id);
      if (!admit(usage, up.size_bytes)) {
        this.s.setState.run('rejected', input.now_ms, up.id);
        return { kind: 'over_cap', usage };
      }
      this.s.setState.run('confirmed', input.now_ms, up.id);
      this.s.insertBlob.run(app_id, user_id, hash, input.size_bytes, input.at, input.object_key);
      return { kind: 'created', usage: this.usageReader.read(app_id, user_id) };
    }).immediate();
  }

  async upload(id: string): Promise<UploadSession | undefined> {
    return this.s.upload.get(id) as UploadSession | undefined;
  }

  async touchUpload(id: string, nowMs: number, parts?: { part_number: number; size_bytes: number; etag: string }[]): Promise<void> {
    this.db.transaction(() => {
      const changed = this.s.touch.run(nowMs, id).changes;
      if (!parts || changed === 0) return;
      this.s.clearParts.run(id);
      for (const p of parts) this.s.insertPart.run(id, p.part_number, p.size_bytes, p.etag);
    })();
  }

  async recordParts(id: string, parts: { part_number: number; size_bytes: number; etag: string }[]): Promise<void> {
    this.db.transaction(() => {
      if (!this.s.isOpen.get(id)) return;
      this.s.clearParts.run(id);
      for (const p of parts) this.s.insertPart.run(id, p.part_number, p.size_bytes, p.etag);
    })();
  }

  async uploadByStoreId(storeUploadId: string): Promise<UploadSession | undefined> {
    return this.s.uploadByStore.get(storeUploadId) as UploadSession | undefined;
  }

  async openUploads(limit: number, afterId = ''): Promise<UploadSession[]> {
    return this.s.openUploads.all(afterId, limit) as UploadSession[];
  }

  async moveUpload(id: string, from: UploadState[], to: UploadState, nowMs: number): Promise<boolean> {
    return this.db.transaction(() => {
      const marks = from.map(() => '?').join(', ');
      const changed = this.db.prepare(`UPDATE sync_uploads SET state = ?, last_activity_ms = ? WHERE id = ? AND state IN (${marks})`).run(to, nowMs, id, ...from).changes;
      // Parts of a session that is gone no longer exist, so they no longer bill.
      if (changed > 0 && (to === 'aborted' || to === 'reaped')) this.s.clearParts.run(id);
      return changed > 0;
    })();
  }

  async idleUploads(beforeMs: number, limit: number): Promise<UploadSession[]> {
    return this.s.idle.all(beforeMs, limit) as UploadSession[];
  }

  async settleCandidates(beforeMs: number, limit: number, afterId: string): Promise<UploadSession[]> {
    return this.s.settle.all(beforeMs, afterId, limit) as UploadSession[];
  }

  async clearExpiry(id: string): Promise<void> {
    this.s.clearExpiry.run(id);
  }

  async subscription(appId: string, userId: string): Promise<SubscriptionRecord | undefined> {
    return this.s.subscription.get(appId, userId) as SubscriptionRecord | undefined;
  }

  async createCheckout(c: CheckoutRecord): Promise<void> {
    this.s.insertCheckout.run(c.id, c.app_id, c.user_id, c.cap_bytes, c.interval, c.price_cents, c.state, c.created_at);
  }

  async checkout(id: string): Promise<CheckoutRecord | undefined> {
    return this.s.checkout.get(id) as CheckoutRecord | undefined;
  }

  async applyEvent(e: BillingEvent, at: string): Promise<EventOutcome> {
    return this.db
      .transaction((): EventOutcome => {
        if (this.s.seenEvent.get(e.id)) return 'duplicate';
        this.s.insertEvent.run(e.id, e.type, at);
        return this.applyOnce(e, at);
      })
      .immediate();
  }

  /** The effect of a first-seen event. Out-of-order rules: see docs/sync-storage.md. */
  private applyOnce(e: BillingEvent, at: string): EventOutcome {
    switch (e.kind) {
      case 'ignored':
        return 'ignored';
      case 'checkout_completed': {
        const c = this.s.checkout.get(e.checkout_id) as CheckoutRecord | undefined;
        if (!c) return 'ignored';
        // Another event already completed this checkout: never apply a purchase twice.
        if (c.state === 'completed') return 'stale';
        this.s.completeCheckout.run(c.id);
        const sub = this.s.subscription.get(c.app_id, c.user_id) as SubscriptionRecord | undefined;
        if (sub && sub.last_event_created > e.created) return 'stale';
        this.s.upsertSub.run({
          app_id: c.app_id,
          user_id: c.user_id,
          cap_bytes: c.cap_bytes,
          interval: c.interval,
          price_cents: c.price_cents,
          provider_subscription_id: e.provider_subscription_id,
          current_period_start: e.current_period_start,
          current_period_end: e.current_period_end,
          created: e.created,
          at,
        });
        return 'applied';
      }
      case 'renewed': {
        const sub = this.s.subByProvider.get(e.provider_subscription_id) as SubscriptionRecord | undefined;
        if (!sub) return 'ignored';
        // A period that does not move the subscription forward is an old or repeated renewal.
        if (Date.parse(e.current_period_end) <= Date.parse(sub.current_period_end)) return 'stale';
        const app = this.s.app.get(sub.app_id) as AppPlan | undefined;
        const cap = sub.pending_cap_bytes ?? sub.cap_bytes;
        const price = e.price_cents ?? (app ? quoteCents(app, cap, sub.interval) : sub.price_cents);
        this.s.renew.run(price, e.current_period_start, e.current_period_end, e.created, at, sub.app_id, sub.user_id);
        return 'applied';
      }
      case 'canceled': {
        const sub = this.s.subByProvider.get(e.provider_subscription_id) as SubscriptionRecord | undefined;
        if (!sub) return 'ignored';
        if (sub.last_event_created > e.created) return 'stale';
        this.s.cancel.run(e.created, at, sub.app_id, sub.user_id);
        return 'applied';
      }
    }
  }

  async queueCap(appId: string, userId: string, capBytes: number | null, at: string): Promise<SubscriptionRecord | undefined> {
    this.s.queueCap.run(capBytes, at, appId, userId);
    return this.s.subscription.get(appId, userId) as SubscriptionRecord | undefined;
  }

  async subscriptions(filter: { app_id?: string; user_id?: string }): Promise<SubscriptionRecord[]> {
    return this.s.subsAll.all({ app_id: filter.app_id ?? null, user_id: filter.user_id ?? null }) as SubscriptionRecord[];
  }

  async close(): Promise<void> {
    // The database belongs to the marketplace, which closes it.
  }
}
