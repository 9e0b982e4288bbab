// The SyncStore adapter over the SQL surface, one class for SQLite and PostgreSQL: reads and
// writes the sync changelog, device, key and rotation rows with bound parameters. It decides
// nothing; the sync area's domain modules do, inside `transaction()`.
import { randomUUID } from 'node:crypto';
import type { Engine, SqlDatabase, SqlExecutor } from './sql.js';
import { fieldsJsonSql, migrateSync } from './sync-schema.js';
import { readUsage, USAGE_COLUMNS, usageOf, usageParams, type Usage, type UsageRow } from './sync-usage.js';
import type { ChangeEntry, StoredChangeEntry } from '../schemas/sync.js';
import type {
  BatchRow,
  KeyRow,
  NewEntry,
  Owner,
  PushRecord,
  PushState,
  RetiredKey,
  RotationRow,
  RotationState,
  StoredPullPage,
  SyncApp,
  SyncAppPricing,
  SyncDevice,
  SyncRows,
  SyncStore,
} from './sync.js';
import { sqlText } from './sql-text.js';

interface EntryRow {
  seq: number;
  key_id: number;
  device_id: string | null;
  tbl: string;
  op: string;
  row_id: string;
  ts: string;
  data: string | null;
}

const APP_COLUMNS = 'id, name, min_charge_cents, per_gb_tenths_of_cent_per_month, annual_multiplier, min_cap_bytes, max_cap_bytes, free_bytes, created_at';
const DEVICE_COLUMNS = 'id, name, platform, created_at, last_seen_at';
const ENTRY_COLUMNS = 'seq, key_id, device_id, tbl, op, row_id, ts, data';
const ROTATION_COLUMNS = 'id, device_id, new_encrypted_key, new_key_id, target_seq, state, last_activity_ms';
const OWNER = 'app_id = ? AND user_id = ?';

const INSERT_ENTRIES = 'INSERT INTO sync_entries (app_id, user_id, seq, key_id, device_id, tbl, op, row_id, ts, data, fields_json) VALUES ';
const ENTRY_ROW = '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';
/**
 * Entries per INSERT: at 11 parameters a row, a statement (with a push's other writes) stays under
 * 999, the smallest parameter limit either engine ever had (58 rows bind 638, as 64 rows of 10
 * did); a longer push takes one INSERT per run. It also bounds the shapes (row counts) PostgreSQL
 * prepares per connection.
 */
const ENTRY_CHUNK = 58;
const ADD_CHANGELOG_BYTES = `INSERT INTO sync_changelog_usage (app_id, user_id, bytes) VALUES (?, ?, ?)
  ON CONFLICT (app_id, user_id) DO UPDATE SET bytes = sync_changelog_usage.bytes + excluded.bytes`;
const INSERT_BATCH = 'INSERT INTO sync_push_batches (app_id, user_id, device_id, batch_id, cursor, accepted, created_at) VALUES ';
const BATCH_ROW = '(?, ?, ?, ?, ?, ?, ?)';
const TOUCH_DEVICE = `UPDATE sync_devices SET last_seen_at = ? WHERE ${OWNER} AND id = ?`;
/**
 * What a group of pushes decides on: one row per asked (device, batch), in the order asked (the
 * VALUES list's third column), each with the owner's figures; those subqueries are uncorrelated,
 * so both engines evaluate them once. VALUES columns are named column1… on both engines.
 */
const PUSH_STATE_COLUMNS = `(SELECT cursor FROM sync_push_batches WHERE ${OWNER} AND device_id = p.column1 AND batch_id = p.column2) AS batch_cursor,
  (SELECT accepted FROM sync_push_batches WHERE ${OWNER} AND device_id = p.column1 AND batch_id = p.column2) AS batch_accepted,
  EXISTS (SELECT 1 FROM sync_devices WHERE ${OWNER} AND id = p.column1) AS device_exists,
  (SELECT new_key_id FROM sync_rotations WHERE ${OWNER} AND state = 'active') AS rotation_key_id,
  (SELECT key_id FROM sync_keys WHERE ${OWNER}) AS key_id,
  (SELECT COALESCE(MAX(seq), 0) FROM sync_entries WHERE ${OWNER}) AS max_seq`;

interface PushStateRow {
  batch_cursor: number | null;
  batch_accepted: number | null;
  device_exists: boolean | number;
  rotation_key_id: number | null;
  key_id: number | null;
  max_seq: number;
}

