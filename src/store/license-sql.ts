// The LicenseStore adapter over the SQL surface (SQLite or PostgreSQL), component `license`: items,
// keys, activations and leases, counted deactivations, and the token-signing keys. Row operations
// only; the rules that use them run in the license domain inside transaction(). On PostgreSQL
// every round trip costs the server more than the SQL it carries, so a key request's reads are
// one statement, and so are an activation's writes. Leases are read and written against the
// database's clock (DB_NOW), never a process's, so instances with skewed clocks agree.
import type { ComponentMigrations, Engine, SqlDatabase, SqlExecutor } from './sql.js';
import { sqlText } from './sql-text.js';
import { ReadCache } from './read-cache.js';
import type {
  ActivationPolicy,
  ActivationState,
  DeactivationWindow,
  FoundKey,
  Lease,
  LicenseItem,
  LicenseKeyRecord,
  LicenseRows,
  LicenseStore,
  NewLicenseKey,
  SeatState,
  SigningKeyRow,
  StoredKey,
} from './license.js';
import type { LicenseEventInput } from './license-events.js';
import { LICENSE_AUDIT_MIGRATIONS, recordLicenseEvent } from './license-events-sql.js';

/** The channel on which instances announce a signing-key change. */
export const SIGNING_KEYS_CHANNEL = 'mkt_license_keys';

/**
 * The columns and table of issue 33 (leased seats, entitlements, suspension, a deactivation
 * budget), the same on both engines but for the integer type of the millisecond times.
 */
function seatsAndRules(ms: 'INTEGER' | 'BIGINT'): string {
  return `ALTER TABLE license_items ADD COLUMN activation_policy TEXT NOT NULL DEFAULT 'node-locked';
     ALTER TABLE license_items ADD COLUMN lease_seconds INTEGER;
     ALTER TABLE license_items ADD COLUMN max_deactivations INTEGER;
     ALTER TABLE license_items ADD COLUMN deactivation_window_seconds INTEGER;
     ALTER TABLE license_keys ADD COLUMN entitlements TEXT NOT NULL DEFAULT '';
     ALTER TABLE license_keys ADD COLUMN suspended_at TEXT;
     ALTER TABLE license_keys ADD COLUMN max_deactivations INTEGER;
     ALTER TABLE license_keys ADD COLUMN deactivation_window_seconds INTEGER;
     ALTER TABLE license_activations ADD COLUMN lease_expires_ms ${ms};
     CREATE TABLE license_deactivations (key_id TEXT NOT NULL REFERENCES license_keys(id), at_ms ${ms} NOT NULL);
     CREATE INDEX license_deactivations_key ON license_deactivations(key_id, at_ms);
     -- The audit job's scan of keys past their expiry. Its scan of lapsed leases has no index of
     -- its own: one on lease_expires_ms would be rewritten at every renewal (it made a renewal
     -- half as dear again), while the scan reads the table once a minute.
     CREATE INDEX license_keys_expires ON license_keys(expires_at) WHERE expires_at IS NOT NULL;`;
}

/**
 * Append only, on each engine (databases in the field are at some version of each list). SQLite:
 * the third step brings the signing keys in from the data dir's keyring file. PostgreSQL: the
 * schema of 0.16 in one step, then what came after.
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
    seatsAndRules('INTEGER'),
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
    seatsAndRules('BIGINT'),
  ],
};

/**
 * The database's clock in ms since the epoch, as SQL: what leases and the deactivation window are
 * measured by. PostgreSQL's clock_timestamp() moves within a transaction (now() would not);
 * SQLite's 'now' is this machine's clock, read once per statement.
 */
export const DB_NOW: Record<Engine, string> = {
  postgres: '(extract(epoch from clock_timestamp()) * 1000)::bigint',
  sqlite: "CAST(ROUND((julianday('now') - 2440587.5) * 86400000) AS INTEGER)",
};

interface ItemRow extends Omit<LicenseItem, 'verification_enabled'> {
  /** 0/1 on SQLite, a boolean on PostgreSQL. */
  verification_enabled: number | boolean;
}

