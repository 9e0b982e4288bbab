// LicenseStore: items (with their license template and settings), license keys (only as a keyed
// hash), machine activations (node-locked, or leased seats that lapse by the database's clock),
// the deactivations a churn budget counts, and the Ed25519 keys that sign offline tokens (shared
// by every instance). Row operations only: the activation limit, seats and budgets are decided in
// the license domain (daemon/services/marketplace/license/licenses.ts) and key rotation in
// src/crypto/signing.ts, each inside `transaction()` (a key without a limit needs none:
// addUnlimitedActivation). The adapter is license-sql.ts (component `license`).
import type { LicenseEventInput } from './license-events.js';

/** `node-locked`: an activation holds its slot until deactivated; `floating`: a seat is a lease. */
export type ActivationPolicy = 'node-locked' | 'floating';

export interface LicenseItem {
  id: string;
  name: string;
  license_template: string | null;
  /** Default activation maximum for keys issued later; null = unlimited. For a floating item, seats held at once. */
  max_activations: number | null;
  verification_enabled: boolean;
  created_at: string;
  activation_policy: ActivationPolicy;
  /** A floating seat's lease (>= 1); null for node-locked. */
  lease_seconds: number | null;
  /** The deactivation budget of its keys (both null: none): at most this many per window. */
  max_deactivations: number | null;
  deactivation_window_seconds: number | null;
}

export interface LicenseKeyRecord {
  id: string;
  item_id: string;
  /** First body group of the key: not secret. */
  key_prefix: string;
  licensee: string | null;
  max_activations: number | null;
  expires_at: string | null;
  revoked_at: string | null;
  created_at: string;
  /** Machines activated now; for a floating key, its live leases (by the database's clock). */
  activation_count: number;
  /** Sorted, unique feature names. */
  entitlements: string[];
  suspended_at: string | null;
  /** The key's own deactivation budget (both null: the item's). */
  max_deactivations: number | null;
  deactivation_window_seconds: number | null;
}

/** A key as a lookup finds it, with its item's settings (one read). */
export interface StoredKey extends LicenseKeyRecord {
  key_hash: string;
  /** The item's; node-locked when the item is missing. */
  activation_policy: ActivationPolicy;
  lease_seconds: number | null;
  /** The item's offline-verification switch; false when the item is missing. */
  verification_enabled: boolean;
  item_max_deactivations: number | null;
  item_deactivation_window_seconds: number | null;
}

/** A key as a lookup about one machine finds it. */
export interface FoundKey extends StoredKey {
  /** Whether the machine is activated on this key (for a floating key: holds a live lease). */
  machine_activated: boolean;
  /** The end of the machine's live lease (ms, database clock); null when node-locked or none. */
  machine_lease_expires_ms: number | null;
}

export interface NewLicenseKey {
  id: string;
  item_id: string;
  key_prefix: string;
  key_hash: string;
  licensee: string | null;
  max_activations: number | null;
  expires_at: string | null;
  created_at: string;
  /** Sorted, unique; [] for none. */
  entitlements?: string[];
  max_deactivations?: number | null;
  deactivation_window_seconds?: number | null;
}

/** What the activation rule reads of a key. */
export interface ActivationState {
  max_activations: number | null;
  activation_count: number;
}

/** A floating key's seats as they stand (after lapsed leases were tidied), by the database's clock. */
export interface SeatState {
  /** Live leases. */
  live: number;
  /** The earliest end of a live lease (ms); null when there is none. */
  earliest_ms: number | null;
  /** The end of this machine's live lease; null when it holds none. */
  mine_ms: number | null;
  /** The database's clock (ms). */
  now_ms: number;
}

/** A lease as written: its end and the database's clock when it was written (ms). */
export interface Lease {
  lease_expires_ms: number;
  now_ms: number;
}

/** The counted deactivations of a key in a window ending now (database clock). */
export interface DeactivationWindow {
  count: number;
  /** The earliest one still in the window (ms); null when none. */
  earliest_ms: number | null;
  now_ms: number;
}

/** One token-signing key. Holds a private key: never log a row. */
export interface SigningKeyRow {
  kid: string;
  /** Order of creation (the current key is the active one with the highest). */
  position: number;
  created_at: string;
  /** When a rotation replaced it; its public half stays published while its tokens live. */
  retired_at: string | null;
  /** PKCS#8 DER, base64url; null once the key is retired. */
  private_key: string | null;
  /** The public JWK as JSON text. */
  public_jwk: string;
}

/** Row operations: the store itself (autocommit) or one open transaction. */
export interface LicenseRows {
  /** false when an item with that id exists already. */
  createItem(item: LicenseItem): Promise<boolean>;
  getItem(id: string): Promise<LicenseItem | undefined>;
  addKeys(keys: NewLicenseKey[]): Promise<void>;
  /** Every key with this prefix (normally one); the caller compares hashes in constant time. */
  keysByPrefix(prefix: string): Promise<StoredKey[]>;
  /**
   * keysByPrefix for a request about one machine: each key also with its item's switch and whether
   * the machine is activated on it. `counted: false` skips counting a floating key's live leases
   * (a count of every seat of the key, per request): its `activation_count` is then the rows held,
   * lapsed leases not yet tidied included, for answers that show no count (verify, heartbeat).
   */
  findKeys(prefix: string, machineId: string, counted?: boolean): Promise<FoundKey[]>;
  listKeys(itemId: string): Promise<LicenseKeyRecord[]>;
  /** One key by id (with its item's settings). */
  getKey(id: string): Promise<StoredKey | undefined>;
  /** true when the key exists (revoked now or before). */
  revokeKey(id: string, at: string): Promise<boolean>;
  /** Sets or clears (null) the suspension; false when there is no such key. */
  setSuspended(id: string, at: string | null): Promise<boolean>;
  /** Replaces the key's entitlements (the caller sorts them and removes duplicates). */
  setEntitlements(id: string, names: string[]): Promise<boolean>;

