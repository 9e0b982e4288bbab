// LicenseStore: items (with their license template and settings), license keys (only as a
// keyed hash), machine activations and the failed-validation windows of the abuse limit.
// Interface first, then the SQLite adapter (component 'license' in marketplace.db).
import type { Db } from './sqlite.js';
import { migrate } from './sqlite.js';

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

export type ActivationResult =
  | { kind: 'created'; count: number }
  | { kind: 'existing'; count: number }
  | { kind: 'full'; count: number };

export interface LicenseStore {
  /** false when an item with that id exists already. */
  createItem(item: LicenseItem): Promise<boolean>;
  getItem(id: string): Promise<LicenseItem | undefined>;
  addKeys(keys: NewLicenseKey[]): Promise<void>;
  /** Every key with this prefix (normally one); the caller compares hashes in constant time. */
  keysByPrefix(prefix: string): Promise<StoredKey[]>;
  listKeys(itemId: string): Promise<LicenseKeyRecord[]>;
  revokeKey(id: string, at: string): Promise<boolean>;
  /** Activates the machine unless the key is at its maximum: one atomic step. */
  activate(keyId: string, machineId: string, machineName: string | null, max: number | null, at: string): Promise<ActivationResult>;
  isActivated(keyId: string, machineId: string): Promise<boolean>;
  /** true when an activation was removed. */
  deactivate(keyId: string, machineId: string): Promise<boolean>;
  close(): Promise<void>;
}

const MIGRATIONS = [
  `CREATE TABLE license_items (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     license_template TEXT,
     max_activations INTEGER,
     verification_enabled INTEGER NOT NULL DEFAULT 0,
     created_at TEXT NOT NULL
   );
   CREATE TABLE license_keys (
     id TEXT PRIMARY KEY,
     item_id TEXT NOT NULL REFERENCES license_items(id),
     key_prefix TEXT NOT NULL,
     key_hash TEXT NOT NULL UNIQUE,
     licensee TEXT,
     max_activations INTEGER,
     expires_at TEXT,
     revoked_at TEXT,
     created_at TEXT NOT NULL,
     activation_count INTEGER NOT NULL DEFAULT 0
   );
   CREATE INDEX license_keys_prefix ON license_keys(key_prefix);
   CREATE INDEX license_keys_item ON license_keys(item_id, created_at);
   CREATE TABLE license_activations (
     key_id TEXT NOT NULL REFERENCES license_keys(id),
     machine_id TEXT NOT NULL,
     machine_name TEXT,
     created_at TEXT NOT NULL,
     PRIMARY KEY (key_id, machine_id)
   ) WITHOUT ROWID;
   CREATE TABLE license_failures (
     client TEXT NOT NULL,
     window_start INTEGER NOT NULL,
     failures INTEGER NOT NULL,
     PRIMARY KEY (client, window_start)
   ) WITHOUT ROWID;`,
  // The abuse limit's windows moved to the shared limiter_windows table (limiter-windows.ts).
  'DROP TABLE IF EXISTS license_failures;',
];

interface ItemRow {
  id: string;
  name: string;
  license_template: string | null;
  max_activations: number | null;
  verification_enabled: number;
  created_at: string;
}

// activation_count is kept in step with license_activations by activate/deactivate, so that a
// key with many thousands of machines costs no count(*) per request.
const KEY_COLUMNS = 'k.id, k.item_id, k.key_prefix, k.key_hash, k.licensee, k.max_activations, k.expires_at, k.revoked_at, k.created_at, k.activation_count';

function toItem(r: ItemRow): LicenseItem {
  return { ...r, verification_enabled: r.verification_enabled === 1 };
}

function publicKey(r: StoredKey): LicenseKeyRecord {
  const { key_hash: _h, ...rest } = r;
  return rest;
}

export class SqliteLicenseStore implements LicenseStore {
  private readonly s;
  private readonly activateTx;
  private readonly addKeysTx;
  private readonly deactivateTx;

  /**
   * Read cache of key rows, items and activations. Cleared on this connection's own license
   * writes, and when SQLite's data_version says another connection (another server, `mkt
   * admin`) committed — checked at most every 10 ms, so a revocation elsewhere applies within that.
   */
  private readonly cache = new Map<string, unknown>();
  private dataVersion = -1;
  private versionCheckedAt = 0;

  private cached<T>(key: string, load: () => T): T {
    const now = Date.now();
    if (now - this.versionCheckedAt >= 10 || now < this.versionCheckedAt) {
      this.versionCheckedAt = now;
      const v = (this.s.dataVersion.get() as { data_version: number }).data_version;
      if (v !== this.dataVersion) {
        this.dataVersion = v;
        this.cache.clear();
      }
    }
    if (this.cache.has(key)) return this.cache.get(key) as T;
    const value = load();
    if (this.cache.size >= 50_000) this.cache.clear();
    this.cache.set(key, value);
    return value;
  }