/** A key row with its item's settings as SQL gives them: entitlements comma-joined, 0/1 or booleans, nulls for a missing item. */
interface KeyRow extends Omit<StoredKey, 'entitlements' | 'verification_enabled' | 'activation_policy'> {
  entitlements: string;
  verification_enabled: number | boolean | null;
  activation_policy: ActivationPolicy | null;
}

interface FoundKeyRow extends KeyRow {
  machine_activated: number | boolean;
  machine_lease_expires_ms: number | null;
}

const ITEM_COLUMNS = 'id, name, license_template, max_activations, verification_enabled, created_at, activation_policy, lease_seconds, max_deactivations, deactivation_window_seconds';

/**
 * A key with its item's settings; for a floating key `activation_count` is its live leases. With
 * `machine`, also whether that machine is activated (for a floating key: holds a live lease) and
 * its lease's end; its id is bound twice, before the statement's own parameters.
 */
function keySelectText(engine: Engine, machine: boolean, counted: boolean): string {
  const now = DB_NOW[engine];
  const machineColumns = machine
    ? `, EXISTS (SELECT 1 FROM license_activations a WHERE a.key_id = k.id AND a.machine_id = ? AND (a.lease_expires_ms IS NULL OR a.lease_expires_ms > ${now})) AS machine_activated,
    (SELECT a.lease_expires_ms FROM license_activations a WHERE a.key_id = k.id AND a.machine_id = ? AND a.lease_expires_ms > ${now}) AS machine_lease_expires_ms`
    : '';
  return `SELECT k.id, k.item_id, k.key_prefix, k.key_hash, k.licensee, k.max_activations, k.expires_at, k.revoked_at, k.created_at,
    k.entitlements, k.suspended_at, k.max_deactivations, k.deactivation_window_seconds,
    ${counted ? `CASE WHEN i.activation_policy = 'floating'
      THEN (SELECT count(*) FROM license_activations a WHERE a.key_id = k.id AND a.lease_expires_ms > ${now})
      ELSE k.activation_count END` : 'k.activation_count'} AS activation_count,
    i.activation_policy, i.lease_seconds, i.verification_enabled,
    i.max_deactivations AS item_max_deactivations, i.deactivation_window_seconds AS item_deactivation_window_seconds${machineColumns}
  FROM license_keys k LEFT JOIN license_items i ON i.id = k.item_id`;
}

const keySelects = new Map<string, string[]>();
/**
 * The key lookups' statements, each text made once: the statement cache is a map keyed by the
 * text, and a text made afresh at each request is hashed afresh (a few µs a lookup). `where` is
 * a literal, whose hash V8 keeps.
 */
function keySelect(engine: Engine, machine: boolean, where: string, counted = true): string {
  let texts = keySelects.get(where);
  if (texts === undefined) keySelects.set(where, (texts = []));
  const slot = (engine === 'postgres' ? 4 : 0) + (machine ? 2 : 0) + (counted ? 1 : 0);
  return (texts[slot] ??= `${keySelectText(engine, machine, counted)} ${where}`);
}

/** Keys per INSERT when issuing many: 11 parameters each stays far below either engine's limit. */
const KEYS_PER_INSERT = 100;

function toItem(r: ItemRow): LicenseItem {
  return { ...r, verification_enabled: Boolean(r.verification_enabled) };
}

export function parseEntitlements(joined: string): string[] {
  return joined === '' ? [] : joined.split(',');
}

function toKey(r: KeyRow): StoredKey {
  return {
    ...r,
    entitlements: parseEntitlements(r.entitlements),
    verification_enabled: Boolean(r.verification_enabled),
    activation_policy: r.activation_policy ?? 'node-locked',
    activation_count: Number(r.activation_count),
  };
}

function toFoundKey(r: FoundKeyRow): FoundKey {
  return { ...toKey(r), machine_activated: Boolean(r.machine_activated), machine_lease_expires_ms: r.machine_lease_expires_ms };
}

function publicKey(r: StoredKey): LicenseKeyRecord {
  const { key_hash: _h, activation_policy: _p, lease_seconds: _l, verification_enabled: _v, item_max_deactivations: _m, item_deactivation_window_seconds: _w, ...rest } = r;
  return rest;
}

