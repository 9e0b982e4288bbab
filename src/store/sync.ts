// SyncStore: the marketplace sync area's apps, changelog (push batches, pull pages), devices,
// master-key envelopes and the key-rotation state machine, as whole atomic operations.
// Interface first; the SQLite adapter below it. Only ciphertext ever reaches it.
import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { Db } from './sqlite.js';
import { migrateSync } from './sync-schema.js';
import type { ChangeEntry, StoredChangeEntry } from '../schemas/sync.js';
import { entryBytes, UsageReader, type Usage } from './sync-usage.js';

export interface SyncAppPricing {
  min_charge_cents: number;
  per_gb_tenths_of_cent_per_month: number;
  annual_multiplier: number;
  min_cap_bytes: number;
  max_cap_bytes: number;
  /** Storage allowed without a subscription. */
  free_bytes: number;
}

export interface SyncApp extends SyncAppPricing {
  id: string;
  name: string;
  created_at: string;
}

export interface SyncDevice {
  id: string;
  name: string;
  platform: string | null;
  created_at: string;
  last_seen_at: string;
}

export interface Owner {
  appId: string;
  userId: string;
}

export type PushOutcome =
  | { kind: 'ok'; cursor: number; accepted: number; duplicate: boolean }
  | { kind: 'unknown_device' }
  /** The entries are not sealed with the key new entries must use (`expected`, null: no key stored). */
  | { kind: 'wrong_key'; expected: number | null }
  /** `admit` refused `added` more changelog bytes on top of `usage`; nothing was stored. */
  | { kind: 'over_cap'; usage: Usage; added: number };

export interface PullPage {
  entries: StoredChangeEntry[];
  cursor: number;
  has_more: boolean;
}

export interface KeyInfo {
  encrypted_key: string;
  key_version: number;
  key_id: number;
  pending_key: { encrypted_key: string; key_id: number; rotation_id: string; target_seq: number } | null;
  retired_keys: { encrypted_key: string; key_id: number }[];
}

export type PutKeyOutcome = { kind: 'ok'; key_version: number; key_id: number } | { kind: 'version_mismatch'; current: number } | { kind: 'rotating' };

export type BeginOutcome =
  | { kind: 'ok'; rotation_id: string; target_seq: number; new_key_id: number; resumed: boolean }
  | { kind: 'no_key' }
  | { kind: 'unknown_device' }
  | { kind: 'version_mismatch'; current: number }
  /** Another device's rotation, or this device's with a different new envelope. */
  | { kind: 'in_progress'; device_id: string; same_device: boolean };

export type RotationEntriesOutcome = { kind: 'ok'; entries: StoredChangeEntry[]; has_more: boolean; remaining: number } | { kind: 'not_found' };
export type RotationBatchOutcome = { kind: 'ok'; updated: number; remaining: number } | { kind: 'not_found' } | { kind: 'not_in_rotation'; seq: number };
export type CompleteOutcome = { kind: 'completed'; key_version: number; key_id: number; already: boolean } | { kind: 'remaining'; remaining: number } | { kind: 'not_found' };

export interface SyncCounts {
  cursor: number;
  entry_count: number;
  device_count: number;
  key_version: number | null;
  key_id: number | null;
  rotation_in_progress: boolean;
}

export interface SyncStore {
  createApp(input: { name: string; apiKeyHash: string; pricing: SyncAppPricing; now: string }): Promise<SyncApp>;
  /** The app whose API key hashes to `apiKeyHash` (see apiKeyHash in the sync area). */
  appByKeyHash(apiKeyHash: string): Promise<SyncApp | undefined>;
  getApp(id: string): Promise<SyncApp | undefined>;
  listApps(): Promise<SyncApp[]>;

  /**
   * Appends the entries, sealed with `keyId`, after the owner's newest sequence number, all or
   * none; a batch id this device used before returns the first answer and appends nothing.
   * `admit` (the domain's quota rule) is asked, inside the same transaction, whether the
   * entries' stored bytes fit on top of the owner's storage use.
   */
  push(o: Owner, input: { deviceId: string; batchId: string; keyId: number; entries: ChangeEntry[]; now: string; admit?: (usage: Usage, addedBytes: number) => boolean }): Promise<PushOutcome>;
  /** Entries after `cursor`, oldest first, at most `limit`. */
  pull(o: Owner, input: { cursor: number; limit: number; deviceId?: string; now: string }): Promise<PullPage>;