  /** `ownsDb`: close the database on close() (the CLI's own handle, not the server's shared one). */
  constructor(
    private readonly db: Db,
    private readonly ownsDb = false,
  ) {
    migrate(db, 'license', MIGRATIONS);
    this.s = {
      insertItem: db.prepare('INSERT INTO license_items (id, name, license_template, max_activations, verification_enabled, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO NOTHING'),
      getItem: db.prepare('SELECT * FROM license_items WHERE id = ?'),
      insertKey: db.prepare('INSERT INTO license_keys (id, item_id, key_prefix, key_hash, licensee, max_activations, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)'),
      byPrefix: db.prepare(`SELECT ${KEY_COLUMNS} FROM license_keys k WHERE k.key_prefix = ?`),
      byItem: db.prepare(`SELECT ${KEY_COLUMNS} FROM license_keys k WHERE k.item_id = ? ORDER BY k.created_at, k.id`),
      revoke: db.prepare('UPDATE license_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
      keyExists: db.prepare('SELECT 1 FROM license_keys WHERE id = ?'),
      findActivation: db.prepare('SELECT 1 FROM license_activations WHERE key_id = ? AND machine_id = ?'),
      countActivations: db.prepare('SELECT activation_count AS n FROM license_keys WHERE id = ?'),
      bumpCount: db.prepare('UPDATE license_keys SET activation_count = activation_count + ? WHERE id = ?'),
      insertActivation: db.prepare('INSERT INTO license_activations (key_id, machine_id, machine_name, created_at) VALUES (?, ?, ?, ?)'),
      deleteActivation: db.prepare('DELETE FROM license_activations WHERE key_id = ? AND machine_id = ?'),
      dataVersion: db.prepare('PRAGMA data_version'),
    };
    this.activateTx = db.transaction((keyId: string, machineId: string, machineName: string | null, max: number | null, at: string): ActivationResult => {
      const count = (this.s.countActivations.get(keyId) as { n: number } | undefined)?.n ?? 0;
      if (this.s.findActivation.get(keyId, machineId)) return { kind: 'existing', count };
      if (max !== null && count >= max) return { kind: 'full', count };
      this.s.insertActivation.run(keyId, machineId, machineName, at);
      this.s.bumpCount.run(1, keyId);
      return { kind: 'created', count: count + 1 };
    });
    this.addKeysTx = db.transaction((keys: NewLicenseKey[]) => {
      for (const k of keys) this.s.insertKey.run(k.id, k.item_id, k.key_prefix, k.key_hash, k.licensee, k.max_activations, k.expires_at, k.created_at);
    });
    this.deactivateTx = db.transaction((keyId: string, machineId: string): boolean => {
      if (this.s.deleteActivation.run(keyId, machineId).changes !== 1) return false;
      this.s.bumpCount.run(-1, keyId);
      return true;
    });
  }

  async createItem(item: LicenseItem): Promise<boolean> {
    const r = this.s.insertItem.run(item.id, item.name, item.license_template, item.max_activations, item.verification_enabled ? 1 : 0, item.created_at);
    this.cache.clear();
    return r.changes === 1;
  }

  async getItem(id: string): Promise<LicenseItem | undefined> {
    return this.cached(`i\n${id}`, () => {
      const r = this.s.getItem.get(id) as ItemRow | undefined;
      return r ? toItem(r) : undefined;
    });
  }

  async addKeys(keys: NewLicenseKey[]): Promise<void> {
    this.addKeysTx(keys);
    this.cache.clear();
  }

  async keysByPrefix(prefix: string): Promise<StoredKey[]> {
    return this.cached(`p\n${prefix}`, () => this.s.byPrefix.all(prefix) as StoredKey[]);
  }

  async listKeys(itemId: string): Promise<LicenseKeyRecord[]> {
    return (this.s.byItem.all(itemId) as StoredKey[]).map(publicKey);
  }

  async revokeKey(id: string, at: string): Promise<boolean> {
    if (!this.s.keyExists.get(id)) return false;
    this.s.revoke.run(at, id);
    this.cache.clear();
    return true;
  }

  async activate(keyId: string, machineId: string, machineName: string | null, max: number | null, at: string): Promise<ActivationResult> {
    // IMMEDIATE takes the write lock before counting, so that a second process (another
    // server, or `mkt admin`) cannot slip an activation in between the count and the insert.
    const r = this.activateTx.immediate(keyId, machineId, machineName, max, at);
    if (r.kind === 'created') this.cache.clear();
    return r;
  }

  async isActivated(keyId: string, machineId: string): Promise<boolean> {
    return this.cached(`a\n${keyId}\n${machineId}`, () => this.s.findActivation.get(keyId, machineId) !== undefined);
  }

  async deactivate(keyId: string, machineId: string): Promise<boolean> {
    const removed = this.deactivateTx.immediate(keyId, machineId);
    if (removed) this.cache.clear();
    return removed;
  }

  async close(): Promise<void> {
    if (this.ownsDb) this.db.close();
  }
}
