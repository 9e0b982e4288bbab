// SyncStore: the rows of the marketplace sync area's apps, changelog (entries, push batches),
// devices, master-key envelopes and key rotations. Row operations only: every rule (duplicate
// batch, unknown device, wrong key, quota, seq assignment, the rotation state machine) is decided
// by the sync area's domain modules (daemon/services/marketplace/sync/), which run inside
// `transaction()` against the SyncRows bound to it. Only ciphertext ever reaches it. The adapter
// (both engines) is src/store/sync-sql.ts.
import type { ChangeEntry, StoredChangeEntry } from '../schemas/sync.js';
import type { Usage } from './sync-usage.js';

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

/** Whose rows: one user of one app. */
export interface Owner {
  appId: string;
  userId: string;
}

/** The stored master-key envelope. */
export interface KeyRow {
  encrypted_key: string;
  key_version: number;
  key_id: number;
}

export type RotationState = 'active' | 'completed' | 'cancelled';

export interface RotationRow {
  id: string;
  device_id: string;
  new_encrypted_key: string;
  new_key_id: number;
  target_seq: number;
  state: RotationState;
  last_activity_ms: number;
}

/** An envelope of a cancelled rotation, kept while entries still carry its key id. */
export interface RetiredKey {
  encrypted_key: string;
  key_id: number;
}

/** A push batch as first answered (a retry of it gets the same answer). */
export interface BatchRow {
  cursor: number;
  accepted: number;
}

/** One entry to append: its sequence number and key are the caller's decision. */
export interface NewEntry {
  seq: number;
  keyId: number;
  deviceId: string;
  entry: ChangeEntry;
  /** The entry's data as stored (JSON text), null when absent. */
  dataJson: string | null;
}

/** What a push decides on, read in one statement under the owner's lock. */
export interface PushState {
  /** For each asked (device, batch), in the order asked: */
  asked: {
    /** The batch's first answer, when the device used its id before. */
    batch: BatchRow | undefined;
    /** Whether the pushing device is registered. */
    deviceExists: boolean;
  }[];
  /** The new key id of the running rotation, null when none runs. */
  rotationKeyId: number | null;
  /** The stored envelope's key id, null when none is stored. */
  keyId: number | null;
  /** The owner's newest sequence number, 0 when none. */
  maxSeq: number;
  /** The owner's storage use and cap, when asked for. */
  usage: Usage | undefined;
}

/** The rows of an accepted push. */
export interface PushRecord {
  entries: NewEntry[];
  /** Stored bytes of the entries, added to the owner's changelog byte count. */
  addedBytes: number;
  deviceId: string;
  batchId: string;
  /** The batch's answer, kept for its retries. */
  cursor: number;
  accepted: number;
  now: string;
}

export interface PullPage {
  entries: StoredChangeEntry[];
  cursor: number;
  has_more: boolean;
}

/**
 * A page of entries written by the database as the JSON of the answer's `entries`: each entry's
 * fields in the schema's order, strings quoted by the engine's JSON quoting, `data` the JSON text
 * it was stored as (sync_pull sends it unparsed; bench/README.md, issue 37, eleventh session).
 */
export interface StoredPullPage {
  /** A JSON array of StoredChangeEntry. */
  entries_json: string;
  cursor: number;
  has_more: boolean;
}

/** The page with its entries parsed. */
export function parsedPage(p: StoredPullPage): PullPage {
  return { entries: JSON.parse(p.entries_json) as StoredChangeEntry[], cursor: p.cursor, has_more: p.has_more };
}

export interface SyncCounts {
  cursor: number;
  entry_count: number;
  device_count: number;
  key_version: number | null;
  key_id: number | null;
  rotation_in_progress: boolean;
}

/** Row operations, on the database (autocommit) or bound to one transaction. */
export interface SyncRows {
  /**
   * Serialises, until the transaction ends, every transaction that locks the same key (across
   * instances on PostgreSQL). Only inside `transaction()`.
   */
  lock(key: string): Promise<void>;
  /** `lock(key)` taken with the next statement (see SqlExecutor.lockWithNext: it guards statements only). */
  lockWithNext(key: string): Promise<void>;

  // Apps.
  createApp(input: { name: string; apiKeyHash: string; pricing: SyncAppPricing; now: string }): Promise<SyncApp>;
  /** The app whose API key hashes to `apiKeyHash` (see apiKeyHash in the sync area). */
  appByKeyHash(apiKeyHash: string): Promise<SyncApp | undefined>;
  getApp(id: string): Promise<SyncApp | undefined>;
  /** Every app, by name ignoring case. */
  listApps(): Promise<SyncApp[]>;
  /**
   * Whether app `appId` and user `userId` both exist (the user row is the accounts store's, in the
   * same database): one statement, for the bearer check of every request.
   */
  callerExists(appId: string, userId: string): Promise<boolean>;

