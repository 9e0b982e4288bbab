// The LicenseStore adapter over the SQL surface (SQLite or PostgreSQL), component `license`: items,
// keys, activations and the token-signing keys. Row operations only; the rules that use them run
// in the license domain inside transaction(). On PostgreSQL every round trip costs the server
// more than the SQL it carries, so a key request's reads are one statement, and so are an
// activation's writes.
import type { ComponentMigrations, SqlDatabase, SqlExecutor } from './sql.js';
import type { ActivationState, FoundKey, LicenseItem, LicenseKeyRecord, LicenseRows, LicenseStore, NewLicenseKey, SigningKeyRow, StoredKey } from './license.js';

/** The channel on which instances announce a signing-key change. */
export const SIGNING_KEYS_CHANNEL = 'mkt_license_keys';

/**
 * SQLite: append only (databases in the field are at some version of it; the third step brings
 * the signing keys in from the data dir's keyring file). PostgreSQL: the final schema in one step.
 */
export const LICENSE_MIGRATIONS: ComponentMigrations = {
  sqlite: [
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
    // The abuse limit's windows moved to the shared limiter_windows table (limiter-windows-sql.ts).
    'DROP TABLE IF EXISTS license_failures;',
    // Signing keys move from the keyring file into the database, so every instance shares them.
    `CREATE TABLE license_signing_keys (
       kid TEXT PRIMARY KEY,
       position INTEGER NOT NULL UNIQUE,
       created_at TEXT NOT NULL,
       retired_at TEXT,
       private_key TEXT,
       public_jwk TEXT NOT NULL
     );
     CREATE TABLE license_signing_state (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);`,
  ],
  postgres: [
    `CREATE TABLE license_items (
       id TEXT PRIMARY KEY,
       name TEXT NOT NULL,
       license_template TEXT,
       max_activations INTEGER,
       verification_enabled BOOLEAN NOT NULL DEFAULT FALSE,
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
     );
     CREATE TABLE license_signing_keys (
       kid TEXT PRIMARY KEY,
       position INTEGER NOT NULL UNIQUE,
       created_at TEXT NOT NULL,
       retired_at TEXT,
       private_key TEXT,
       public_jwk TEXT NOT NULL
     );
     CREATE TABLE license_signing_state (id INTEGER PRIMARY KEY CHECK (id = 1), version BIGINT NOT NULL);`,
  ],
};

interface ItemRow {
  id: string;
  name: string;
  license_template: string | null;
  max_activations: number | null;
  /** 0/1 on SQLite, a boolean on PostgreSQL. */
  verification_enabled: number | boolean;
  created_at: string;
}

/** 0/1 (or null: no item) on SQLite, booleans on PostgreSQL. */
interface FoundKeyRow extends StoredKey {
  verification_enabled: number | boolean | null;
  machine_activated: number | boolean;
}

const KEY_COLUMNS = 'id, item_id, key_prefix, key_hash, licensee, max_activations, expires_at, revoked_at, created_at, activation_count';
/** The keys of a prefix with their item's switch and one machine's activation. */
const FIND_KEYS = `SELECT ${KEY_COLUMNS.split(', ').map((c) => `k.${c}`).join(', ')}, i.verification_enabled,
    EXISTS (SELECT 1 FROM license_activations a WHERE a.key_id = k.id AND a.machine_id = ?) AS machine_activated
  FROM license_keys k LEFT JOIN license_items i ON i.id = k.item_id WHERE k.key_prefix = ?`;
/** Keys per INSERT when issuing many: 8 parameters each stays far below either engine's limit. */
const KEYS_PER_INSERT = 100;

function toItem(r: ItemRow): LicenseItem {
  return { ...r, verification_enabled: Boolean(r.verification_enabled) };
}

function publicKey(r: StoredKey): LicenseKeyRecord {
  const { key_hash: _h, ...rest } = r;
  return rest;
}

class Rows implements LicenseRows {
  constructor(protected readonly x: SqlExecutor) {}

  async createItem(item: LicenseItem): Promise<boolean> {
    const r = await this.x.run(
      'INSERT INTO license_items (id, name, license_template, max_activations, verification_enabled, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING',
      [item.id, item.name, item.license_template, item.max_activations, item.verification_enabled, item.created_at],
    );
    return r.changes === 1;
  }

