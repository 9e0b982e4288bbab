// Tables of the marketplace sync area (component `sync`), shared by the changelog/keys store
// (sync.ts) and the blob/billing store (sync-billing.ts), for both engines. Append only: SQLite
// databases in the field are at some version of the first list; PostgreSQL starts at the second.
import type { Engine, SqlDatabase } from './sql.js';
import { ENTRY_BYTES_SQL } from './sync-usage.js';

const SQLITE = [
  `CREATE TABLE sync_apps (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL UNIQUE COLLATE NOCASE,
     api_key TEXT NOT NULL UNIQUE,
     min_charge_cents INTEGER NOT NULL,
     per_gb_tenths_of_cent_per_month INTEGER NOT NULL,
     annual_multiplier INTEGER NOT NULL,
     min_cap_bytes INTEGER NOT NULL,
     max_cap_bytes INTEGER NOT NULL,
     free_bytes INTEGER NOT NULL,
     created_at TEXT NOT NULL
   );
   CREATE TABLE sync_entries (
     app_id TEXT NOT NULL, user_id TEXT NOT NULL, seq INTEGER NOT NULL,
     key_id INTEGER NOT NULL, device_id TEXT, tbl TEXT NOT NULL, op TEXT NOT NULL,
     row_id TEXT NOT NULL, ts TEXT NOT NULL, data TEXT,
     PRIMARY KEY (app_id, user_id, seq)
   ) WITHOUT ROWID;
   CREATE INDEX sync_entries_key ON sync_entries (app_id, user_id, key_id, seq);
   CREATE TABLE sync_push_batches (
     app_id TEXT NOT NULL, user_id TEXT NOT NULL, device_id TEXT NOT NULL, batch_id TEXT NOT NULL,
     cursor INTEGER NOT NULL, accepted INTEGER NOT NULL, created_at TEXT NOT NULL,
     PRIMARY KEY (app_id, user_id, device_id, batch_id)
   ) WITHOUT ROWID;
   CREATE TABLE sync_devices (
     id TEXT PRIMARY KEY, app_id TEXT NOT NULL, user_id TEXT NOT NULL, name TEXT NOT NULL,
     platform TEXT, created_at TEXT NOT NULL, last_seen_at TEXT NOT NULL,
     UNIQUE (app_id, user_id, name)
   );
   CREATE TABLE sync_keys (
     app_id TEXT NOT NULL, user_id TEXT NOT NULL, encrypted_key TEXT NOT NULL,
     key_version INTEGER NOT NULL, key_id INTEGER NOT NULL, updated_at TEXT NOT NULL,
     PRIMARY KEY (app_id, user_id)
   ) WITHOUT ROWID;
   CREATE TABLE sync_rotations (
     id TEXT PRIMARY KEY, app_id TEXT NOT NULL, user_id TEXT NOT NULL, device_id TEXT NOT NULL,
     new_encrypted_key TEXT NOT NULL, new_key_id INTEGER NOT NULL, target_seq INTEGER NOT NULL,
     state TEXT NOT NULL, created_at TEXT NOT NULL, last_activity_ms INTEGER NOT NULL
   );
   CREATE UNIQUE INDEX sync_rotations_active ON sync_rotations (app_id, user_id) WHERE state = 'active';
   CREATE TABLE sync_blobs (
     app_id TEXT NOT NULL, user_id TEXT NOT NULL, hash TEXT NOT NULL, size_bytes INTEGER NOT NULL,
     created_at TEXT NOT NULL, PRIMARY KEY (app_id, user_id, hash)
   ) WITHOUT ROWID;
   CREATE TABLE sync_uploads (
     id TEXT PRIMARY KEY, app_id TEXT NOT NULL, user_id TEXT NOT NULL, hash TEXT NOT NULL,
     size_bytes INTEGER NOT NULL, part_size INTEGER NOT NULL, part_count INTEGER NOT NULL,
     state TEXT NOT NULL, created_at TEXT NOT NULL, last_activity_ms INTEGER NOT NULL
   );
   CREATE INDEX sync_uploads_owner ON sync_uploads (app_id, user_id, state);
   CREATE TABLE sync_upload_parts (
     upload_id TEXT NOT NULL, part_number INTEGER NOT NULL, size_bytes INTEGER NOT NULL, etag TEXT NOT NULL,
     PRIMARY KEY (upload_id, part_number)
   ) WITHOUT ROWID;
   CREATE TABLE sync_subscriptions (
     app_id TEXT NOT NULL, user_id TEXT NOT NULL, status TEXT NOT NULL, cap_bytes INTEGER NOT NULL,
     pending_cap_bytes INTEGER, interval TEXT NOT NULL, price_cents INTEGER NOT NULL,
     provider_subscription_id TEXT NOT NULL, current_period_start TEXT NOT NULL,
     current_period_end TEXT NOT NULL, last_event_created INTEGER NOT NULL, updated_at TEXT NOT NULL,
     PRIMARY KEY (app_id, user_id)
   ) WITHOUT ROWID;
   CREATE TABLE sync_checkouts (
     id TEXT PRIMARY KEY, app_id TEXT NOT NULL, user_id TEXT NOT NULL, cap_bytes INTEGER NOT NULL,
     interval TEXT NOT NULL, price_cents INTEGER NOT NULL, state TEXT NOT NULL, created_at TEXT NOT NULL
   );
   CREATE TABLE sync_webhook_events (id TEXT PRIMARY KEY, type TEXT NOT NULL, received_at TEXT NOT NULL) WITHOUT ROWID;`,
  // Envelopes of cancelled rotations: entries pushed or re-sealed under them stay readable.
  `CREATE TABLE sync_retired_keys (
     app_id TEXT NOT NULL, user_id TEXT NOT NULL, key_id INTEGER NOT NULL, encrypted_key TEXT NOT NULL,
     retired_at TEXT NOT NULL, PRIMARY KEY (app_id, user_id, key_id)
   ) WITHOUT ROWID;`,
  // Failed sign-ins per client address and fixed window (the sign-in limit; shared by instances).
  `CREATE TABLE sync_auth_failures (
     client TEXT NOT NULL, window_start INTEGER NOT NULL, failures INTEGER NOT NULL,
     PRIMARY KEY (client, window_start)
   ) WITHOUT ROWID;`,
  // Changelog bytes per (app, user), kept by push and re-seal so the storage cap can count them
  // without summing every entry (issue 11); the sum of existing entries is its start.
  `CREATE TABLE sync_changelog_usage (
     app_id TEXT NOT NULL, user_id TEXT NOT NULL, bytes INTEGER NOT NULL,
     PRIMARY KEY (app_id, user_id)
   ) WITHOUT ROWID;
   INSERT INTO sync_changelog_usage (app_id, user_id, bytes)
     SELECT app_id, user_id, SUM(${ENTRY_BYTES_SQL}) FROM sync_entries GROUP BY app_id, user_id;`,
  // The sign-in limit's windows moved to the shared limiter table (src/store/limiter-windows.ts).
  'DROP TABLE IF EXISTS sync_auth_failures;',
  // Each entry's fields after its key id, as the pull writes them (src/store/sync-sql.ts,
  // entryFieldsJson): a pull splices them instead of quoting five columns a row (issue 37).
  `ALTER TABLE sync_entries ADD COLUMN fields_json TEXT;
   UPDATE sync_entries SET fields_json = ${fieldsJsonSql('sqlite')};`,
];

