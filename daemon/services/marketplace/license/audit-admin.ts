// Administration of the license audit trail (what `mkt admin key events` and `mkt admin webhook`
// run, on the stores the Factory opens): a key's events, and the webhooks told of them. The
// signing secret of a webhook is returned once, when it is added, and never listed.
import { loadKeyHashSecret } from '../../../../src/crypto/license-key.js';
import type { LicenseStore } from '../../../../src/store/license.js';
import { newWebhookId, newWebhookSecret, type SqlLicenseAuditStore } from '../../../../src/store/license-events-sql.js';
import { parseEventPatterns, type LicenseEvent, type LicenseWebhook, type LicenseWebhookWithSecret } from '../../../../src/store/license-events.js';
import { formatTimestamp } from '../../../../src/util/time.js';
import { keyIdOf } from './key-id.js';

/** A webhook URL or pattern the admin cannot use: the CLI shows it as a usage error. */
export class WebhookSettingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookSettingError';
  }
}

const MAX_URL = 2048;

/** An absolute http(s) URL without credentials (a log or a listing would show them). */
export function checkWebhookUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new WebhookSettingError(`not a URL: ${JSON.stringify(raw)} (give an absolute http:// or https:// URL)`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new WebhookSettingError(`webhook URLs are http:// or https://, not ${u.protocol}`);
  if (u.username !== '' || u.password !== '') throw new WebhookSettingError('a webhook URL must not carry a user or password: the signature authenticates each delivery');
  if (raw.length > MAX_URL) throw new WebhookSettingError(`a webhook URL is at most ${MAX_URL} characters`);
  return u.href;
}

export interface LicenseAuditAdminOptions {
  license: LicenseStore;
  audit: SqlLicenseAuditStore;
  /** Where the key-hash secret lives (as for LicenseAdmin), to find a key given in full. */
  dataDir: string;
  env?: NodeJS.ProcessEnv;
  now?: () => number;
}

export class LicenseAuditAdmin {
  private secret: Buffer | undefined;
  private readonly now: () => number;

  constructor(private readonly o: LicenseAuditAdminOptions) {
    this.now = o.now ?? Date.now;
  }

  /** The id of an existing key given by id (`lk_…`) or in full; undefined when there is none. */
  async keyId(keyOrId: string): Promise<string | undefined> {
    const id = await keyIdOf(keyOrId, (p) => this.o.license.keysByPrefix(p), () => (this.secret ??= loadKeyHashSecret(this.o.dataDir, this.o.env ?? {})));
    return id === undefined ? undefined : (await this.o.license.getKey(id))?.id;
  }

  /** A key's events whose latest occurrence is at or after `sinceMs`, oldest first; undefined when there is no such key. */
  async events(keyOrId: string, sinceMs = 0): Promise<{ key_id: string; events: LicenseEvent[] } | undefined> {
    const id = await this.keyId(keyOrId);
    if (!id) return undefined;
    return { key_id: id, events: await this.o.audit.events(id, sinceMs) };
  }

  /** Adds a webhook; the result holds its signing secret, which is shown this once. */
  async addWebhook(url: string, events: string): Promise<LicenseWebhookWithSecret> {
    let patterns: string[];
    try {
      patterns = parseEventPatterns(events);
    } catch (err) {
      throw new WebhookSettingError((err as Error).message);
    }
    const w: LicenseWebhookWithSecret = { id: newWebhookId(), url: checkWebhookUrl(url), events: patterns, secret: newWebhookSecret(), created_at: formatTimestamp(this.now()) };
    await this.o.audit.addWebhook(w);
    return w;
  }

  webhooks(): Promise<LicenseWebhook[]> {
    return this.o.audit.webhooks();
  }

  removeWebhook(id: string): Promise<boolean> {
    return this.o.audit.removeWebhook(id);
  }
}