  async getItem(id: string): Promise<LicenseItem | undefined> {
    const r = await this.x.get<ItemRow>('SELECT id, name, license_template, max_activations, verification_enabled, created_at FROM license_items WHERE id = ?', [id]);
    return r ? toItem(r) : undefined;
  }

  async addKeys(keys: NewLicenseKey[]): Promise<void> {
    for (let i = 0; i < keys.length; i += KEYS_PER_INSERT) {
      const batch = keys.slice(i, i + KEYS_PER_INSERT);
      await this.x.run(
        `INSERT INTO license_keys (id, item_id, key_prefix, key_hash, licensee, max_activations, expires_at, created_at) VALUES ${batch.map(() => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
        batch.flatMap((k) => [k.id, k.item_id, k.key_prefix, k.key_hash, k.licensee, k.max_activations, k.expires_at, k.created_at]),
      );
    }
  }

  async keysByPrefix(prefix: string): Promise<StoredKey[]> {
    return this.x.all<StoredKey>(`SELECT ${KEY_COLUMNS} FROM license_keys WHERE key_prefix = ?`, [prefix]);
  }

  async findKeys(prefix: string, machineId: string): Promise<FoundKey[]> {
    // One statement for all a request about a machine reads (its item's switch, its activation).
    const rows = await this.x.all<FoundKeyRow>(FIND_KEYS, [machineId, prefix]);
    return rows.map((r) => ({ ...r, verification_enabled: Boolean(r.verification_enabled), machine_activated: Boolean(r.machine_activated) }));
  }

  async listKeys(itemId: string): Promise<LicenseKeyRecord[]> {
    return (await this.x.all<StoredKey>(`SELECT ${KEY_COLUMNS} FROM license_keys WHERE item_id = ? ORDER BY created_at, id`, [itemId])).map(publicKey);
  }

  async revokeKey(id: string, at: string): Promise<boolean> {
    // COALESCE keeps the first revocation's time; the row counts as changed, so existence shows.
    return (await this.x.run('UPDATE license_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?', [at, id])).changes === 1;
  }

  async lockKey(keyId: string): Promise<ActivationState | undefined> {
    // PostgreSQL: the row lock, unlike an advisory lock taken by a statement of its own, comes
    // with the row as it stands once granted (READ COMMITTED rereads a row that changed while
    // the statement waited), so locking and reading is one round trip. SQLite: BEGIN IMMEDIATE
    // has serialised the transaction already.
    const forUpdate = this.x.engine === 'postgres' ? ' FOR NO KEY UPDATE' : '';
    return this.x.get<ActivationState>(`SELECT max_activations, activation_count FROM license_keys WHERE id = ?${forUpdate}`, [keyId]);
  }

  async isActivated(keyId: string, machineId: string): Promise<boolean> {
    return (await this.x.value('SELECT 1 FROM license_activations WHERE key_id = ? AND machine_id = ?', [keyId, machineId])) !== undefined;
  }

  async addActivation(keyId: string, machineId: string, machineName: string | null, at: string): Promise<boolean> {
    const values = [keyId, machineId, machineName, at];
    if (this.x.engine === 'postgres') {
      // One statement: the count moves only when the insert added a row.
      return (
        (
          await this.x.run(
            `WITH added AS (INSERT INTO license_activations (key_id, machine_id, machine_name, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (key_id, machine_id) DO NOTHING RETURNING key_id)
             UPDATE license_keys SET activation_count = activation_count + 1 WHERE id IN (SELECT key_id FROM added)`,
            values,
          )
        ).changes === 1
      );
    }
    if ((await this.x.run('INSERT INTO license_activations (key_id, machine_id, machine_name, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (key_id, machine_id) DO NOTHING', values)).changes === 0) return false;
    await this.x.run('UPDATE license_keys SET activation_count = activation_count + 1 WHERE id = ?', [keyId]);
    return true;
  }

  async removeActivation(keyId: string, machineId: string): Promise<boolean> {
    if (this.x.engine === 'postgres') {
      return (
        (
          await this.x.run(
            `WITH removed AS (DELETE FROM license_activations WHERE key_id = ? AND machine_id = ? RETURNING key_id)
             UPDATE license_keys SET activation_count = activation_count - 1 WHERE id IN (SELECT key_id FROM removed)`,
            [keyId, machineId],
          )
        ).changes === 1
      );
    }
    if ((await this.x.run('DELETE FROM license_activations WHERE key_id = ? AND machine_id = ?', [keyId, machineId])).changes === 0) return false;
    await this.x.run('UPDATE license_keys SET activation_count = activation_count - 1 WHERE id = ?', [keyId]);
    return true;
  }

  async lockSigningKeys(): Promise<void> {
    await this.x.lock('license-signing-keys');
  }

  async signingKeys(): Promise<SigningKeyRow[]> {
    return this.x.all<SigningKeyRow>('SELECT kid, position, created_at, retired_at, private_key, public_jwk FROM license_signing_keys ORDER BY position');
  }

  async addSigningKey(k: SigningKeyRow): Promise<void> {
    await this.x.run('INSERT INTO license_signing_keys (kid, position, created_at, retired_at, private_key, public_jwk) VALUES (?, ?, ?, ?, ?, ?)', [
      k.kid,
      k.position,
      k.created_at,
      k.retired_at,
      k.private_key,
      k.public_jwk,
    ]);
  }

  async retireSigningKey(kid: string, at: string): Promise<void> {
    await this.x.run('UPDATE license_signing_keys SET retired_at = ?, private_key = NULL WHERE kid = ?', [at, kid]);
  }

  async deleteSigningKey(kid: string): Promise<void> {
    await this.x.run('DELETE FROM license_signing_keys WHERE kid = ?', [kid]);
  }

  async signingKeysVersion(): Promise<number> {
    return Number((await this.x.value<number>('SELECT version FROM license_signing_state WHERE id = 1')) ?? 0);
  }

  async setSigningKeysVersion(version: number): Promise<void> {
    await this.x.run('INSERT INTO license_signing_state (id, version) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET version = excluded.version', [version]);
  }
}

export class SqlLicenseStore extends Rows implements LicenseStore {
  private constructor(private readonly sql: SqlDatabase) {
    super(sql);
  }

  static async open(sql: SqlDatabase): Promise<SqlLicenseStore> {
    await sql.migrate('license', LICENSE_MIGRATIONS);
    return new SqlLicenseStore(sql);
  }

  transaction<T>(fn: (tx: LicenseRows) => Promise<T>): Promise<T> {
    return this.sql.transaction((x) => fn(new Rows(x)));
  }

  async addUnlimitedActivation(keyId: string, machineId: string, machineName: string | null, at: string): Promise<number | undefined> {
    if (this.sql.engine === 'postgres') {
      // One autocommit statement: the insert and the count's row lock last only while it runs.
      const count = await this.sql.value<number>(
        `WITH added AS (
           INSERT INTO license_activations (key_id, machine_id, machine_name, created_at)
             SELECT id, ?, ?, ? FROM license_keys WHERE id = ? AND max_activations IS NULL
             ON CONFLICT (key_id, machine_id) DO NOTHING RETURNING key_id)
         UPDATE license_keys SET activation_count = activation_count + 1 WHERE id IN (SELECT key_id FROM added) RETURNING activation_count`,
        [machineId, machineName, at, keyId],
      );
      return count ?? undefined;
    }
    // SQLite: its write transaction is this process's own, and as cheap as a statement.
    return this.transaction(async (tx) => {
      const state = await tx.lockKey(keyId);
      if (!state || state.max_activations !== null) return undefined;
      return (await tx.addActivation(keyId, machineId, machineName, at)) ? state.activation_count + 1 : undefined;
    });
  }

  async announceSigningKeys(version: number): Promise<void> {
    await this.sql.notify(SIGNING_KEYS_CHANNEL, String(version));
  }

  onSigningKeysAnnounced(fn: () => void): Promise<() => void> {
    return this.sql.listen(SIGNING_KEYS_CHANNEL, () => fn());
  }
}