// The schema SQLite reaches after the migrations above, in one step. Byte counts and instants in
// milliseconds are BIGINT; names compare case-insensitively through a unique index on lower(name).
const POSTGRES = [
  `CREATE TABLE sync_apps (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     api_key TEXT NOT NULL UNIQUE,
     min_charge_cents BIGINT NOT NULL,
     per_gb_tenths_of_cent_per_month BIGINT NOT NULL,
     annual_multiplier BIGINT NOT NULL,
     min_cap_bytes BIGINT NOT NULL,
     max_cap_bytes BIGINT NOT NULL,
     free_bytes BIGINT NOT NULL,
     created_at TEXT NOT NULL
   );
   CREATE UNIQUE INDEX sync_apps_name ON sync_apps (lower(name));
   CREATE TABLE sync_entries (
     app_id TEXT NOT NULL, user_id TEXT NOT NULL, seq BIGINT NOT NULL,
     key_id BIGINT NOT NULL, device_id TEXT, tbl TEXT NOT NULL, op TEXT NOT NULL,
     row_id TEXT NOT NULL, ts TEXT NOT NULL, data TEXT,
     PRIMARY KEY (app_id, user_id, seq)
   );
   CREATE INDEX sync_entries_key ON sync_entries (app_id, user_id, key_id, seq);
   CREATE TABLE sync_push_batches (
     app_id TEXT NOT NULL, user_id TEXT NOT NULL, device_id TEXT NOT NULL, batch_id TEXT NOT NULL,
     cursor BIGINT NOT NULL, accepted BIGINT NOT NULL, created_at TEXT NOT NULL,
     PRIMARY KEY (app_id, user_id, device_id, batch_id)
   );
   CREATE TABLE sync_devices (
     id TEXT PRIMARY KEY, app_id TEXT NOT NULL, user_id TEXT NOT NULL, name TEXT NOT NULL,
     platform TEXT, created_at TEXT NOT NULL, last_seen_at TEXT NOT NULL,
     UNIQUE (app_id, user_id, name)
   );
   CREATE TABLE sync_keys (
     app_id TEXT NOT NULL, user_id TEXT NOT NULL, encrypted_key TEXT NOT NULL,
     key_version BIGINT NOT NULL, key_id BIGINT NOT NULL, updated_at TEXT NOT NULL,
     PRIMARY KEY (app_id, user_id)
   );
   CREATE TABLE sync_rotations (
     id TEXT PRIMARY KEY, app_id TEXT NOT NULL, user_id TEXT NOT NULL, device_id TEXT NOT NULL,
     new_encrypted_key TEXT NOT NULL, new_key_id BIGINT NOT NULL, target_seq BIGINT NOT NULL,
     state TEXT NOT NULL, created_at TEXT NOT NULL, last_activity_ms BIGINT NOT NULL
   );
   CREATE UNIQUE INDEX sync_rotations_active ON sync_rotations (app_id, user_id) WHERE state = 'active';
   CREATE TABLE sync_blobs (
     app_id TEXT NOT NULL, user_id TEXT NOT NULL, hash TEXT NOT NULL, size_bytes BIGINT NOT NULL,
     created_at TEXT NOT NULL, PRIMARY KEY (app_id, user_id, hash)
   );
   CREATE TABLE sync_uploads (
     id TEXT PRIMARY KEY, app_id TEXT NOT NULL, user_id TEXT NOT NULL, hash TEXT NOT NULL,
     size_bytes BIGINT NOT NULL, part_size BIGINT NOT NULL, part_count BIGINT NOT NULL,
     state TEXT NOT NULL, created_at TEXT NOT NULL, last_activity_ms BIGINT NOT NULL
   );
   CREATE INDEX sync_uploads_owner ON sync_uploads (app_id, user_id, state);
   CREATE TABLE sync_upload_parts (
     upload_id TEXT NOT NULL, part_number BIGINT NOT NULL, size_bytes BIGINT NOT NULL, etag TEXT NOT NULL,
     PRIMARY KEY (upload_id, part_number)
   );
   CREATE TABLE sync_subscriptions (
     app_id TEXT NOT NULL, user_id TEXT NOT NULL, status TEXT NOT NULL, cap_bytes BIGINT NOT NULL,
     pending_cap_bytes BIGINT, interval TEXT NOT NULL, price_cents BIGINT NOT NULL,
     provider_subscription_id TEXT NOT NULL, current_period_start TEXT NOT NULL,
     current_period_end TEXT NOT NULL, last_event_created BIGINT NOT NULL, updated_at TEXT NOT NULL,
     PRIMARY KEY (app_id, user_id)
   );
   CREATE TABLE sync_checkouts (
     id TEXT PRIMARY KEY, app_id TEXT NOT NULL, user_id TEXT NOT NULL, cap_bytes BIGINT NOT NULL,
     interval TEXT NOT NULL, price_cents BIGINT NOT NULL, state TEXT NOT NULL, created_at TEXT NOT NULL
   );
   CREATE TABLE sync_webhook_events (id TEXT PRIMARY KEY, type TEXT NOT NULL, received_at TEXT NOT NULL);
   CREATE TABLE sync_retired_keys (
     app_id TEXT NOT NULL, user_id TEXT NOT NULL, key_id BIGINT NOT NULL, encrypted_key TEXT NOT NULL,
     retired_at TEXT NOT NULL, PRIMARY KEY (app_id, user_id, key_id)
   );
   CREATE TABLE sync_changelog_usage (
     app_id TEXT NOT NULL, user_id TEXT NOT NULL, bytes BIGINT NOT NULL,
     PRIMARY KEY (app_id, user_id)
   );`,
  `ALTER TABLE sync_entries ADD COLUMN fields_json TEXT;
   UPDATE sync_entries SET fields_json = ${fieldsJsonSql('postgres')};`,
];