  /** Registers a device, or updates the one of the same name (its id stays). */
  registerDevice(o: Owner, input: { name: string; platform?: string; now: string }): Promise<SyncDevice>;
  listDevices(o: Owner): Promise<SyncDevice[]>;
  deleteDevice(o: Owner, id: string): Promise<boolean>;

  getKey(o: Owner): Promise<KeyInfo | undefined>;
  /** Stores the envelope if `expectedVersion` is the stored version (0: none stored yet). */
  putKey(o: Owner, input: { encryptedKey: string; expectedVersion: number; now: string }): Promise<PutKeyOutcome>;

  beginRotation(o: Owner, input: { deviceId: string; newEncryptedKey: string; expectedVersion: number; nowMs: number }): Promise<BeginOutcome>;
  rotationEntries(o: Owner, input: { rotationId: string; afterSeq: number; limit: number; nowMs: number }): Promise<RotationEntriesOutcome>;
  rotationBatch(o: Owner, input: { rotationId: string; entries: { seq: number; data: unknown }[]; nowMs: number }): Promise<RotationBatchOutcome>;
  completeRotation(o: Owner, input: { rotationId: string; nowMs: number }): Promise<CompleteOutcome>;
  /** Cancels the owner's rotation if its last activity is at or before `idleSinceMs`. */
  cancelStaleRotation(o: Owner, input: { idleSinceMs: number; nowMs: number }): Promise<boolean>;

  /** Changelog, device and key counters (storage use is the blob store's: SyncStorageStore.usage). */
  counts(o: Owner): Promise<SyncCounts>;

  close(): Promise<void>;
}

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
interface RotationRow {
  id: string;
  device_id: string;
  new_encrypted_key: string;
  new_key_id: number;
  target_seq: number;
  state: string;
  last_activity_ms: number;
}
interface KeyRow {
  encrypted_key: string;
  key_version: number;
  key_id: number;
}

const APP_COLUMNS = 'id, name, min_charge_cents, per_gb_tenths_of_cent_per_month, annual_multiplier, min_cap_bytes, max_cap_bytes, free_bytes, created_at';
const DEVICE_COLUMNS = 'id, name, platform, created_at, last_seen_at';
const ENTRY_COLUMNS = 'seq, key_id, device_id, tbl, op, row_id, ts, data';

function toEntry(r: EntryRow): StoredChangeEntry {
  return { seq: r.seq, key_id: r.key_id, device_id: r.device_id, table: r.tbl, op: r.op, row_id: r.row_id, timestamp: r.ts, data: r.data === null ? null : (JSON.parse(r.data) as unknown) };
}

// Statements bind any parameters; the rows are cast where they are read.
type Stmt = Database.Statement<unknown[]>;

export class SqliteSyncStore implements SyncStore {
  private readonly q: Record<string, Stmt>;
  private readonly tx: {
    push: (o: Owner, input: Parameters<SyncStore['push']>[1]) => PushOutcome;
    putKey: (o: Owner, input: Parameters<SyncStore['putKey']>[1]) => PutKeyOutcome;
    begin: (o: Owner, input: Parameters<SyncStore['beginRotation']>[1]) => BeginOutcome;
    batch: (o: Owner, input: Parameters<SyncStore['rotationBatch']>[1]) => RotationBatchOutcome;
    complete: (o: Owner, input: Parameters<SyncStore['completeRotation']>[1]) => CompleteOutcome;
    cancel: (o: Owner, input: Parameters<SyncStore['cancelStaleRotation']>[1]) => boolean;
    register: (o: Owner, input: Parameters<SyncStore['registerDevice']>[1]) => SyncDevice;
  };

