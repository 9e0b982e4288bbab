// Administration of license items, keys and signing keys (what `mkt admin item|key|signing-key`
// runs, on the stores the Factory opens, SQLite or PostgreSQL): create items, issue keys (shown
// once), list, revoke, rotate the token-signing key (every running instance follows).
import { generateLicenseKey, hashLicenseKey, loadKeyHashSecret, parseLicenseKey } from '../../../../src/crypto/license-key.js';
import { ensureSigningKey, rotateSigningKey } from '../../../../src/crypto/signing.js';
import { TOKEN_LIFETIME_SECONDS } from '../../../../src/schemas/license.js';
import type { LicenseItem, LicenseKeyRecord, LicenseStore } from '../../../../src/store/license.js';
import { formatTimestamp } from '../../../../src/util/time.js';
import { newKeyId } from './licenses.js';

export interface IssuedKey {
  id: string;
  key: string;
  item_id: string;
  licensee: string | null;
  max_activations: number | null;
  expires_at: string | null;
  created_at: string;
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

  /** undefined when the id is taken. */
  async createItem(input: { id: string; name: string; licenseTemplate: string | null; maxActivations: number | null; verification: boolean }): Promise<LicenseItem | undefined> {
    const item: LicenseItem = {
      id: input.id,
      name: input.name,
      license_template: input.licenseTemplate,
      max_activations: input.maxActivations,
      verification_enabled: input.verification,
      created_at: formatTimestamp(this.now()),
    };
    return (await this.store.createItem(item)) ? item : undefined;
  }

  async issueKeys(input: { itemId: string; count: number; maxActivations?: number | null; expiresAt: string | null; licensee: string | null }): Promise<IssuedKey[]> {
    const item = await this.store.getItem(input.itemId);
    if (!item) throw new Error(`item not found: ${input.itemId}`);
    const secret = this.hashSecret();
    const created_at = formatTimestamp(this.now());
    const max = input.maxActivations === undefined ? item.max_activations : input.maxActivations;
    const issued: IssuedKey[] = [];
    for (let i = 0; i < input.count; i++) {
      const key = generateLicenseKey();
      issued.push({ id: newKeyId(), key, item_id: item.id, licensee: input.licensee, max_activations: max, expires_at: input.expiresAt, created_at });
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

  /** Revokes by full key or by key id; returns the key id, or undefined when none matches. */
  async revoke(keyOrId: string): Promise<string | undefined> {
    let id: string | undefined;
    if (/^lk_[0-9a-f]+$/.test(keyOrId)) id = keyOrId;
    else {
      const parsed = parseLicenseKey(keyOrId);
      if (!parsed) return undefined;
      const hash = hashLicenseKey(this.hashSecret(), parsed.key);
      id = (await this.store.keysByPrefix(parsed.prefix)).find((k) => k.key_hash === hash)?.id;
    }
    if (!id) return undefined;
    return (await this.store.revokeKey(id, formatTimestamp(this.now()))) ? id : undefined;
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

