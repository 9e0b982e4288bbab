// SqlSyncStorageStore: the storage store's row operations over the SQL surface, one adapter for
// SQLite and PostgreSQL, on the `sync` tables (sync-schema.ts) plus its own component
// `sync-storage`. No rules here: the sync area's domain modules decide inside transaction().
import type { SqlDatabase, SqlExecutor } from './sql.js';
import { migrateSync } from './sync-schema.js';
import { readUsage, RESERVED_STATES, type Usage } from './sync-usage.js';
import type {
  AppPlan,
  BlobRecord,
  CheckoutRecord,
  StorageRows,
  StoredPartRow,
  SubscriptionRecord,
  SyncStorageStore,
  UploadSession,
  UploadState,
} from './sync-billing.js';
import { sqlText } from './sql-text.js';

// SQLite databases in the field are at some version of this list: append only.
const SQLITE = [
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

// PostgreSQL starts at the schema the SQLite list reaches, in one step.
const POSTGRES = [
  `CREATE TABLE sync_upload_objects (
     upload_id TEXT PRIMARY KEY,
     store_upload_id TEXT NOT NULL
   );
   CREATE INDEX sync_uploads_idle ON sync_uploads (state, last_activity_ms);
   CREATE INDEX sync_uploads_hash ON sync_uploads (app_id, user_id, hash, state);
   CREATE INDEX sync_subscriptions_provider ON sync_subscriptions (provider_subscription_id);
   CREATE INDEX sync_upload_objects_store ON sync_upload_objects (store_upload_id);
   ALTER TABLE sync_uploads ADD COLUMN object_key TEXT, ADD COLUMN expires_ms BIGINT;
   ALTER TABLE sync_blobs ADD COLUMN object_key TEXT;`,
];

const APP_COLS = `id AS app_id, name AS app_name, min_charge_cents, per_gb_tenths_of_cent_per_month, annual_multiplier, min_cap_bytes, max_cap_bytes, free_bytes`;
const UPLOAD_COLS = `u.id, u.app_id, u.user_id, u.hash, u.size_bytes, u.part_size, u.part_count, u.state, o.store_upload_id, u.object_key, u.expires_ms, u.created_at, u.last_activity_ms`;
const UPLOADS = `sync_uploads u LEFT JOIN sync_upload_objects o ON o.upload_id = u.id`;
const SUB_COLS = `app_id, user_id, status, cap_bytes, pending_cap_bytes, interval, price_cents, provider_subscription_id, current_period_start, current_period_end, last_event_created, updated_at`;
const marks = (n: number): string => Array.from({ length: n }, () => '?').join(', ');

/** The row operations on one executor: the database (autocommit) or one open transaction. */
class Rows implements StorageRows {
  constructor(protected readonly x: SqlExecutor) {}

  lock(key: string): Promise<void> {
    return this.x.lock(key);
  }

  app(appId: string): Promise<AppPlan | undefined> {
    return this.x.get<AppPlan>(sqlText`SELECT ${APP_COLS} FROM sync_apps WHERE id = ?`, [appId]);
  }

  appByNameOrId(nameOrId: string): Promise<AppPlan | undefined> {
    // lower() folds ASCII on both engines, as SQLite's NOCASE column does; PostgreSQL has an index on lower(name).
    return this.x.get<AppPlan>(sqlText`SELECT ${APP_COLS} FROM sync_apps WHERE id = ? OR lower(name) = lower(?) ORDER BY id = ? DESC LIMIT 1`, [nameOrId, nameOrId, nameOrId]);
  }

  blob(appId: string, userId: string, hash: string): Promise<BlobRecord | undefined> {
    return this.x.get<BlobRecord>('SELECT size_bytes, created_at, object_key FROM sync_blobs WHERE app_id = ? AND user_id = ? AND hash = ?', [appId, userId, hash]);
  }

  async insertBlob(b: { app_id: string; user_id: string; hash: string; size_bytes: number; created_at: string; object_key: string }): Promise<void> {
    await this.x.run('INSERT INTO sync_blobs (app_id, user_id, hash, size_bytes, created_at, object_key) VALUES (?, ?, ?, ?, ?, ?)', [
      b.app_id, b.user_id, b.hash, b.size_bytes, b.created_at, b.object_key,
    ]);
  }

  usage(appId: string, userId: string): Promise<Usage> {
    return readUsage(this.x, appId, userId);
  }

  async pendingUploads(appId: string, userId: string, hash: string): Promise<number> {
    return (await this.x.value<number>(`SELECT COUNT(*) FROM sync_uploads WHERE app_id = ? AND user_id = ? AND hash = ? AND state IN (${marks(RESERVED_STATES.length)})`, [
      appId, userId, hash, ...RESERVED_STATES,
    ])) ?? 0;
  }

  async insertUpload(u: UploadSession): Promise<void> {
    await this.x.run(
      `INSERT INTO sync_uploads (id, app_id, user_id, hash, size_bytes, part_size, part_count, state, created_at, last_activity_ms, object_key, expires_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [u.id, u.app_id, u.user_id, u.hash, u.size_bytes, u.part_size, u.part_count, u.state, u.created_at, u.last_activity_ms, u.object_key, u.expires_ms],
    );
    if (u.store_upload_id !== null) await this.x.run('INSERT INTO sync_upload_objects (upload_id, store_upload_id) VALUES (?, ?)', [u.id, u.store_upload_id]);
  }

  upload(id: string): Promise<UploadSession | undefined> {
    return this.x.get<UploadSession>(sqlText`SELECT ${UPLOAD_COLS} FROM ${UPLOADS} WHERE u.id = ?`, [id]);
  }

  uploadByStoreId(storeUploadId: string): Promise<UploadSession | undefined> {
    return this.x.get<UploadSession>(sqlText`SELECT ${UPLOAD_COLS} FROM sync_upload_objects o JOIN sync_uploads u ON u.id = o.upload_id WHERE o.store_upload_id = ?`, [storeUploadId]);
  }

  confirmable(appId: string, userId: string, hash: string): Promise<UploadSession[]> {
    return this.x.all<UploadSession>(
      sqlText`SELECT ${UPLOAD_COLS} FROM ${UPLOADS}
       WHERE u.app_id = ? AND u.user_id = ? AND u.hash = ? AND u.state IN ('single', 'completed') ORDER BY u.last_activity_ms DESC, u.id LIMIT 16`,
      [appId, userId, hash],
    );
  }

  openUploads(limit: number, afterId = ''): Promise<UploadSession[]> {
    return this.x.all<UploadSession>(sqlText`SELECT ${UPLOAD_COLS} FROM ${UPLOADS} WHERE u.state = 'open' AND u.id > ? ORDER BY u.id LIMIT ?`, [afterId, limit]);
  }

  idleUploads(beforeMs: number, limit: number): Promise<UploadSession[]> {
    return this.x.all<UploadSession>(
      sqlText`SELECT ${UPLOAD_COLS} FROM ${UPLOADS}
       WHERE u.state IN ('open', 'single', 'completed', 'promoting') AND u.last_activity_ms < ? ORDER BY u.last_activity_ms, u.id LIMIT ?`,
      [beforeMs, limit],
    );
  }

  settleCandidates(beforeMs: number, limit: number, afterId: string): Promise<UploadSession[]> {
    return this.x.all<UploadSession>(
      sqlText`SELECT ${UPLOAD_COLS} FROM ${UPLOADS}
       WHERE (u.state IN ('single', 'rejected', 'completed') OR (u.state = 'confirmed' AND u.expires_ms IS NOT NULL))
         AND COALESCE(u.expires_ms, 0) < ? AND u.id > ? ORDER BY u.id LIMIT ?`,
      [beforeMs, afterId, limit],
    );
  }

  async setUploadState(id: string, from: readonly UploadState[], to: UploadState, nowMs: number): Promise<boolean> {
    if (from.length === 0) return false;
    const r = await this.x.run(`UPDATE sync_uploads SET state = ?, last_activity_ms = ? WHERE id = ? AND state IN (${marks(from.length)})`, [to, nowMs, id, ...from]);
    return r.changes > 0;
  }

  async touchOpenUpload(id: string, nowMs: number): Promise<boolean> {
    return (await this.x.run(`UPDATE sync_uploads SET last_activity_ms = ? WHERE id = ? AND state = 'open'`, [nowMs, id])).changes > 0;
  }

  async replaceParts(id: string, parts: readonly StoredPartRow[]): Promise<void> {
    await this.x.run('DELETE FROM sync_upload_parts WHERE upload_id = ?', [id]);
    for (const p of parts) {
      await this.x.run('INSERT INTO sync_upload_parts (upload_id, part_number, size_bytes, etag) VALUES (?, ?, ?, ?)', [id, p.part_number, p.size_bytes, p.etag]);
    }
  }

  async clearExpiry(id: string): Promise<void> {
    await this.x.run(`UPDATE sync_uploads SET expires_ms = NULL WHERE id = ? AND state = 'confirmed'`, [id]);
  }

  subscription(appId: string, userId: string): Promise<SubscriptionRecord | undefined> {
    return this.x.get<SubscriptionRecord>(sqlText`SELECT ${SUB_COLS} FROM sync_subscriptions WHERE app_id = ? AND user_id = ?`, [appId, userId]);
  }

  subscriptionByProvider(providerSubscriptionId: string): Promise<SubscriptionRecord | undefined> {
    return this.x.get<SubscriptionRecord>(sqlText`SELECT ${SUB_COLS} FROM sync_subscriptions WHERE provider_subscription_id = ? ORDER BY app_id, user_id LIMIT 1`, [providerSubscriptionId]);
  }

  subscriptions(filter: { app_id?: string; user_id?: string }): Promise<SubscriptionRecord[]> {
    const where: string[] = [];
    const params: string[] = [];
    if (filter.app_id !== undefined) {
      where.push('app_id = ?');
      params.push(filter.app_id);
    }
    if (filter.user_id !== undefined) {
      where.push('user_id = ?');
      params.push(filter.user_id);
    }
    return this.x.all<SubscriptionRecord>(`SELECT ${SUB_COLS} FROM sync_subscriptions${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY app_id, user_id`, params);
  }

  async putSubscription(s: SubscriptionRecord): Promise<void> {
    await this.x.run(
      sqlText`INSERT INTO sync_subscriptions (${SUB_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (app_id, user_id) DO UPDATE SET status = excluded.status, cap_bytes = excluded.cap_bytes, pending_cap_bytes = excluded.pending_cap_bytes,
         interval = excluded.interval, price_cents = excluded.price_cents, provider_subscription_id = excluded.provider_subscription_id,
         current_period_start = excluded.current_period_start, current_period_end = excluded.current_period_end,
         last_event_created = excluded.last_event_created, updated_at = excluded.updated_at`,
      [s.app_id, s.user_id, s.status, s.cap_bytes, s.pending_cap_bytes, s.interval, s.price_cents, s.provider_subscription_id, s.current_period_start, s.current_period_end, s.last_event_created, s.updated_at],
    );
  }

  async setPendingCap(appId: string, userId: string, capBytes: number | null, at: string): Promise<boolean> {
    const r = await this.x.run(`UPDATE sync_subscriptions SET pending_cap_bytes = ?, updated_at = ? WHERE app_id = ? AND user_id = ? AND status = 'active'`, [capBytes, at, appId, userId]);
    return r.changes > 0;
  }

  async createCheckout(c: CheckoutRecord): Promise<void> {
    await this.x.run('INSERT INTO sync_checkouts (id, app_id, user_id, cap_bytes, interval, price_cents, state, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [
      c.id, c.app_id, c.user_id, c.cap_bytes, c.interval, c.price_cents, c.state, c.created_at,
    ]);
  }

  checkout(id: string): Promise<CheckoutRecord | undefined> {
    return this.x.get<CheckoutRecord>('SELECT id, app_id, user_id, cap_bytes, interval, price_cents, state, created_at FROM sync_checkouts WHERE id = ?', [id]);
  }

  async completeCheckout(id: string): Promise<boolean> {
    return (await this.x.run(`UPDATE sync_checkouts SET state = 'completed' WHERE id = ? AND state = 'open'`, [id])).changes > 0;
  }

  async recordEvent(id: string, type: string, at: string): Promise<boolean> {
    // A concurrent delivery of the same id waits on the key, then inserts nothing.
    return (await this.x.run('INSERT INTO sync_webhook_events (id, type, received_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING', [id, type, at])).changes > 0;
  }

}

export class SqlSyncStorageStore extends Rows implements SyncStorageStore {
  private constructor(private readonly sql: SqlDatabase) {
    super(sql);
  }

  /** Migrates the `sync` and `sync-storage` components and returns the store. */
  static async open(sql: SqlDatabase): Promise<SqlSyncStorageStore> {
    await migrateSync(sql);
    await sql.migrate('sync-storage', { sqlite: SQLITE, postgres: POSTGRES });
    return new SqlSyncStorageStore(sql);
  }

  transaction<T>(fn: (tx: StorageRows) => Promise<T>): Promise<T> {
    return this.sql.transaction((x) => fn(new Rows(x)));
  }

  async close(): Promise<void> {
    // The database belongs to the marketplace, which closes it.
  }
}