/** A boolean column: PostgreSQL answers true/false, SQLite 1/0. */
function truth(v: unknown): boolean {
  return v === true || v === 1;
}

/** The `(?, …), (?, …)` rows of INSERT_ENTRIES and their parameters. */
function entryValues(o: Owner, rows: NewEntry[]): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  for (const r of rows) {
    const e = r.entry;
    params.push(o.appId, o.userId, r.seq, r.keyId, r.deviceId, e.table, e.op, e.row_id, e.timestamp, r.dataJson, entryFieldsJson(r.deviceId, e));
  }
  return { sql: rows.map(() => ENTRY_ROW).join(', '), params };
}

/**
 * An entry's `fields_json`: its fields after `key_id`, as the pull writes them, up to `"data":`
 * (`,"device_id":…,"table":…,"op":…,"row_id":…,"timestamp":…,"data":`). None of them changes
 * after the push (a re-seal changes key_id and data, which stay columns), so the pull splices this
 * text instead of quoting five columns a row: a page of ten entries 31-47 µs in SQLite's step →
 * 16-24, of 500 entries 672 → 355 (bench/README.md, "fields_json", issue 37). The sync migration
 * writes the same text for rows stored before the column (sync-schema.ts, fieldsJsonSql).
 */
export function entryFieldsJson(deviceId: string | null, e: Pick<ChangeEntry, 'table' | 'op' | 'row_id' | 'timestamp'>): string {
  const q = JSON.stringify;
  return `,"device_id":${q(deviceId)},"table":${q(e.table)},"op":${q(e.op)},"row_id":${q(e.row_id)},"timestamp":${q(e.timestamp)},"data":`;
}

/** `rows` in runs of at most `n`. */
function chunks<T>(rows: T[], n: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += n) out.push(rows.slice(i, i + n));
  return out;
}

/** A row as the entry it stores, its data parsed. */
function entryOf(r: EntryRow): StoredChangeEntry {
  return { seq: r.seq, key_id: r.key_id, device_id: r.device_id, table: r.tbl, op: r.op, row_id: r.row_id, timestamp: r.ts, data: r.data === null ? null : (JSON.parse(r.data) as unknown) };
}

/**
 * One entry as the JSON text sync_pull answers, written by the database: a page of ten entries
 * cost 30 µs read as rows and written in JavaScript, 22 µs read as one text a row (no row of
 * eight values made through V8's API). Its strings were quoted once, at the push (fields_json).
 * test/src/store/sync.test.ts holds the page against the schema's serializer on both engines.
 */
const ENTRY_JSON = entryJson('fields_json');
/**
 * ENTRY_JSON for a page holding a row an instance of the earlier version inserted after the
 * migration (a cluster upgraded one instance at a time), whose fields_json is NULL and so is its
 * text: its fields quoted by the engine as the migration quotes them. Not the statement of every
 * page: in a loop on SQLite the COALESCE's fallback cost a page of ten entries about 7 µs even
 * when no row needed it, a cost of each run rather than each row (a page of 500 paid 5 µs more).
 */
const ENTRY_JSON_QUOTED: Record<Engine, string> = {
  sqlite: entryJson(`COALESCE(fields_json, ${fieldsJsonSql('sqlite')})`),
  postgres: entryJson(`COALESCE(fields_json, ${fieldsJsonSql('postgres')})`),
};
function entryJson(fields: string): string {
  return `'{"seq":' || seq || ',"key_id":' || key_id || ${fields} || COALESCE(data, 'null') || '}'`;
}
const SEQ_FIELD = '{"seq":';
/** An entry text's seq: its first field, `{"seq":N,`, as ENTRY_JSON writes it. */
export function entrySeq(entry: string): number {
  const comma = entry.indexOf(',', SEQ_FIELD.length);
  const seq = comma > SEQ_FIELD.length ? Number(entry.slice(SEQ_FIELD.length, comma)) : NaN;
  if (!entry.startsWith(SEQ_FIELD) || !Number.isSafeInteger(seq)) throw new Error(`an entry text that does not start with its seq: ${entry.slice(0, 40)}`);
  return seq;
}

/** One row more than asked tells whether more remain without a second query. */
function paged<T>(rows: EntryRow[], limit: number, as: (r: EntryRow) => T): { entries: T[]; has_more: boolean } {
  const has_more = rows.length > limit;
  return { entries: (has_more ? rows.slice(0, limit) : rows).map(as), has_more };
}

/** Row operations on one executor: the database itself, or one open transaction. */
class Rows implements SyncRows {
  constructor(protected readonly x: SqlExecutor) {}