/**
 * SQL of an entry's `fields_json` over its columns, for the rows stored without it: what
 * entryFieldsJson writes at a push, each string quoted by the engine's JSON quoting (SQLite's
 * json_quote, PostgreSQL's to_json), which escapes as JSON.stringify does. The migration writes it
 * for the rows stored before the column, and a pull falls back to it for a row an instance of the
 * earlier version inserted while a cluster was being upgraded (src/store/sync-sql.ts, ENTRY_JSON).
 */
export function fieldsJsonSql(engine: Engine): string {
  const q = (c: string) => `COALESCE(${engine === 'postgres' ? `to_json(${c})::text` : `json_quote(${c})`}, 'null')`;
  return `',"device_id":' || ${q('device_id')} || ',"table":' || ${q('tbl')} || ',"op":' || ${q('op')} || ',"row_id":' || ${q('row_id')} || ',"timestamp":' || ${q('ts')} || ',"data":'`;
}

/** Every migration of the `sync` component, for tests that stop a database at an earlier version. */
export const SYNC_MIGRATIONS = { sqlite: SQLITE, postgres: POSTGRES };

/** Brings the `sync` tables to the current version (idempotent; instances may run it together). */
export async function migrateSync(db: SqlDatabase): Promise<void> {
  await db.migrate('sync', SYNC_MIGRATIONS);
}
