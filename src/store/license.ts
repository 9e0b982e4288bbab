// LicenseStore: items (with their license template and settings), license keys (only as a keyed
// hash), machine activations, and the Ed25519 keys that sign offline tokens (shared by every
// instance). Row operations only: the activation limit is decided in the license domain
// (daemon/services/marketplace/license/licenses.ts) and key rotation in src/crypto/signing.ts,
// each inside `transaction()` (a key without a limit needs none: addUnlimitedActivation). The
// adapter is license-sql.ts (component `license`).

export interface LicenseItem {
  id: string;
  name: string;
  license_template: string | null;
  /** Default activation maximum for keys issued later; null = unlimited. */
  max_activations: number | null;
  verification_enabled: boolean;
  created_at: string;
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
  activation_count: number;
}

export interface StoredKey extends LicenseKeyRecord {
  key_hash: string;
}

/** A key as a lookup finds it, with what the request needs to know besides (one read). */
export interface FoundKey extends StoredKey {
  /** The item's offline-verification switch; false when the item is missing. */
  verification_enabled: boolean;
  /** Whether the machine the lookup asked about is activated on this key. */
  machine_activated: boolean;
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
}

/** What the activation rule reads of a key. */
export interface ActivationState {
  max_activations: number | null;
  activation_count: number;
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
  /** keysByPrefix for a request about one machine: each key also with its item's switch and whether the machine is activated on it. */
  findKeys(prefix: string, machineId: string): Promise<FoundKey[]>;
  listKeys(itemId: string): Promise<LicenseKeyRecord[]>;
  /** true when the key exists (revoked now or before). */
  revokeKey(id: string, at: string): Promise<boolean>;

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
  /** Inside a transaction that locked the key: removes the activation and uncounts it; false when there was none. */
  removeActivation(keyId: string, machineId: string): Promise<boolean>;

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
   * For a key without a maximum (a key's maximum is fixed when it is issued): activates a machine
   * not activated yet and counts it, as one atomic step that takes no key lock. Returns the new
   * count; undefined, having written nothing, when the key has a maximum or the machine is
   * activated already (those answers come from the locked way).
   */
  addUnlimitedActivation(keyId: string, machineId: string, machineName: string | null, at: string): Promise<number | undefined>;
  /** Tells every instance on the database that the signing keys changed (after the commit). */
  announceSigningKeys(version: number): Promise<void>;
  /** Calls `fn` when any instance announces a change (or a missed one is possible); returns the unsubscribe. */
  onSigningKeysAnnounced(fn: () => void): Promise<() => void>;
}