  /**
   * Inside a transaction: holds other transactions that lock the same key until this one ends,
   * and reads the key's maximum and activation count as they stand under the lock (undefined
   * when there is no such key). Every activation write takes it first.
   */
  lockKey(keyId: string): Promise<ActivationState | undefined>;
  isActivated(keyId: string, machineId: string): Promise<boolean>;
  /**
   * Inside a transaction that locked the key: activates the machine unless it is already, and
   * counts it in the same step; false when it was activated already (nothing written).
   */
  addActivation(keyId: string, machineId: string, machineName: string | null, at: string): Promise<boolean>;
  /**
   * For a key without a maximum (a key's maximum is fixed when it is issued): activates a machine
   * not activated yet and counts it, as one atomic step that takes no key lock on PostgreSQL.
   * Returns the new count; undefined, having written nothing, when the key has a maximum or the
   * machine is activated already (those answers come from the locked way).
   */
  addUnlimitedActivation(keyId: string, machineId: string, machineName: string | null, at: string): Promise<number | undefined>;
  /** Inside a transaction that locked the key: removes the activation and uncounts it; false when there was none. */
  removeActivation(keyId: string, machineId: string): Promise<boolean>;

  /**
   * Inside a transaction that locked a floating key: deletes (and uncounts) its leases that have
   * lapsed by the database's clock, and returns them. Tidied before seats are counted, so a
   * renewal racing this never revives a lease the count left out.
   */
  tidyLeases(keyId: string): Promise<{ machine_id: string; lease_expires_ms: number }[]>;
  /** Inside a transaction that locked the key and tidied its leases: its seats as they stand. */
  seats(keyId: string, machineId: string): Promise<SeatState>;
  /** Inside a transaction that locked the key: a new lease for a machine that holds none (counted). */
  takeLease(keyId: string, machineId: string, machineName: string | null, at: string, leaseSeconds: number): Promise<Lease>;
  /**
   * Extends the machine's live lease to `leaseSeconds` from now, only while the key is neither
   * revoked nor suspended; undefined (nothing written) when it holds no live lease. Needs no key
   * lock: a live lease stays live, and a lapsed one is never revived.
   */
  renewLease(keyId: string, machineId: string, leaseSeconds: number): Promise<Lease | undefined>;
  /** Removes the machine's lease (uncounted); whether it was still live; undefined when there was none. */
  releaseLease(keyId: string, machineId: string): Promise<{ live: boolean; lease_expires_ms: number; now_ms: number } | undefined>;

  /**
   * Inside a transaction that locked the key: the deactivations counted in the last
   * `windowSeconds` (older ones are deleted: they can never count again).
   */
  deactivationWindow(keyId: string, windowSeconds: number): Promise<DeactivationWindow>;
  /** Inside a transaction that locked the key: counts one deactivation now (database clock). */
  addDeactivation(keyId: string): Promise<void>;

  /** Adds an event to the key's audit trail (and its webhook outbox), in this transaction. */
  recordEvent(e: LicenseEventInput): Promise<void>;

  /** Inside a transaction: holds other transactions that lock the signing keys until this one ends. */
  lockSigningKeys(): Promise<void>;
  /** Every signing key, oldest first. */
  signingKeys(): Promise<SigningKeyRow[]>;
  addSigningKey(key: SigningKeyRow): Promise<void>;
  /** Marks the key retired and forgets its private half. */
  retireSigningKey(kid: string, at: string): Promise<void>;
  deleteSigningKey(kid: string): Promise<void>;
  /** Changes whenever the signing keys change (0 before the first key); instances poll it. */
  signingKeysVersion(): Promise<number>;
  setSigningKeysVersion(version: number): Promise<void>;
}

export interface LicenseStore extends LicenseRows {
  /** Runs `fn` in one transaction (rerun on PostgreSQL after a serialization failure: no side effects in it). */
  transaction<T>(fn: (tx: LicenseRows) => Promise<T>): Promise<T>;
  /**
   * What keysByPrefix would answer from the lookups it keeps, without waiting (no statement but
   * the change mark's); undefined when it must read.
   */
  keptKeysByPrefix(prefix: string): readonly StoredKey[] | undefined;
  /** The same for findKeys. */
  keptFindKeys(prefix: string, machineId: string, counted?: boolean): readonly FoundKey[] | undefined;
  /**
   * Whether small writes are better grouped into one transaction: true on SQLite, where this
   * process's writes are serial anyway and the commit is most of their cost; false on
   * PostgreSQL, where a pool runs them side by side and a group would queue them on one connection.
   */
  readonly groupsWrites: boolean;
  /** Tells every instance on the database that the signing keys changed (after the commit). */
  announceSigningKeys(version: number): Promise<void>;
  /** Calls `fn` when any instance announces a change (or a missed one is possible); returns the unsubscribe. */
  onSigningKeysAnnounced(fn: () => void): Promise<() => void>;
}