  /** The UTF-8 byte length of a text column, in the executor's dialect. */
  private bytesOf(column: string): string {
    return this.x.engine === 'postgres' ? `octet_length(${column})` : `length(CAST(${column} AS BLOB))`;
  }

  lock(key: string): Promise<void> {
    return this.x.lock(key);
  }
  lockWithNext(key: string): Promise<void> {
    return this.x.lockWithNext(key);
  }

  // Apps.
  async createApp(input: { name: string; apiKeyHash: string; pricing: SyncAppPricing; now: string }): Promise<SyncApp> {
    const app: SyncApp = { id: randomUUID(), name: input.name, created_at: input.now, ...input.pricing };
    const p = input.pricing;
    await this.x.run(
      `INSERT INTO sync_apps (id, name, api_key, min_charge_cents, per_gb_tenths_of_cent_per_month, annual_multiplier, min_cap_bytes, max_cap_bytes, free_bytes, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [app.id, app.name, input.apiKeyHash, p.min_charge_cents, p.per_gb_tenths_of_cent_per_month, p.annual_multiplier, p.min_cap_bytes, p.max_cap_bytes, p.free_bytes, app.created_at],
    );
    return app;
  }
  appByKeyHash(apiKeyHash: string): Promise<SyncApp | undefined> {
    return this.x.get<SyncApp>(sqlText`SELECT ${APP_COLUMNS} FROM sync_apps WHERE api_key = ?`, [apiKeyHash]);
  }
  getApp(id: string): Promise<SyncApp | undefined> {
    return this.x.get<SyncApp>(sqlText`SELECT ${APP_COLUMNS} FROM sync_apps WHERE id = ?`, [id]);
  }
  async callerExists(appId: string, userId: string): Promise<boolean> {
    return truth(await this.x.value('SELECT EXISTS (SELECT 1 FROM sync_apps WHERE id = ?) AND EXISTS (SELECT 1 FROM users WHERE id = ?) AS ok', [appId, userId]));
  }
  listApps(): Promise<SyncApp[]> {
    // lower(name) first: names are unique ignoring case on both engines, so list them that way too.
    return this.x.all<SyncApp>(sqlText`SELECT ${APP_COLUMNS} FROM sync_apps ORDER BY lower(name), name`);
  }

  // Changelog.
  async maxSeq(o: Owner): Promise<number> {
    return (await this.x.value<number>(sqlText`SELECT COALESCE(MAX(seq), 0) FROM sync_entries WHERE ${OWNER}`, [o.appId, o.userId])) ?? 0;
  }
  async insertEntries(o: Owner, rows: NewEntry[]): Promise<void> {
    for (const c of chunks(rows, ENTRY_CHUNK)) {
      const v = entryValues(o, c);
      await this.x.run(INSERT_ENTRIES + v.sql, v.params);
    }
  }
  async pushState(o: Owner, input: { pushes: { deviceId: string; batchId: string }[]; withUsage: boolean }): Promise<PushState> {
    if (input.pushes.length === 0) throw new Error('pushState of no pushes');
    const owner = [o.appId, o.userId];
    const values = input.pushes.map(() => '(?, ?, CAST(? AS INTEGER))').join(', ');
    const rows = await this.x.all<PushStateRow & UsageRow>(
      `SELECT ${PUSH_STATE_COLUMNS}${input.withUsage ? `,\n  ${USAGE_COLUMNS}` : ''}\nFROM (VALUES ${values}) AS p ORDER BY p.column3`,
      [
        ...owner, ...owner, ...owner, ...owner, ...owner, ...owner,
        ...(input.withUsage ? usageParams(o.appId, o.userId) : []),
        ...input.pushes.flatMap((q, i) => [q.deviceId, q.batchId, i]),
      ],
    );
    const r = rows[0]!;
    return {
      asked: rows.map((a) => ({
        batch: a.batch_cursor === null || a.batch_accepted === null ? undefined : { cursor: a.batch_cursor, accepted: a.batch_accepted },
        deviceExists: truth(a.device_exists),
      })),
      rotationKeyId: r.rotation_key_id,
      keyId: r.key_id,
      maxSeq: r.max_seq,
      usage: input.withUsage ? usageOf(r) : undefined,
    };
  }
  async recordPushes(o: Owner, pushes: PushRecord[]): Promise<void> {
    if (pushes.length === 0) return;
    const entries = pushes.flatMap((p) => p.entries);
    const usageArgs = [o.appId, o.userId, pushes.reduce((n, p) => n + p.addedBytes, 0)];
    const batchSql = INSERT_BATCH + pushes.map(() => BATCH_ROW).join(', ');
    const batchArgs = pushes.flatMap((p) => [o.appId, o.userId, p.deviceId, p.batchId, p.cursor, p.accepted, p.now]);
    // Each device is seen at its latest push of the group.
    const seen = new Map<string, string>();
    for (const p of pushes) if ((seen.get(p.deviceId) ?? '') < p.now) seen.set(p.deviceId, p.now);
    const touches = [...seen];
    if (this.x.engine !== 'postgres') {
      // SQLite has no data-modifying CTEs (and no round trips to save).
      await this.insertEntries(o, entries);
      await this.x.run(ADD_CHANGELOG_BYTES, usageArgs);
      await this.x.run(batchSql, batchArgs);
      for (const [device, now] of touches) await this.x.run(TOUCH_DEVICE, [now, o.appId, o.userId, device]);
      return;
    }
    // PostgreSQL: the last run of entries and the other writes in one statement, sent with COMMIT.
    // The tables differ, so no part needs to see another's rows.
    const runs = chunks(entries, ENTRY_CHUNK);
    const last = runs.pop();
    for (const c of runs) await this.insertEntries(o, c);
    const v = last ? entryValues(o, last) : undefined;
    const touchSql = `UPDATE sync_devices AS d SET last_seen_at = t.column2 FROM (VALUES ${touches.map(() => '(?, ?)').join(', ')}) AS t WHERE d.app_id = ? AND d.user_id = ? AND d.id = t.column1`;
    await this.x.runLast(`WITH ${v ? `e AS (${INSERT_ENTRIES}${v.sql}), ` : ''}u AS (${ADD_CHANGELOG_BYTES}), b AS (${batchSql}) ${touchSql}`, [
      ...(v?.params ?? []),
      ...usageArgs,
      ...batchArgs,
      ...touches.flat(),
      o.appId,
      o.userId,
    ]);
  }
  async storedPage(o: Owner, input: { cursor: number; limit: number }): Promise<StoredPullPage> {
    // Texts alone, no row of seq and text: the cursor is the last entry's seq, its text's first field.
    const args = [o.appId, o.userId, input.cursor, input.limit + 1];
    let entries = await this.x.column<string | null>(sqlText`SELECT ${ENTRY_JSON} FROM sync_entries WHERE ${OWNER} AND seq > ? ORDER BY seq LIMIT ?`, args);
    if (entries.includes(null)) {
      entries = await this.x.column<string>(sqlText`SELECT ${ENTRY_JSON_QUOTED[this.x.engine]} FROM sync_entries WHERE ${OWNER} AND seq > ? ORDER BY seq LIMIT ?`, args);
    }
    const has_more = entries.length > input.limit;
    if (has_more) entries.length = input.limit;
    const last = entries[entries.length - 1];
    return { entries_json: `[${entries.join(',')}]`, cursor: last == null ? input.cursor : entrySeq(last), has_more };
  }
  async entryCount(o: Owner): Promise<number> {
    return (await this.x.value<number>(sqlText`SELECT COUNT(*) FROM sync_entries WHERE ${OWNER}`, [o.appId, o.userId])) ?? 0;
  }
  entryKeyId(o: Owner, seq: number): Promise<number | undefined> {
    return this.x.value<number>(sqlText`SELECT key_id FROM sync_entries WHERE ${OWNER} AND seq = ?`, [o.appId, o.userId, seq]);
  }
  async entryDataBytes(o: Owner, seq: number): Promise<number> {
    return (await this.x.value<number>(`SELECT COALESCE(${this.bytesOf('data')}, 0) FROM sync_entries WHERE ${OWNER} AND seq = ?`, [o.appId, o.userId, seq])) ?? 0;
  }
  async resealEntry(o: Owner, seq: number, keyId: number, dataJson: string): Promise<void> {
    await this.x.run(sqlText`UPDATE sync_entries SET key_id = ?, data = ? WHERE ${OWNER} AND seq = ?`, [keyId, dataJson, o.appId, o.userId, seq]);
  }
  async unsealedPage(o: Owner, input: { afterSeq: number; upToSeq: number; newKeyId: number; limit: number }): Promise<{ entries: StoredChangeEntry[]; has_more: boolean }> {
    const rows = await this.x.all<EntryRow>(sqlText`SELECT ${ENTRY_COLUMNS} FROM sync_entries WHERE ${OWNER} AND seq > ? AND seq <= ? AND key_id <> ? ORDER BY seq LIMIT ?`, [
      o.appId,
      o.userId,
      input.afterSeq,
      input.upToSeq,
      input.newKeyId,
      input.limit + 1,
    ]);
    return paged(rows, input.limit, entryOf);
  }
  async countUnsealed(o: Owner, upToSeq: number, keyId: number): Promise<number> {
    return (await this.x.value<number>(sqlText`SELECT COUNT(*) FROM sync_entries WHERE ${OWNER} AND seq <= ? AND key_id <> ?`, [o.appId, o.userId, upToSeq, keyId])) ?? 0;
  }
  async countWithKey(o: Owner, keyId: number): Promise<number> {
    return (await this.x.value<number>(sqlText`SELECT COUNT(*) FROM sync_entries WHERE ${OWNER} AND key_id = ?`, [o.appId, o.userId, keyId])) ?? 0;
  }
  batch(o: Owner, deviceId: string, batchId: string): Promise<BatchRow | undefined> {
    return this.x.get<BatchRow>(sqlText`SELECT cursor, accepted FROM sync_push_batches WHERE ${OWNER} AND device_id = ? AND batch_id = ?`, [o.appId, o.userId, deviceId, batchId]);
  }
  async insertBatch(o: Owner, input: { deviceId: string; batchId: string; cursor: number; accepted: number; now: string }): Promise<void> {
    await this.x.run(INSERT_BATCH + BATCH_ROW, [
      o.appId,
      o.userId,
      input.deviceId,
      input.batchId,
      input.cursor,
      input.accepted,
      input.now,
    ]);
  }
  async addChangelogBytes(o: Owner, delta: number): Promise<void> {
    await this.x.run(ADD_CHANGELOG_BYTES, [o.appId, o.userId, delta]);
  }
  usage(o: Owner): Promise<Usage> {
    return readUsage(this.x, o.appId, o.userId);
  }

  // Devices.
  device(o: Owner, id: string): Promise<SyncDevice | undefined> {
    return this.x.get<SyncDevice>(sqlText`SELECT ${DEVICE_COLUMNS} FROM sync_devices WHERE ${OWNER} AND id = ?`, [o.appId, o.userId, id]);
  }
  deviceByName(o: Owner, name: string): Promise<SyncDevice | undefined> {
    return this.x.get<SyncDevice>(sqlText`SELECT ${DEVICE_COLUMNS} FROM sync_devices WHERE ${OWNER} AND name = ?`, [o.appId, o.userId, name]);
  }
  async insertDevice(o: Owner, d: SyncDevice): Promise<void> {
    await this.x.run('INSERT INTO sync_devices (id, app_id, user_id, name, platform, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?, ?)', [
      d.id,
      o.appId,
      o.userId,
      d.name,
      d.platform,
      d.created_at,
      d.last_seen_at,
    ]);
  }
  async updateDevice(o: Owner, id: string, input: { platform: string | null; now: string }): Promise<void> {
    await this.x.run(sqlText`UPDATE sync_devices SET platform = COALESCE(?, platform), last_seen_at = ? WHERE ${OWNER} AND id = ?`, [input.platform, input.now, o.appId, o.userId, id]);
  }
  async touchDevice(o: Owner, id: string, now: string): Promise<void> {
    await this.x.run(TOUCH_DEVICE, [now, o.appId, o.userId, id]);
  }
  listDevices(o: Owner): Promise<SyncDevice[]> {
    return this.x.all<SyncDevice>(sqlText`SELECT ${DEVICE_COLUMNS} FROM sync_devices WHERE ${OWNER} ORDER BY created_at, name`, [o.appId, o.userId]);
  }
  async deleteDevice(o: Owner, id: string): Promise<boolean> {
    return (await this.x.run(sqlText`DELETE FROM sync_devices WHERE ${OWNER} AND id = ?`, [o.appId, o.userId, id])).changes > 0;
  }
  async deviceCount(o: Owner): Promise<number> {
    return (await this.x.value<number>(sqlText`SELECT COUNT(*) FROM sync_devices WHERE ${OWNER}`, [o.appId, o.userId])) ?? 0;
  }

  // Keys.
  key(o: Owner): Promise<KeyRow | undefined> {
    return this.x.get<KeyRow>(sqlText`SELECT encrypted_key, key_version, key_id FROM sync_keys WHERE ${OWNER}`, [o.appId, o.userId]);
  }
  async insertKey(o: Owner, k: KeyRow, now: string): Promise<void> {
    await this.x.run('INSERT INTO sync_keys (app_id, user_id, encrypted_key, key_version, key_id, updated_at) VALUES (?, ?, ?, ?, ?, ?)', [o.appId, o.userId, k.encrypted_key, k.key_version, k.key_id, now]);
  }
  async updateKey(o: Owner, k: KeyRow, now: string): Promise<void> {
    await this.x.run(sqlText`UPDATE sync_keys SET encrypted_key = ?, key_version = ?, key_id = ?, updated_at = ? WHERE ${OWNER}`, [k.encrypted_key, k.key_version, k.key_id, now, o.appId, o.userId]);
  }
  retiredKeys(o: Owner): Promise<RetiredKey[]> {
    return this.x.all<RetiredKey>(sqlText`SELECT encrypted_key, key_id FROM sync_retired_keys WHERE ${OWNER} ORDER BY key_id`, [o.appId, o.userId]);
  }
  async retireKey(o: Owner, k: RetiredKey, now: string): Promise<void> {
    await this.x.run(
      `INSERT INTO sync_retired_keys (app_id, user_id, key_id, encrypted_key, retired_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (app_id, user_id, key_id) DO UPDATE SET encrypted_key = excluded.encrypted_key, retired_at = excluded.retired_at`,
      [o.appId, o.userId, k.key_id, k.encrypted_key, now],
    );
  }
  async dropUnusedRetiredKeys(o: Owner): Promise<void> {
    await this.x.run(
      sqlText`DELETE FROM sync_retired_keys WHERE ${OWNER}
       AND NOT EXISTS (SELECT 1 FROM sync_entries e WHERE e.app_id = sync_retired_keys.app_id AND e.user_id = sync_retired_keys.user_id AND e.key_id = sync_retired_keys.key_id)`,
      [o.appId, o.userId],
    );
  }

  // Rotations.
  activeRotation(o: Owner): Promise<RotationRow | undefined> {
    return this.x.get<RotationRow>(sqlText`SELECT ${ROTATION_COLUMNS} FROM sync_rotations WHERE ${OWNER} AND state = 'active'`, [o.appId, o.userId]);
  }
  rotation(o: Owner, id: string): Promise<RotationRow | undefined> {
    return this.x.get<RotationRow>(sqlText`SELECT ${ROTATION_COLUMNS} FROM sync_rotations WHERE ${OWNER} AND id = ?`, [o.appId, o.userId, id]);
  }
  async maxRotationKeyId(o: Owner): Promise<number> {
    return (await this.x.value<number>(sqlText`SELECT COALESCE(MAX(new_key_id), 0) FROM sync_rotations WHERE ${OWNER}`, [o.appId, o.userId])) ?? 0;
  }
  async insertRotation(o: Owner, r: Omit<RotationRow, 'state'>, createdAt: string): Promise<void> {
    await this.x.run(
      `INSERT INTO sync_rotations (id, app_id, user_id, device_id, new_encrypted_key, new_key_id, target_seq, state, created_at, last_activity_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'active', ?, ?)`,
      [r.id, o.appId, o.userId, r.device_id, r.new_encrypted_key, r.new_key_id, r.target_seq, createdAt, r.last_activity_ms],
    );
  }
  async touchRotation(o: Owner, id: string, nowMs: number): Promise<void> {
    await this.x.run(sqlText`UPDATE sync_rotations SET last_activity_ms = ? WHERE ${OWNER} AND id = ?`, [nowMs, o.appId, o.userId, id]);
  }
  async setRotationState(o: Owner, id: string, state: RotationState, nowMs: number): Promise<void> {
    await this.x.run(sqlText`UPDATE sync_rotations SET state = ?, last_activity_ms = ? WHERE ${OWNER} AND id = ?`, [state, nowMs, o.appId, o.userId, id]);
  }
}

export class SqlSyncStore extends Rows implements SyncStore {
  private constructor(private readonly sql: SqlDatabase) {
    super(sql);
  }

  /** The store on `sql`, its `sync` tables migrated. */
  static async open(sql: SqlDatabase): Promise<SqlSyncStore> {
    await migrateSync(sql);
    return new SqlSyncStore(sql);
  }

  transaction<T>(fn: (tx: SyncRows) => Promise<T>): Promise<T> {
    return this.sql.transaction((x) => fn(new Rows(x)));
  }

  async close(): Promise<void> {
    // The database belongs to whoever opened it (the marketplace, or an admin command).
  }
}
