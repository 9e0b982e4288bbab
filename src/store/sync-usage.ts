// Storage use of a sync (app, user) as stored rows say it: confirmed blobs, changelog ciphertext,
// stored parts and the reservations of pending uploads, with the cap in force. Read inside the
// transactions of the sync domain modules (push, reserve, confirm), which weigh these figures.
import type { SqlExecutor } from './sql.js';

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

/** The (app, user)'s usage as `x` (a transaction or the database) sees it. */
export async function readUsage(x: SqlExecutor, appId: string, userId: string): Promise<Usage> {
  const b = (await x.get<{ n: number; bytes: number }>('SELECT COUNT(*) AS n, COALESCE(SUM(size_bytes), 0) AS bytes FROM sync_blobs WHERE app_id = ? AND user_id = ?', [appId, userId]))!;
  const parts = (await x.value<number>(
    `SELECT COALESCE(SUM(p.size_bytes), 0) FROM sync_upload_parts p JOIN sync_uploads u ON u.id = p.upload_id
     WHERE u.app_id = ? AND u.user_id = ? AND u.state IN ('open', 'completed')`,
    [appId, userId],
  ))!;
  const reserved = (await x.value<number>(`SELECT COALESCE(SUM(size_bytes), 0) FROM sync_uploads WHERE app_id = ? AND user_id = ? AND state IN (${RESERVED_LIST})`, [appId, userId]))!;
  const changelog = (await x.value<number>('SELECT bytes FROM sync_changelog_usage WHERE app_id = ? AND user_id = ?', [appId, userId])) ?? 0;
  const sub = await x.get<{ status: string; cap_bytes: number }>('SELECT status, cap_bytes FROM sync_subscriptions WHERE app_id = ? AND user_id = ?', [appId, userId]);
  const active = sub?.status === 'active';
  return {
    used_bytes: b.bytes + changelog + parts,
    blob_bytes: b.bytes,
    blob_count: b.n,
    changelog_bytes: changelog,
    open_part_bytes: parts,
    reserved_bytes: reserved,
    cap_bytes: active ? sub.cap_bytes : ((await x.value<number>('SELECT free_bytes FROM sync_apps WHERE id = ?', [appId])) ?? 0),
    subscription_active: active,
  };
}