class Rows implements LicenseRows {
  /** The database's clock as SQL (DB_NOW of this engine). */
  protected readonly now: string;

  constructor(protected readonly x: SqlExecutor) {
    this.now = DB_NOW[x.engine];
  }

  async createItem(item: LicenseItem): Promise<boolean> {
    const r = await this.x.run(sqlText`INSERT INTO license_items (${ITEM_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`, [
      item.id,
      item.name,
      item.license_template,
      item.max_activations,
      item.verification_enabled,
      item.created_at,
      item.activation_policy,
      item.lease_seconds,
      item.max_deactivations,
      item.deactivation_window_seconds,
    ]);
    return r.changes === 1;
  }

  async getItem(id: string): Promise<LicenseItem | undefined> {
    const r = await this.x.get<ItemRow>(sqlText`SELECT ${ITEM_COLUMNS} FROM license_items WHERE id = ?`, [id]);
    return r ? toItem(r) : undefined;
  }

  async addKeys(keys: NewLicenseKey[]): Promise<void> {
    for (let i = 0; i < keys.length; i += KEYS_PER_INSERT) {
      const batch = keys.slice(i, i + KEYS_PER_INSERT);
      await this.x.run(
        `INSERT INTO license_keys (id, item_id, key_prefix, key_hash, licensee, max_activations, expires_at, created_at, entitlements, max_deactivations, deactivation_window_seconds)
         VALUES ${batch.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
        batch.flatMap((k) => [
          k.id,
          k.item_id,
          k.key_prefix,
          k.key_hash,
          k.licensee,
          k.max_activations,
          k.expires_at,
          k.created_at,
          (k.entitlements ?? []).join(','),
          k.max_deactivations ?? null,
          k.deactivation_window_seconds ?? null,
        ]),
      );
    }
  }

  async keysByPrefix(prefix: string): Promise<StoredKey[]> {
    return (await this.x.all<KeyRow>(keySelect(this.x.engine, false, 'WHERE k.key_prefix = ?'), [prefix])).map(toKey);
  }

  async findKeys(prefix: string, machineId: string, counted = true): Promise<FoundKey[]> {
    // One statement for all a request about a machine reads (its item's settings, its activation or lease).
    return (await this.x.all<FoundKeyRow>(keySelect(this.x.engine, true, 'WHERE k.key_prefix = ?', counted), [machineId, machineId, prefix])).map(toFoundKey);
  }

  async listKeys(itemId: string): Promise<LicenseKeyRecord[]> {
    return (await this.x.all<KeyRow>(keySelect(this.x.engine, false, 'WHERE k.item_id = ? ORDER BY k.created_at, k.id'), [itemId])).map((r) => publicKey(toKey(r)));
  }

  async getKey(id: string): Promise<StoredKey | undefined> {
    const r = await this.x.get<KeyRow>(keySelect(this.x.engine, false, 'WHERE k.id = ?'), [id]);
    return r ? toKey(r) : undefined;
  }

  async revokeKey(id: string, at: string): Promise<boolean> {
    // COALESCE keeps the first revocation's time; the row counts as changed, so existence shows.
    return (await this.x.run('UPDATE license_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?', [at, id])).changes === 1;
  }

  async setSuspended(id: string, at: string | null): Promise<boolean> {
    return (await this.x.run('UPDATE license_keys SET suspended_at = ? WHERE id = ?', [at, id])).changes === 1;
  }

  async setEntitlements(id: string, names: string[]): Promise<boolean> {
    return (await this.x.run('UPDATE license_keys SET entitlements = ? WHERE id = ?', [names.join(','), id])).changes === 1;
  }

  async lockKey(keyId: string): Promise<ActivationState | undefined> {
    // PostgreSQL: the row lock, unlike an advisory lock taken by a statement of its own, comes
    // with the row as it stands once granted (READ COMMITTED rereads a row that changed while
    // the statement waited), so locking and reading is one round trip. SQLite: BEGIN IMMEDIATE
    // has serialised the transaction already.
    const forUpdate = this.x.engine === 'postgres' ? ' FOR NO KEY UPDATE' : '';
    return this.x.get<ActivationState>(sqlText`SELECT max_activations, activation_count FROM license_keys WHERE id = ?${forUpdate}`, [keyId]);
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

  async addUnlimitedActivation(keyId: string, machineId: string, machineName: string | null, at: string): Promise<number | undefined> {
    if (this.x.engine === 'postgres') {
      // One statement: the insert and the count's row lock last only while it runs (or its transaction).
      const count = await this.x.value<number>(
        `WITH added AS (
           INSERT INTO license_activations (key_id, machine_id, machine_name, created_at)
             SELECT id, ?, ?, ? FROM license_keys WHERE id = ? AND max_activations IS NULL
             ON CONFLICT (key_id, machine_id) DO NOTHING RETURNING key_id)
         UPDATE license_keys SET activation_count = activation_count + 1 WHERE id IN (SELECT key_id FROM added) RETURNING activation_count`,
        [machineId, machineName, at, keyId],
      );
      return count ?? undefined;
    }
    // SQLite: inside a transaction (BEGIN IMMEDIATE), which has serialised it already.
    const state = await this.lockKey(keyId);
    if (!state || state.max_activations !== null) return undefined;
    return (await this.addActivation(keyId, machineId, machineName, at)) ? state.activation_count + 1 : undefined;
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

  async tidyLeases(keyId: string): Promise<{ machine_id: string; lease_expires_ms: number }[]> {
    if (this.x.engine === 'postgres') {
      return this.x.all(
        sqlText`WITH gone AS (DELETE FROM license_activations WHERE key_id = ? AND lease_expires_ms <= ${this.now} RETURNING machine_id, lease_expires_ms),
           uncounted AS (UPDATE license_keys SET activation_count = activation_count - (SELECT count(*) FROM gone) WHERE id = ? AND EXISTS (SELECT 1 FROM gone))
         SELECT machine_id, lease_expires_ms FROM gone`,
        [keyId, keyId],
      );
    }
    const gone = await this.x.all<{ machine_id: string; lease_expires_ms: number }>(
      sqlText`DELETE FROM license_activations WHERE key_id = ? AND lease_expires_ms <= ${this.now} RETURNING machine_id, lease_expires_ms`,
      [keyId],
    );
    if (gone.length > 0) await this.x.run('UPDATE license_keys SET activation_count = activation_count - ? WHERE id = ?', [gone.length, keyId]);
    return gone;
  }

  async seats(keyId: string, machineId: string): Promise<SeatState> {
    // Every row left after tidyLeases counts, also one that lapsed since: a lease the count
    // included can then be renewed without ever making one seat too many.
    const r = await this.x.get<SeatState>(
      sqlText`SELECT count(*) AS live, min(lease_expires_ms) AS earliest_ms, max(CASE WHEN machine_id = ? THEN lease_expires_ms END) AS mine_ms, ${this.now} AS now_ms
       FROM license_activations WHERE key_id = ?`,
      [machineId, keyId],
    );
    return { live: Number(r!.live), earliest_ms: r!.earliest_ms, mine_ms: r!.mine_ms, now_ms: r!.now_ms };
  }

  async takeLease(keyId: string, machineId: string, machineName: string | null, at: string, leaseSeconds: number): Promise<Lease> {
    const leaseMs = leaseSeconds * 1000;
    if (this.x.engine === 'postgres') {
      // One statement; xmax = 0 tells a new row from the machine's lapsed one taken again (counted already).
      const r = await this.x.get<Lease>(
        sqlText`WITH up AS (
           INSERT INTO license_activations (key_id, machine_id, machine_name, created_at, lease_expires_ms) VALUES (?, ?, ?, ?, ${this.now} + CAST(? AS BIGINT))
           ON CONFLICT (key_id, machine_id) DO UPDATE SET machine_name = excluded.machine_name, created_at = excluded.created_at, lease_expires_ms = excluded.lease_expires_ms
           RETURNING lease_expires_ms, (xmax = 0) AS inserted),
         counted AS (UPDATE license_keys SET activation_count = activation_count + 1 WHERE id = ? AND EXISTS (SELECT 1 FROM up WHERE inserted))
         SELECT lease_expires_ms, ${this.now} AS now_ms FROM up`,
        [keyId, machineId, machineName, at, leaseMs, keyId],
      );
      return r!;
    }
    const existed = await this.isActivated(keyId, machineId);
    const r = await this.x.get<Lease>(
      sqlText`INSERT INTO license_activations (key_id, machine_id, machine_name, created_at, lease_expires_ms) VALUES (?, ?, ?, ?, ${this.now} + ?)
       ON CONFLICT (key_id, machine_id) DO UPDATE SET machine_name = excluded.machine_name, created_at = excluded.created_at, lease_expires_ms = excluded.lease_expires_ms
       RETURNING lease_expires_ms, ${this.now} AS now_ms`,
      [keyId, machineId, machineName, at, leaseMs],
    );
    if (!existed) await this.x.run('UPDATE license_keys SET activation_count = activation_count + 1 WHERE id = ?', [keyId]);
    return r!;
  }

  async renewLease(keyId: string, machineId: string, leaseSeconds: number): Promise<Lease | undefined> {
    return this.x.get<Lease>(
      sqlText`UPDATE license_activations SET lease_expires_ms = ${this.now} + CAST(? AS BIGINT)
       WHERE key_id = ? AND machine_id = ? AND lease_expires_ms > ${this.now}
         AND EXISTS (SELECT 1 FROM license_keys k WHERE k.id = ? AND k.revoked_at IS NULL AND k.suspended_at IS NULL)
       RETURNING lease_expires_ms, ${this.now} AS now_ms`,
      [leaseSeconds * 1000, keyId, machineId, keyId],
    );
  }

  async releaseLease(keyId: string, machineId: string): Promise<{ live: boolean; lease_expires_ms: number; now_ms: number } | undefined> {
    // lease_expires_ms is null for a node-locked row.
    type Gone = { lease_expires_ms: number | null; now_ms: number };
    let r: Gone | undefined;
    if (this.x.engine === 'postgres') {
      r = await this.x.get<Gone>(
        sqlText`WITH gone AS (DELETE FROM license_activations WHERE key_id = ? AND machine_id = ? RETURNING lease_expires_ms),
           uncounted AS (UPDATE license_keys SET activation_count = activation_count - 1 WHERE id = ? AND EXISTS (SELECT 1 FROM gone))
         SELECT lease_expires_ms, ${this.now} AS now_ms FROM gone`,
        [keyId, machineId, keyId],
      );
    } else {
      r = await this.x.get<Gone>(sqlText`DELETE FROM license_activations WHERE key_id = ? AND machine_id = ? RETURNING lease_expires_ms, ${this.now} AS now_ms`, [keyId, machineId]);
      if (r) await this.x.run('UPDATE license_keys SET activation_count = activation_count - 1 WHERE id = ?', [keyId]);
    }
    if (!r) return undefined;
    // A node-locked row (no lease) counts as live: it held its slot until now.
    const lease = r.lease_expires_ms === null ? r.now_ms : Number(r.lease_expires_ms);
    return { live: r.lease_expires_ms === null || lease > r.now_ms, lease_expires_ms: lease, now_ms: r.now_ms };
  }

  async deactivationWindow(keyId: string, windowSeconds: number): Promise<DeactivationWindow> {
    const windowMs = windowSeconds * 1000;
    await this.x.run(sqlText`DELETE FROM license_deactivations WHERE key_id = ? AND at_ms <= ${this.now} - CAST(? AS BIGINT)`, [keyId, windowMs]);
    const r = await this.x.get<{ count: number; earliest_ms: number | null; now_ms: number }>(
      sqlText`WITH t AS (SELECT ${this.now} AS now_ms)
       SELECT count(d.at_ms) AS count, min(d.at_ms) AS earliest_ms, t.now_ms AS now_ms
       FROM t LEFT JOIN license_deactivations d ON d.key_id = ? AND d.at_ms > t.now_ms - CAST(? AS BIGINT) GROUP BY t.now_ms`,
      [keyId, windowMs],
    );
    return { count: Number(r!.count), earliest_ms: r!.earliest_ms, now_ms: r!.now_ms };
  }

  async addDeactivation(keyId: string): Promise<void> {
    await this.x.run(sqlText`INSERT INTO license_deactivations (key_id, at_ms) VALUES (?, ${this.now})`, [keyId]);
  }

  async recordEvent(e: LicenseEventInput): Promise<void> {
    await recordLicenseEvent(this.x, e);
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

/** Whether a lookup's keys may be kept: none floating, whose seats and leases run out with time. Frozen, as they are shared. */
function clockFree(keys: StoredKey[]): boolean {
  if (keys.some((k) => k.activation_policy === 'floating')) return false;
  for (const k of keys) Object.freeze(Object.freeze(k).entitlements);
  Object.freeze(keys);
  return true;
}

/**
 * Whether a machine's lookup may be kept: its machine activated (what a machine verifying again
 * reads; a lookup that finds none comes before the activation that makes it stale), and clock-free.
 */
function activatedAndClockFree(keys: FoundKey[]): boolean {
  return keys.every((k) => k.machine_activated) && clockFree(keys);
}

/** A machine's lookup in the kept lookups. NUL cannot occur in a key's prefix; the machine id comes after it, verbatim. */
function machineLookupKey(prefix: string, machineId: string, counted: boolean): string {
  return `${counted ? 'c' : 'u'}${prefix}\0${machineId}`;
}

export class SqlLicenseStore extends Rows implements LicenseStore {
  readonly groupsWrites: boolean;

  private constructor(private readonly sql: SqlDatabase) {
    super(sql);
    this.groupsWrites = sql.engine === 'sqlite';
    this.keyLookups = new ReadCache(sql);
    this.machineLookups = new ReadCache(sql);
  }

  static async open(sql: SqlDatabase): Promise<SqlLicenseStore> {
    await sql.migrate('license', LICENSE_MIGRATIONS);
    // Its writes record events in the audit trail's tables, so those exist wherever it is opened.
    await sql.migrate('license-audit', LICENSE_AUDIT_MIGRATIONS);
    return new SqlLicenseStore(sql);
  }

  transaction<T>(fn: (tx: LicenseRows) => Promise<T>): Promise<T> {
    return this.sql.transaction((x) => fn(new Rows(x)));
  }

  /**
   * The key lookups outside a transaction, kept while the database is unchanged (read-cache.ts):
   * a license key is read at every request presenting it, and on SQLite the lookup was 15 µs of
   * a status or verify (bench/README.md, issue 37, sixth session). A floating key's answer
   * depends on the clock as well (live leases), so it is read each time.
   */
  private readonly keyLookups: ReadCache<StoredKey[]>;
  private readonly machineLookups: ReadCache<FoundKey[]>;

  override keysByPrefix(prefix: string): Promise<StoredKey[]> {
    return this.keyLookups.get(prefix, () => super.keysByPrefix(prefix), clockFree);
  }

  keptKeysByPrefix(prefix: string): readonly StoredKey[] | undefined {
    return this.keyLookups.peek(prefix);
  }

  override findKeys(prefix: string, machineId: string, counted = true): Promise<FoundKey[]> {
    return this.machineLookups.get(machineLookupKey(prefix, machineId, counted), () => super.findKeys(prefix, machineId, counted), activatedAndClockFree);
  }

  keptFindKeys(prefix: string, machineId: string, counted = true): readonly FoundKey[] | undefined {
    return this.machineLookups.peek(machineLookupKey(prefix, machineId, counted));
  }

  override async addUnlimitedActivation(keyId: string, machineId: string, machineName: string | null, at: string): Promise<number | undefined> {
    // SQLite: its write transaction is this process's own, and as cheap as a statement.
    if (this.sql.engine === 'sqlite') return this.transaction((tx) => tx.addUnlimitedActivation(keyId, machineId, machineName, at));
    return super.addUnlimitedActivation(keyId, machineId, machineName, at);
  }

  async announceSigningKeys(version: number): Promise<void> {
    await this.sql.notify(SIGNING_KEYS_CHANNEL, String(version));
  }

  onSigningKeysAnnounced(fn: () => void): Promise<() => void> {
    return this.sql.listen(SIGNING_KEYS_CHANNEL, () => fn());
  }
}
