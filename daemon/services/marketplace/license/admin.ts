// Administration of license items, keys and signing keys (what `mkt admin item|key|signing-key`
// runs, on the stores the Factory opens, SQLite or PostgreSQL): create items (node-locked or
// floating, with a deactivation budget), issue keys (shown once), list, revoke, suspend and
// reinstate, change entitlements (each change an audit event in its transaction), rotate the
// token-signing key (every running instance follows).
import { generateLicenseKey, hashLicenseKey, loadKeyHashSecret, parseLicenseKey } from '../../../../src/crypto/license-key.js';
import { ensureSigningKey, rotateSigningKey } from '../../../../src/crypto/signing.js';
import { TOKEN_LIFETIME_SECONDS } from '../../../../src/schemas/license.js';
import { ENTITLEMENT_RE } from '../../../../src/schemas/license.js';
import type { ActivationPolicy, LicenseItem, LicenseKeyRecord, LicenseRows, LicenseStore, StoredKey } from '../../../../src/store/license.js';
import type { LicenseEventInput } from '../../../../src/store/license-events.js';
import { formatTimestamp } from '../../../../src/util/time.js';
import { newKeyId } from './licenses.js';
import { keyIdOf } from './key-id.js';

export interface IssuedKey {
  id: string;
  key: string;
  item_id: string;
  licensee: string | null;
  max_activations: number | null;
  expires_at: string | null;
  created_at: string;
  entitlements: string[];
  max_deactivations: number | null;
  deactivation_window_seconds: number | null;
}

/** A bad setting (an item's or a key's): the CLI shows it as a usage error. */
export class LicenseSettingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LicenseSettingError';
  }
}

/** The item settings of issue 33 (all optional: node-locked, no budget). */
export interface ItemRules {
  activation?: ActivationPolicy;
  leaseSeconds?: number | null;
  maxDeactivations?: number | null;
  deactivationWindowSeconds?: number | null;
}

/** What suspend or reinstate did; `revoked`: nothing (revocation is final). */
export type StandingChange = { id: string; outcome: 'changed' | 'unchanged' | 'revoked' };

/** Sorted and without duplicates; a LicenseSettingError names the first bad name. */
export function normalizeEntitlements(names: readonly string[]): string[] {
  for (const n of names) if (!ENTITLEMENT_RE.test(n)) throw new LicenseSettingError(`entitlement names are 1-64 of a-z, 0-9, '.', '_', '-' (starting with a letter or digit), not ${JSON.stringify(n)}`);
  return [...new Set(names)].sort();
}

/** A deactivation budget: both or neither, each a positive integer. */
function budget(max: number | null | undefined, windowSeconds: number | null | undefined): { max: number | null; window: number | null } {
  if ((max ?? null) === null && (windowSeconds ?? null) === null) return { max: null, window: null };
  if (max == null || windowSeconds == null) throw new LicenseSettingError('a deactivation budget needs both --max-deactivations and --per');
  if (!Number.isInteger(max) || max < 1 || max > 2_147_483_647) throw new LicenseSettingError(`--max-deactivations must be a positive integer, not ${max}`);
  if (!Number.isInteger(windowSeconds) || windowSeconds < 1 || windowSeconds > 2_147_483_647) throw new LicenseSettingError(`--per must be a whole number of seconds, at least 1, not ${windowSeconds}`);
  return { max, window: windowSeconds };
}

export interface LicenseAdminOptions {
  /** The marketplace's license store (the caller opened the stores and closes them). */
  store: LicenseStore;
  /**
   * The data dir every instance mounts: the key-hash secret lives there (unless
   * $MKT_LICENSE_KEY_SECRET_FILE names one), and an earlier version's keyring file waits there to be imported.
   */
  dataDir: string;
  env?: NodeJS.ProcessEnv;
  now?: () => number;
  /** Runs on close(): closes stores the admin opened itself. */
  onClose?: () => Promise<void>;
}

export class LicenseAdmin {
  readonly store: LicenseStore;
  private secret: Buffer | undefined;
  private readonly now: () => number;

  constructor(private readonly opts: LicenseAdminOptions) {
    this.store = opts.store;
    this.now = opts.now ?? Date.now;
  }