  // Changelog.
  /** The owner's newest sequence number, 0 when none. */
  maxSeq(o: Owner): Promise<number>;
  /** The state a group of pushes (each a device and batch id) decides on, with usage when `withUsage`, in one statement. */
  pushState(o: Owner, input: { pushes: { deviceId: string; batchId: string }[]; withUsage: boolean }): Promise<PushState>;
  /** Stores accepted pushes: their entries, their bytes, each batch's answer, each device seen. The transaction's last write (PostgreSQL sends it with COMMIT). */
  recordPushes(o: Owner, pushes: PushRecord[]): Promise<void>;
  insertEntries(o: Owner, rows: NewEntry[]): Promise<void>;
  /** Entries after `cursor`, oldest first, at most `limit`, and whether more follow; data as stored. */
  storedPage(o: Owner, input: { cursor: number; limit: number }): Promise<StoredPullPage>;
  entryCount(o: Owner): Promise<number>;
  /** The key id of entry `seq`, undefined when there is no such entry. */
  entryKeyId(o: Owner, seq: number): Promise<number | undefined>;
  /** Stored bytes of entry `seq`'s data (0 when none or absent). */
  entryDataBytes(o: Owner, seq: number): Promise<number>;
  /** Replaces entry `seq`'s ciphertext and key id. */
  resealEntry(o: Owner, seq: number, keyId: number, dataJson: string): Promise<void>;
  /** Entries after `afterSeq` up to `upToSeq` not sealed with `newKeyId`, oldest first, at most `limit`, and whether more follow. */
  unsealedPage(o: Owner, input: { afterSeq: number; upToSeq: number; newKeyId: number; limit: number }): Promise<{ entries: StoredChangeEntry[]; has_more: boolean }>;
  /** Entries at or below `upToSeq` not sealed with `keyId`. */
  countUnsealed(o: Owner, upToSeq: number, keyId: number): Promise<number>;
  /** Entries sealed with `keyId`. */
  countWithKey(o: Owner, keyId: number): Promise<number>;
  batch(o: Owner, deviceId: string, batchId: string): Promise<BatchRow | undefined>;
  insertBatch(o: Owner, input: { deviceId: string; batchId: string; cursor: number; accepted: number; now: string }): Promise<void>;
  /** Adds `delta` (maybe negative) to the owner's changelog byte count. */
  addChangelogBytes(o: Owner, delta: number): Promise<void>;
  /** The owner's storage use and cap as this executor sees it (readUsage). */
  usage(o: Owner): Promise<Usage>;

  // Devices.
  device(o: Owner, id: string): Promise<SyncDevice | undefined>;
  deviceByName(o: Owner, name: string): Promise<SyncDevice | undefined>;
  insertDevice(o: Owner, d: SyncDevice): Promise<void>;
  /** Sets the platform (when given) and last_seen_at of the owner's device `id`. */
  updateDevice(o: Owner, id: string, input: { platform: string | null; now: string }): Promise<void>;
  touchDevice(o: Owner, id: string, now: string): Promise<void>;
  /** The owner's devices, oldest first. */
  listDevices(o: Owner): Promise<SyncDevice[]>;
  deleteDevice(o: Owner, id: string): Promise<boolean>;
  deviceCount(o: Owner): Promise<number>;

  // Keys.
  key(o: Owner): Promise<KeyRow | undefined>;
  insertKey(o: Owner, k: KeyRow, now: string): Promise<void>;
  updateKey(o: Owner, k: KeyRow, now: string): Promise<void>;
  retiredKeys(o: Owner): Promise<RetiredKey[]>;
  /** Keeps (or replaces) the envelope of key `k.key_id`. */
  retireKey(o: Owner, k: RetiredKey, now: string): Promise<void>;
  /** Forgets retired envelopes no entry is sealed with any more. */
  dropUnusedRetiredKeys(o: Owner): Promise<void>;

  // Rotations.
  activeRotation(o: Owner): Promise<RotationRow | undefined>;
  rotation(o: Owner, id: string): Promise<RotationRow | undefined>;
  /** The highest key id any rotation of the owner ever chose, 0 when none. */
  maxRotationKeyId(o: Owner): Promise<number>;
  insertRotation(o: Owner, r: Omit<RotationRow, 'state'>, createdAt: string): Promise<void>;
  touchRotation(o: Owner, id: string, nowMs: number): Promise<void>;
  setRotationState(o: Owner, id: string, state: RotationState, nowMs: number): Promise<void>;
}

export interface SyncStore extends SyncRows {
  /**
   * Runs `fn` in one transaction against rows bound to it: committed when it resolves, rolled back
   * when it throws; on PostgreSQL `fn` may run again after a serialization failure, so it must have
   * no effect outside the database. Inside it, call only `tx`'s operations (never this store's).
   */
  transaction<T>(fn: (tx: SyncRows) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
