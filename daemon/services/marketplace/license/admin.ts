// Local administration of license items and keys (what `mkt admin item|key|signing-key`
// runs, straight on the data dir): create items, issue keys (shown once), list, revoke.
import { join } from 'node:path';
import { openDatabase } from '../../../../src/store/sqlite.js';
import { SqliteLicenseStore, type LicenseItem, type LicenseKeyRecord } from '../../../../src/store/license.js';
import { generateLicenseKey, hashLicenseKey, loadKeyHashSecret, parseLicenseKey } from '../../../../src/crypto/license-key.js';
import { rotateSigningKey } from '../../../../src/crypto/signing.js';
import { TOKEN_LIFETIME_SECONDS } from '../../../../src/schemas/license.js';
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

export class LicenseAdmin {
  readonly store: SqliteLicenseStore;
  private secret: Buffer | undefined;

  constructor(
    private readonly dataDir: string,
    private readonly now: () => number = Date.now,
  ) {
    this.store = new SqliteLicenseStore(openDatabase(join(dataDir, 'marketplace.db')), true);
  }

  private hashSecret(): Buffer {
    this.secret ??= loadKeyHashSecret(this.dataDir);
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
    await this.store.addKeys(
      issued.map((k) => ({ ...k, key_prefix: parseLicenseKey(k.key)!.prefix, key_hash: hashLicenseKey(secret, k.key) })),
    );
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

  rotateSigningKey(): { kid: string; retired: string[] } {
    return rotateSigningKey(this.dataDir, this.now(), TOKEN_LIFETIME_SECONDS * 1000);
  }

  async close(): Promise<void> {
    await this.store.close();
  }
}