  /** An admin on stores it opens (and closes) itself: SQLite in `dataDir`, or PostgreSQL at `databaseUrl`. */
  static async open(target: { dataDir: string; databaseUrl?: string; env?: NodeJS.ProcessEnv }, now: () => number = Date.now): Promise<LicenseAdmin> {
    const { openMarketplaceStores } = await import('../../../../src/store/marketplace.js');
    const stores = await openMarketplaceStores({ dataDir: target.dataDir, databaseUrl: target.databaseUrl });
    return new LicenseAdmin({ store: stores.license, dataDir: target.dataDir, env: target.env, now, onClose: () => stores.close() });
  }

  /** Closes the stores when the admin opened them (open()); otherwise their owner does. */
  async close(): Promise<void> {
    await this.opts.onClose?.();
  }

  private hashSecret(): Buffer {
    this.secret ??= loadKeyHashSecret(this.opts.dataDir, this.opts.env ?? {});
    return this.secret;
  }

  /** undefined when the id is taken; a LicenseSettingError for settings that do not fit together. */
  async createItem(input: { id: string; name: string; licenseTemplate: string | null; maxActivations: number | null; verification: boolean } & ItemRules): Promise<LicenseItem | undefined> {
    const policy = input.activation ?? 'node-locked';
    const lease = input.leaseSeconds ?? null;
    if (policy === 'floating' && lease === null) throw new LicenseSettingError('a floating item needs --lease (how long a seat is held without a heartbeat)');
    if (policy === 'node-locked' && lease !== null) throw new LicenseSettingError('--lease is for floating items (--activation floating)');
    if (lease !== null && (!Number.isInteger(lease) || lease < 1 || lease > 2_147_483)) throw new LicenseSettingError(`--lease must be a whole number of seconds from 1 to 2147483 (24 days), not ${lease}`);
    const b = budget(input.maxDeactivations, input.deactivationWindowSeconds);
    const item: LicenseItem = {
      id: input.id,
      name: input.name,
      license_template: input.licenseTemplate,
      max_activations: input.maxActivations,
      verification_enabled: input.verification,
      created_at: formatTimestamp(this.now()),
      activation_policy: policy,
      lease_seconds: lease,
      max_deactivations: b.max,
      deactivation_window_seconds: b.window,
    };
    return (await this.store.createItem(item)) ? item : undefined;
  }

  async issueKeys(input: {
    itemId: string;
    count: number;
    maxActivations?: number | null;
    expiresAt: string | null;
    licensee: string | null;
    entitlements?: string[];
    maxDeactivations?: number | null;
    deactivationWindowSeconds?: number | null;
  }): Promise<IssuedKey[]> {
    const entitlements = normalizeEntitlements(input.entitlements ?? []);
    const b = budget(input.maxDeactivations, input.deactivationWindowSeconds);
    const item = await this.store.getItem(input.itemId);
    if (!item) throw new Error(`item not found: ${input.itemId}`);
    const secret = this.hashSecret();
    const created_at = formatTimestamp(this.now());
    const max = input.maxActivations === undefined ? item.max_activations : input.maxActivations;
    const issued: IssuedKey[] = [];
    for (let i = 0; i < input.count; i++) {
      const key = generateLicenseKey();
      issued.push({
        id: newKeyId(),
        key,
        item_id: item.id,
        licensee: input.licensee,
        max_activations: max,
        expires_at: input.expiresAt,
        created_at,
        entitlements,
        max_deactivations: b.max,
        deactivation_window_seconds: b.window,
      });
    }
    const rows = issued.map((k) => ({ ...k, key_prefix: parseLicenseKey(k.key)!.prefix, key_hash: hashLicenseKey(secret, k.key) }));
    // All or none: a batch printed once must not be half stored.
    await this.store.transaction((tx) => tx.addKeys(rows));
    return issued;
  }

  async listKeys(itemId: string): Promise<LicenseKeyRecord[] | undefined> {
    if (!(await this.store.getItem(itemId))) return undefined;
    return this.store.listKeys(itemId);
  }

  /** The key id of a key given by id (`lk_…`, not checked) or in full (looked up); undefined when none matches. */
  private keyId(keyOrId: string): Promise<string | undefined> {
    return keyIdOf(keyOrId, (p) => this.store.keysByPrefix(p), () => this.hashSecret());
  }