  constructor(private readonly db: Db) {
    migrateSync(db);
    this.q = {
      insertApp: db.prepare(
        `INSERT INTO sync_apps (id, name, api_key, min_charge_cents, per_gb_tenths_of_cent_per_month, annual_multiplier, min_cap_bytes, max_cap_bytes, free_bytes, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      appByKey: db.prepare(`SELECT ${APP_COLUMNS} FROM sync_apps WHERE api_key = ?`),
      appById: db.prepare(`SELECT ${APP_COLUMNS} FROM sync_apps WHERE id = ?`),
      apps: db.prepare(`SELECT ${APP_COLUMNS} FROM sync_apps ORDER BY name`),

      maxSeq: db.prepare('SELECT COALESCE(MAX(seq), 0) FROM sync_entries WHERE app_id = ? AND user_id = ?').pluck(),
      insertEntry: db.prepare('INSERT INTO sync_entries (app_id, user_id, seq, key_id, device_id, tbl, op, row_id, ts, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)'),
      batchById: db.prepare('SELECT cursor, accepted FROM sync_push_batches WHERE app_id = ? AND user_id = ? AND device_id = ? AND batch_id = ?'),
      insertBatch: db.prepare('INSERT INTO sync_push_batches (app_id, user_id, device_id, batch_id, cursor, accepted, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)'),
      page: db.prepare(`SELECT ${ENTRY_COLUMNS} FROM sync_entries WHERE app_id = ? AND user_id = ? AND seq > ? ORDER BY seq LIMIT ?`),
      entryCount: db.prepare('SELECT COUNT(*) FROM sync_entries WHERE app_id = ? AND user_id = ?').pluck(),

      deviceById: db.prepare(`SELECT ${DEVICE_COLUMNS} FROM sync_devices WHERE app_id = ? AND user_id = ? AND id = ?`),
      deviceByName: db.prepare(`SELECT ${DEVICE_COLUMNS} FROM sync_devices WHERE app_id = ? AND user_id = ? AND name = ?`),
      insertDevice: db.prepare('INSERT INTO sync_devices (id, app_id, user_id, name, platform, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?, ?)'),
      updateDevice: db.prepare('UPDATE sync_devices SET platform = COALESCE(?, platform), last_seen_at = ? WHERE id = ?'),
      touchDevice: db.prepare('UPDATE sync_devices SET last_seen_at = ? WHERE app_id = ? AND user_id = ? AND id = ?'),
      devices: db.prepare(`SELECT ${DEVICE_COLUMNS} FROM sync_devices WHERE app_id = ? AND user_id = ? ORDER BY created_at, name`),
      deleteDevice: db.prepare('DELETE FROM sync_devices WHERE app_id = ? AND user_id = ? AND id = ?'),
      deviceCount: db.prepare('SELECT COUNT(*) FROM sync_devices WHERE app_id = ? AND user_id = ?').pluck(),

      key: db.prepare('SELECT encrypted_key, key_version, key_id FROM sync_keys WHERE app_id = ? AND user_id = ?'),
      insertKey: db.prepare('INSERT INTO sync_keys (app_id, user_id, encrypted_key, key_version, key_id, updated_at) VALUES (?, ?, ?, 1, 1, ?)'),
      updateKey: db.prepare('UPDATE sync_keys SET encrypted_key = ?, key_version = ?, key_id = ?, updated_at = ? WHERE app_id = ? AND user_id = ?'),
      retired: db.prepare('SELECT encrypted_key, key_id FROM sync_retired_keys WHERE app_id = ? AND user_id = ? ORDER BY key_id'),
      insertRetired: db.prepare('INSERT OR REPLACE INTO sync_retired_keys (app_id, user_id, key_id, encrypted_key, retired_at) VALUES (?, ?, ?, ?, ?)'),
      dropUnusedRetired: db.prepare(
        `DELETE FROM sync_retired_keys WHERE app_id = ? AND user_id = ?
         AND NOT EXISTS (SELECT 1 FROM sync_entries e WHERE e.app_id = sync_retired_keys.app_id AND e.user_id = sync_retired_keys.user_id AND e.key_id = sync_retired_keys.key_id)`,
      ),

      activeRotation: db.prepare("SELECT id, device_id, new_encrypted_key, new_key_id, target_seq, state, last_activity_ms FROM sync_rotations WHERE app_id = ? AND user_id = ? AND state = 'active'"),
      rotationById: db.prepare('SELECT id, device_id, new_encrypted_key, new_key_id, target_seq, state, last_activity_ms FROM sync_rotations WHERE app_id = ? AND user_id = ? AND id = ?'),
      maxRotationKeyId: db.prepare('SELECT COALESCE(MAX(new_key_id), 0) FROM sync_rotations WHERE app_id = ? AND user_id = ?').pluck(),
      insertRotation: db.prepare(
        `INSERT INTO sync_rotations (id, app_id, user_id, device_id, new_encrypted_key, new_key_id, target_seq, state, created_at, last_activity_ms)
         VALUES (?, ?, ?, ?, ?, ?, ?, 'active', ?, ?)`,
      ),
      touchRotation: db.prepare('UPDATE sync_rotations SET last_activity_ms = ? WHERE id = ?'),
      setRotationState: db.prepare('UPDATE sync_rotations SET state = ?, last_activity_ms = ? WHERE id = ?'),
      // Entries of a rotation: at or below its target and not yet sealed with its new key.
      rotationPage: db.prepare(`SELECT ${ENTRY_COLUMNS} FROM sync_entries WHERE app_id = ? AND user_id = ? AND seq > ? AND seq <= ? AND key_id != ? ORDER BY seq LIMIT ?`),
      upTo: db.prepare('SELECT COUNT(*) FROM sync_entries WHERE app_id = ? AND user_id = ? AND seq <= ?').pluck(),
      resealedUpTo: db.prepare('SELECT COUNT(*) FROM sync_entries WHERE app_id = ? AND user_id = ? AND key_id = ? AND seq <= ?').pluck(),
      usesKey: db.prepare('SELECT COUNT(*) FROM sync_entries WHERE app_id = ? AND user_id = ? AND key_id = ?').pluck(),
      entryKey: db.prepare('SELECT key_id FROM sync_entries WHERE app_id = ? AND user_id = ? AND seq = ?').pluck(),
      reseal: db.prepare('UPDATE sync_entries SET key_id = ?, data = ? WHERE app_id = ? AND user_id = ? AND seq = ?'),
      entryDataBytes: db.prepare('SELECT COALESCE(length(CAST(data AS BLOB)), 0) FROM sync_entries WHERE app_id = ? AND user_id = ? AND seq = ?').pluck(),
      addChangelogBytes: db.prepare(
        `INSERT INTO sync_changelog_usage (app_id, user_id, bytes) VALUES (?, ?, ?)
         ON CONFLICT (app_id, user_id) DO UPDATE SET bytes = bytes + excluded.bytes`,
      ),

    };

    const remaining = (o: Owner, r: RotationRow): number =>
      (this.q.upTo!.get(o.appId, o.userId, r.target_seq) as number) - (this.q.resealedUpTo!.get(o.appId, o.userId, r.new_key_id, r.target_seq) as number);
    const usage_ = UsageReader.for(db);
    const active = (o: Owner): RotationRow | undefined => this.q.activeRotation!.get(o.appId, o.userId) as RotationRow | undefined;

    // BEGIN IMMEDIATE: reading the newest seq (or state) and writing hold one write lock.
    const t = <A extends unknown[], R>(fn: (...a: A) => R): ((...a: A) => R) => {
      const tx = db.transaction(fn);
      return (...a: A) => tx.immediate(...a);
    };
    this.tx = {
      push: t((o: Owner, input: Parameters<SyncStore['push']>[1]): PushOutcome => {
        const prior = this.q.batchById!.get(o.appId, o.userId, input.deviceId, input.batchId) as { cursor: number; accepted: number } | undefined;
        if (prior) return { kind: 'ok', cursor: prior.cursor, accepted: prior.accepted, duplicate: true };
        if (!this.q.deviceById!.get(o.appId, o.userId, input.deviceId)) return { kind: 'unknown_device' };
        // New entries are sealed with the rotation's new key while one runs, so they never need re-sealing.
        const rot = active(o);
        const key = this.q.key!.get(o.appId, o.userId) as KeyRow | undefined;
        const expected = rot ? rot.new_key_id : key ? key.key_id : null;
        if (expected === null || input.keyId !== expected) return { kind: 'wrong_key', expected };
        const rows = input.entries.map((e) => ({ e, dataJson: e.data === undefined ? null : JSON.stringify(e.data) }));
        const added = rows.reduce((n, r) => n + entryBytes({ ...r.e, dataJson: r.dataJson }), 0);
        if (input.admit) {
          const usage = usage_.read(o.appId, o.userId);
          if (!input.admit(usage, added)) return { kind: 'over_cap', usage, added };
        }
        let seq = this.q.maxSeq!.get(o.appId, o.userId) as number;
        for (const { e, dataJson } of rows) {
          seq += 1;
          this.q.insertEntry!.run(o.appId, o.userId, seq, input.keyId, input.deviceId, e.table, e.op, e.row_id, e.timestamp, dataJson);
        }
        this.q.addChangelogBytes!.run(o.appId, o.userId, added);
        this.q.insertBatch!.run(o.appId, o.userId, input.deviceId, input.batchId, seq, input.entries.length, input.now);
        this.q.touchDevice!.run(input.now, o.appId, o.userId, input.deviceId);
        return { kind: 'ok', cursor: seq, accepted: input.entries.length, duplicate: false };
      }),

      register: t((o: Owner, input: Parameters<SyncStore['registerDevice']>[1]): SyncDevice => {
        const existing = this.q.deviceByName!.get(o.appId, o.userId, input.name) as SyncDevice | undefined;
        if (existing) {
          this.q.updateDevice!.run(input.platform ?? null, input.now, existing.id);
          return this.q.deviceById!.get(o.appId, o.userId, existing.id) as SyncDevice;
        }
        const d: SyncDevice = { id: randomUUID(), name: input.name, platform: input.platform ?? null, created_at: input.now, last_seen_at: input.now };
        this.q.insertDevice!.run(d.id, o.appId, o.userId, d.name, d.platform, d.created_at, d.last_seen_at);
        return d;
      }),

      putKey: t((o: Owner, input: Parameters<SyncStore['putKey']>[1]): PutKeyOutcome => {
        const key = this.q.key!.get(o.appId, o.userId) as KeyRow | undefined;
        const current = key?.key_version ?? 0;
        if (input.expectedVersion !== current) return { kind: 'version_mismatch', current };
        // Re-wrapping the key mid-rotation would strand the rotation's pending envelope.
        if (active(o)) return { kind: 'rotating' };
        if (!key) {
          this.q.insertKey!.run(o.appId, o.userId, input.encryptedKey, input.now);
          return { kind: 'ok', key_version: 1, key_id: 1 };
        }
        this.q.updateKey!.run(input.encryptedKey, key.key_version + 1, key.key_id, input.now, o.appId, o.userId);
        return { kind: 'ok', key_version: key.key_version + 1, key_id: key.key_id };
      }),

      begin: t((o: Owner, input: Parameters<SyncStore['beginRotation']>[1]): BeginOutcome => {
        const key = this.q.key!.get(o.appId, o.userId) as KeyRow | undefined;
        if (!key) return { kind: 'no_key' };
        if (!this.q.deviceById!.get(o.appId, o.userId, input.deviceId)) return { kind: 'unknown_device' };
        if (input.expectedVersion !== key.key_version) return { kind: 'version_mismatch', current: key.key_version };
        const rot = active(o);
        if (rot) {
          const same = rot.device_id === input.deviceId;
          if (!same || rot.new_encrypted_key !== input.newEncryptedKey) return { kind: 'in_progress', device_id: rot.device_id, same_device: same };
          this.q.touchRotation!.run(input.nowMs, rot.id);
          return { kind: 'ok', rotation_id: rot.id, target_seq: rot.target_seq, new_key_id: rot.new_key_id, resumed: true };
        }
        // Key ids are never reused: not the current one, nor one of an earlier (cancelled) rotation.
        const newKeyId = Math.max(key.key_id, this.q.maxRotationKeyId!.get(o.appId, o.userId) as number) + 1;
        const id = randomUUID();
        const target = this.q.maxSeq!.get(o.appId, o.userId) as number;
        this.q.insertRotation!.run(id, o.appId, o.userId, input.deviceId, input.newEncryptedKey, newKeyId, target, new Date(input.nowMs).toISOString(), input.nowMs);
        return { kind: 'ok', rotation_id: id, target_seq: target, new_key_id: newKeyId, resumed: false };
      }),

      batch: t((o: Owner, input: Parameters<SyncStore['rotationBatch']>[1]): RotationBatchOutcome => {
        const rot = active(o);
        if (!rot || rot.id !== input.rotationId) return { kind: 'not_found' };
        // All or none: every entry must belong to this rotation before any is replaced.
        for (const e of input.entries) {
          if (e.seq > rot.target_seq || this.q.entryKey!.get(o.appId, o.userId, e.seq) === undefined) return { kind: 'not_in_rotation', seq: e.seq };
        }
        let delta = 0;
        for (const e of input.entries) {
          const dataJson = JSON.stringify(e.data ?? null);
          // Re-sealed ciphertext replaces the old in the storage count (re-sealing is never refused).
          delta += Buffer.byteLength(dataJson, 'utf8') - (this.q.entryDataBytes!.get(o.appId, o.userId, e.seq) as number);
          this.q.reseal!.run(rot.new_key_id, dataJson, o.appId, o.userId, e.seq);
        }
        this.q.addChangelogBytes!.run(o.appId, o.userId, delta);
        this.q.touchRotation!.run(input.nowMs, rot.id);
        return { kind: 'ok', updated: input.entries.length, remaining: remaining(o, rot) };
      }),

      complete: t((o: Owner, input: Parameters<SyncStore['completeRotation']>[1]): CompleteOutcome => {
        const rot = this.q.rotationById!.get(o.appId, o.userId, input.rotationId) as RotationRow | undefined;
        const key = this.q.key!.get(o.appId, o.userId) as KeyRow | undefined;
        if (rot?.state === 'completed' && key) return { kind: 'completed', key_version: key.key_version, key_id: key.key_id, already: true };
        if (!rot || rot.state !== 'active' || !key) return { kind: 'not_found' };
        const left = remaining(o, rot);
        if (left > 0) {
          this.q.touchRotation!.run(input.nowMs, rot.id);
          return { kind: 'remaining', remaining: left };
        }
        const version = key.key_version + 1;
        this.q.updateKey!.run(rot.new_encrypted_key, version, rot.new_key_id, new Date(input.nowMs).toISOString(), o.appId, o.userId);
        this.q.setRotationState!.run('completed', input.nowMs, rot.id);
        // Every entry is now sealed with the new key: envelopes of cancelled rotations are no longer needed.
        this.q.dropUnusedRetired!.run(o.appId, o.userId);
        return { kind: 'completed', key_version: version, key_id: rot.new_key_id, already: false };
      }),

      cancel: t((o: Owner, input: Parameters<SyncStore['cancelStaleRotation']>[1]): boolean => {
        const rot = active(o);
        if (!rot || rot.last_activity_ms > input.idleSinceMs) return false;
        this.q.setRotationState!.run('cancelled', input.nowMs, rot.id);
        // Entries pushed or re-sealed under the abandoned key must stay readable.
        if ((this.q.usesKey!.get(o.appId, o.userId, rot.new_key_id) as number) > 0) {
          this.q.insertRetired!.run(o.appId, o.userId, rot.new_key_id, rot.new_encrypted_key, new Date(input.nowMs).toISOString());
        }
        return true;
      }),
    };
  }

  async createApp(input: { name: string; apiKeyHash: string; pricing: SyncAppPricing; now: string }): Promise<SyncApp> {
    const app: SyncApp = { id: randomUUID(), name: input.name, created_at: input.now, ...input.pricing };
    const p = input.pricing;
    this.q.insertApp!.run(app.id, app.name, input.apiKeyHash, p.min_charge_cents, p.per_gb_tenths_of_cent_per_month, p.annual_multiplier, p.min_cap_bytes, p.max_cap_bytes, p.free_bytes, app.created_at);
    return app;
  }
  async appByKeyHash(apiKeyHash: string): Promise<SyncApp | undefined> {
    return this.q.appByKey!.get(apiKeyHash) as SyncApp | undefined;
  }
  async getApp(id: string): Promise<SyncApp | undefined> {
    return this.q.appById!.get(id) as SyncApp | undefined;
  }
  async listApps(): Promise<SyncApp[]> {
    return this.q.apps!.all() as SyncApp[];
  }

  async push(o: Owner, input: Parameters<SyncStore['push']>[1]): Promise<PushOutcome> {
    return this.tx.push(o, input);
  }
  async pull(o: Owner, input: { cursor: number; limit: number; deviceId?: string; now: string }): Promise<PullPage> {
    // One row more than asked tells whether more remain without a second query.
    const rows = this.q.page!.all(o.appId, o.userId, input.cursor, input.limit + 1) as EntryRow[];
    const has_more = rows.length > input.limit;
    const entries = (has_more ? rows.slice(0, input.limit) : rows).map(toEntry);
    if (input.deviceId !== undefined) this.q.touchDevice!.run(input.now, o.appId, o.userId, input.deviceId);
    return { entries, cursor: entries.length ? entries[entries.length - 1]!.seq : input.cursor, has_more };
  }

  async registerDevice(o: Owner, input: { name: string; platform?: string; now: string }): Promise<SyncDevice> {
    return this.tx.register(o, input);
  }
  async listDevices(o: Owner): Promise<SyncDevice[]> {
    return this.q.devices!.all(o.appId, o.userId) as SyncDevice[];
  }
  async deleteDevice(o: Owner, id: string): Promise<boolean> {
    return this.q.deleteDevice!.run(o.appId, o.userId, id).changes > 0;
  }

  async getKey(o: Owner): Promise<KeyInfo | undefined> {
    const key = this.q.key!.get(o.appId, o.userId) as KeyRow | undefined;
    if (!key) return undefined;
    const rot = this.q.activeRotation!.get(o.appId, o.userId) as RotationRow | undefined;
    return {
      ...key,
      pending_key: rot ? { encrypted_key: rot.new_encrypted_key, key_id: rot.new_key_id, rotation_id: rot.id, target_seq: rot.target_seq } : null,
      retired_keys: this.q.retired!.all(o.appId, o.userId) as { encrypted_key: string; key_id: number }[],
    };
  }
  async putKey(o: Owner, input: { encryptedKey: string; expectedVersion: number; now: string }): Promise<PutKeyOutcome> {
    return this.tx.putKey(o, input);
  }

  async beginRotation(o: Owner, input: Parameters<SyncStore['beginRotation']>[1]): Promise<BeginOutcome> {
    return this.tx.begin(o, input);
  }
  async rotationEntries(o: Owner, input: { rotationId: string; afterSeq: number; limit: number; nowMs: number }): Promise<RotationEntriesOutcome> {
    const rot = this.q.activeRotation!.get(o.appId, o.userId) as RotationRow | undefined;
    if (!rot || rot.id !== input.rotationId) return { kind: 'not_found' };
    const rows = this.q.rotationPage!.all(o.appId, o.userId, input.afterSeq, rot.target_seq, rot.new_key_id, input.limit + 1) as EntryRow[];
    const has_more = rows.length > input.limit;
    this.q.touchRotation!.run(input.nowMs, rot.id);
    const left = (this.q.upTo!.get(o.appId, o.userId, rot.target_seq) as number) - (this.q.resealedUpTo!.get(o.appId, o.userId, rot.new_key_id, rot.target_seq) as number);
    return { kind: 'ok', entries: (has_more ? rows.slice(0, input.limit) : rows).map(toEntry), has_more, remaining: left };
  }
  async rotationBatch(o: Owner, input: Parameters<SyncStore['rotationBatch']>[1]): Promise<RotationBatchOutcome> {
    return this.tx.batch(o, input);
  }
  async completeRotation(o: Owner, input: { rotationId: string; nowMs: number }): Promise<CompleteOutcome> {
    return this.tx.complete(o, input);
  }
  async cancelStaleRotation(o: Owner, input: { idleSinceMs: number; nowMs: number }): Promise<boolean> {
    return this.tx.cancel(o, input);
  }

  async counts(o: Owner): Promise<SyncCounts> {
    const key = this.q.key!.get(o.appId, o.userId) as KeyRow | undefined;
    return {
      cursor: this.q.maxSeq!.get(o.appId, o.userId) as number,
      entry_count: this.q.entryCount!.get(o.appId, o.userId) as number,
      device_count: this.q.deviceCount!.get(o.appId, o.userId) as number,
      key_version: key?.key_version ?? null,
      key_id: key?.key_id ?? null,
      rotation_in_progress: this.q.activeRotation!.get(o.appId, o.userId) !== undefined,
    };
  }

  async close(): Promise<void> {
    // The database belongs to the marketplace (or the admin command); closing it is theirs.
  }
}
