// Storage use of a sync (app, user) as stored rows say it: confirmed blobs, changelog ciphertext,
// stored parts and the reservations of pending uploads, with the cap in force. Read inside the
// transactions of the sync domain modules (push, reserve, confirm), which weigh these figures.
import type { SqlExecutor } from './sql.js';
import { sqlText } from './sql-text.js';

export interface Usage {
  /** What is stored and billed: blob_bytes + changelog_bytes + open_part_bytes (spec status `storage_used_bytes`). */
  used_bytes: number;
  blob_bytes: number;
  blob_count: number;
  /** Changelog entries as stored (data JSON, table, op, row_id and timestamp, UTF-8 bytes). */
  changelog_bytes: number;
  /** Stored parts of open (or completed, unconfirmed) multipart sessions. */
  open_part_bytes: number;
  /** Full signed sizes of pending uploads: one-shot grants not yet settled and unconfirmed multipart sessions. */
  reserved_bytes: number;
  cap_bytes: number;
  subscription_active: boolean;
}

/** Upload states whose signed size is reserved against the cap (see the sync area's quota.ts). */
export const RESERVED_STATES = ['single', 'promoting', 'rejected', 'open', 'completed'] as const;

/** SQLite SQL of one entry's stored size, over the columns of sync_entries (kept equal to entryBytes). */
export const ENTRY_BYTES_SQL = `COALESCE(length(CAST(data AS BLOB)), 0) + length(CAST(tbl AS BLOB)) + length(CAST(op AS BLOB)) + length(CAST(row_id AS BLOB)) + length(CAST(ts AS BLOB))`;

/** Stored size of one changelog entry, as ENTRY_BYTES_SQL counts it. */
export function entryBytes(e: { table: string; op: string; row_id: string; timestamp: string; dataJson: string | null }): number {
  // A missing field is left for the NOT NULL constraint to refuse, as for any insert.
  const b = (s: string | null | undefined): number => (typeof s === 'string' ? Buffer.byteLength(s, 'utf8') : 0);
  return (e.dataJson === null ? 0 : b(e.dataJson)) + b(e.table) + b(e.op) + b(e.row_id) + b(e.timestamp);
}

const RESERVED_LIST = RESERVED_STATES.map((s) => `'${s}'`).join(', ');

/** The row USAGE_COLUMNS selects. */
export interface UsageRow {
  usage_blob_count: number;
  usage_blob_bytes: number;
  usage_part_bytes: number;
  usage_reserved_bytes: number;
  usage_changelog_bytes: number | null;
  /** The cap of an active subscription, null when none is active. */
  usage_subscribed_cap: number | null;
  usage_free_bytes: number | null;
}

/**
 * The usage figures as scalar subqueries: the select list of one statement (each a PostgreSQL
 * round trip otherwise), which other reads of the same transaction may extend. Its `?`s are
 * bound by usageParams, in this order.
 */
export const USAGE_COLUMNS = `(SELECT COUNT(*) FROM sync_blobs WHERE app_id = ? AND user_id = ?) AS usage_blob_count,
  (SELECT COALESCE(SUM(size_bytes), 0) FROM sync_blobs WHERE app_id = ? AND user_id = ?) AS usage_blob_bytes,
  (SELECT COALESCE(SUM(p.size_bytes), 0) FROM sync_upload_parts p JOIN sync_uploads u ON u.id = p.upload_id
    WHERE u.app_id = ? AND u.user_id = ? AND u.state IN ('open', 'completed')) AS usage_part_bytes,
  (SELECT COALESCE(SUM(size_bytes), 0) FROM sync_uploads WHERE app_id = ? AND user_id = ? AND state IN (${RESERVED_LIST})) AS usage_reserved_bytes,
  (SELECT bytes FROM sync_changelog_usage WHERE app_id = ? AND user_id = ?) AS usage_changelog_bytes,
  (SELECT cap_bytes FROM sync_subscriptions WHERE app_id = ? AND user_id = ? AND status = 'active') AS usage_subscribed_cap,
  (SELECT free_bytes FROM sync_apps WHERE id = ?) AS usage_free_bytes`;

/** The parameters of USAGE_COLUMNS. */
export function usageParams(appId: string, userId: string): unknown[] {
  return [appId, userId, appId, userId, appId, userId, appId, userId, appId, userId, appId, userId, appId];
}

/** The Usage a USAGE_COLUMNS row gives: the subscription's cap while one is active, else the app's free storage. */
export function usageOf(r: UsageRow): Usage {
  const changelog = r.usage_changelog_bytes ?? 0;
  const active = r.usage_subscribed_cap !== null;
  return {
    used_bytes: r.usage_blob_bytes + changelog + r.usage_part_bytes,
    blob_bytes: r.usage_blob_bytes,
    blob_count: r.usage_blob_count,
    changelog_bytes: changelog,
    open_part_bytes: r.usage_part_bytes,
    reserved_bytes: r.usage_reserved_bytes,
    cap_bytes: r.usage_subscribed_cap ?? r.usage_free_bytes ?? 0,
    subscription_active: active,
  };
}

/** The (app, user)'s usage as `x` (a transaction or the database) sees it, in one statement. */
export async function readUsage(x: SqlExecutor, appId: string, userId: string): Promise<Usage> {
  return usageOf((await x.get<UsageRow>(sqlText`SELECT ${USAGE_COLUMNS}`, usageParams(appId, userId)))!);
}