  /** Runs `fn` on the key under its lock, in one transaction with the events it records; undefined when there is no such key. */
  private async withKey<T>(keyOrId: string, fn: (tx: LicenseRows, key: StoredKey, at: { iso: string; ms: number }) => Promise<T>): Promise<T | undefined> {
    const id = await this.keyId(keyOrId);
    if (!id) return undefined;
    const ms = this.now();
    return this.store.transaction(async (tx) => {
      if (!(await tx.lockKey(id))) return undefined;
      const key = await tx.getKey(id);
      return key ? fn(tx, key, { iso: formatTimestamp(ms), ms }) : undefined;
    });
  }

  private event(key: StoredKey, type: LicenseEventInput['type'], atMs: number, data?: Record<string, unknown>): LicenseEventInput {
    return { type, key_id: key.id, item_id: key.item_id, at_ms: atMs, data };
  }

  /** Revokes by full key or by key id; returns the key id, or undefined when none matches. Final: it wins over a suspension. */
  async revoke(keyOrId: string): Promise<string | undefined> {
    return this.withKey(keyOrId, async (tx, key, at) => {
      if (key.revoked_at !== null) return key.id;
      await tx.revokeKey(key.id, at.iso);
      await tx.recordEvent(this.event(key, 'license.revoked', at.ms));
      return key.id;
    });
  }

  /** Suspends a key: it answers SUSPENDED (deactivation still works) and keeps its activations. */
  async suspend(keyOrId: string): Promise<StandingChange | undefined> {
    return this.withKey(keyOrId, async (tx, key, at): Promise<StandingChange> => {
      if (key.revoked_at !== null) return { id: key.id, outcome: 'revoked' };
      if (key.suspended_at !== null) return { id: key.id, outcome: 'unchanged' };
      await tx.setSuspended(key.id, at.iso);
      await tx.recordEvent(this.event(key, 'license.suspended', at.ms));
      return { id: key.id, outcome: 'changed' };
    });
  }

  /** Lifts a suspension: the key validates again, with the activations it kept. */
  async reinstate(keyOrId: string): Promise<StandingChange | undefined> {
    return this.withKey(keyOrId, async (tx, key, at): Promise<StandingChange> => {
      if (key.revoked_at !== null) return { id: key.id, outcome: 'revoked' };
      if (key.suspended_at === null) return { id: key.id, outcome: 'unchanged' };
      await tx.setSuspended(key.id, null);
      await tx.recordEvent(this.event(key, 'license.reinstated', at.ms, { suspended_at: key.suspended_at }));
      return { id: key.id, outcome: 'changed' };
    });
  }

  /** Adds and removes entitlements (a name in both is removed); the key's list after the change. */
  async changeEntitlements(keyOrId: string, change: { add?: string[]; remove?: string[] }): Promise<{ id: string; entitlements: string[]; added: string[]; removed: string[] } | undefined> {
    const add = normalizeEntitlements(change.add ?? []);
    const remove = normalizeEntitlements(change.remove ?? []);
    return this.withKey(keyOrId, async (tx, key, at) => {
      const next = normalizeEntitlements([...key.entitlements, ...add].filter((n) => !remove.includes(n)));
      const added = next.filter((n) => !key.entitlements.includes(n));
      const removed = key.entitlements.filter((n) => !next.includes(n));
      if (added.length > 0 || removed.length > 0) {
        await tx.setEntitlements(key.id, next);
        await tx.recordEvent(this.event(key, 'license.entitlements_changed', at.ms, { added, removed, entitlements: next }));
      }
      return { id: key.id, entitlements: next, added, removed };
    });
  }

  /**
   * A new current signing key. A keyring file not imported yet (no server of this version ran on
   * the database) is imported first, so the tokens its keys signed keep verifying.
   */
  async rotateSigningKey(): Promise<{ kid: string; retired: string[] }> {
    const keepMs = TOKEN_LIFETIME_SECONDS * 1000;
    await ensureSigningKey(this.store, { dataDir: this.opts.dataDir, nowMs: this.now(), keepMs, create: false });
    return rotateSigningKey(this.store, this.now(), keepMs);
  }
}

