// The license-key domain, free of HTTP: key lookup (check part, keyed hash, constant-time
// compare), validity, activations (the maximum is decided here, in a transaction that locks the
// key, so instances sharing a database never exceed it; a key without one takes no lock),
// offline tokens, and license text.
import { randomUUID, timingSafeEqual } from 'node:crypto';
import type { FoundKey, LicenseStore, StoredKey } from '../../../../src/store/license.js';
import { displayPrefix, hashLicenseKey, parseLicenseKey } from '../../../../src/crypto/license-key.js';
import { fingerprintHash, type SigningKeyring } from '../../../../src/crypto/signing.js';
import {
  TOKEN_LIFETIME_SECONDS,
  type DeactivateKeyResponse,
  type KeyStatusLicense,
  type KeyStatusResponse,
  type LicenseCode,
  type LicenseTokenClaims,
  type LicenseVerifyResponse,
  type ValidateKeyRequest,
  type ValidateKeyResponse,
} from '../../../../src/schemas/license.js';
import type { Clock } from '../../../../src/util/clock.js';
import { formatTimestamp } from '../../../../src/util/time.js';

const MESSAGES: Record<LicenseCode, string | null> = {
  VALID: null,
  MALFORMED_KEY: 'the license key is malformed (check for a typo)',
  NOT_FOUND: 'license key not found',
  REVOKED: 'the license key has been revoked',
  EXPIRED: 'the license key has expired',
  TOO_MANY_ACTIVATIONS: 'the license key has reached its activation maximum',
  MACHINE_NOT_ACTIVATED: 'the machine is not activated for this license key',
  VERIFICATION_DISABLED: 'offline verification is not enabled for this item',
};

export type ActivationResult =
  | { kind: 'created'; count: number }
  | { kind: 'existing'; count: number }
  | { kind: 'full'; count: number };

/** A key lookup: the key (for a request about a machine, a FoundKey), or a failure code. */
export type Lookup<K extends StoredKey = StoredKey> = { ok: true; key: K } | { ok: false; code: 'MALFORMED_KEY' | 'NOT_FOUND' };

export interface LicenseDeps {
  store: LicenseStore;
  clock: Clock;
  hashSecret: Buffer;
  keyring: SigningKeyring;
  issuer: string;
}

function hashesEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

export function summary(key: StoredKey): KeyStatusLicense {
  const max = key.max_activations;
  return {
    item_id: key.item_id,
    activation_count: key.activation_count,
    created_at: key.created_at,
    max_activations: max,
    remaining_activations: max === null ? null : Math.max(0, max - key.activation_count),
    expires_at: key.expires_at,
  };
}

export function isFailureGuess(code: LicenseCode | string | undefined): boolean {
  return code === 'MALFORMED_KEY' || code === 'NOT_FOUND';
}

export class Licenses {
  constructor(private readonly d: LicenseDeps) {}

  /**
   * Activates the machine unless the key is at its maximum (a machine activated already keeps its
   * slot). The key's lock makes count, check and insert one step for every instance (on SQLite
   * the write transaction alone does).
   */
  async activate(key: Pick<StoredKey, 'id' | 'max_activations'>, machineId: string, machineName: string | null): Promise<ActivationResult> {
    const keyId = key.id;
    const at = formatTimestamp(this.d.clock.now());
    if (key.max_activations === null) {
      // No maximum, no count to hold still: without the lock, activations of a much-used key do
      // not queue behind each other (the maximum is fixed at issue; the store checks it anyway).
      const count = await this.d.store.addUnlimitedActivation(keyId, machineId, machineName, at);
      if (count !== undefined) return { kind: 'created', count };
    }
    return this.d.store.transaction(async (tx) => {
      const state = await tx.lockKey(keyId);
      // Keys are never deleted; a missing one has no slot to give.
      if (!state) return { kind: 'full', count: 0 };
      const count = state.activation_count;
      if (state.max_activations !== null && count >= state.max_activations) {
        return (await tx.isActivated(keyId, machineId)) ? { kind: 'existing', count } : { kind: 'full', count };
      }
      // Below the maximum, the insert itself tells a new machine from one activated already.
      return (await tx.addActivation(keyId, machineId, machineName, at)) ? { kind: 'created', count: count + 1 } : { kind: 'existing', count };
    });
  }

  /** Frees the machine's slot; false when it was not activated. */
  private release(keyId: string, machineId: string): Promise<boolean> {
    return this.d.store.transaction(async (tx) => {
      await tx.lockKey(keyId);
      return tx.removeActivation(keyId, machineId);
    });
  }

  lookup(raw: string): Promise<Lookup> {
    return this.find(raw, (prefix) => this.d.store.keysByPrefix(prefix));
  }

  /** The lookup of a request about one machine: the same read tells its item's switch and the machine's activation. */
  lookupFor(raw: string, machineId: string): Promise<Lookup<FoundKey>> {
    return this.find(raw, (prefix) => this.d.store.findKeys(prefix, machineId));
  }

  private async find<K extends StoredKey>(raw: string, byPrefix: (prefix: string) => Promise<K[]>): Promise<Lookup<K>> {
    const parsed = parseLicenseKey(raw);
    if (!parsed) return { ok: false, code: 'MALFORMED_KEY' };
    const hash = hashLicenseKey(this.d.hashSecret, parsed.key);
    const candidates = await byPrefix(parsed.prefix);
    let found: K | undefined;
    // Compare every candidate, in constant time each, without stopping at the first match.
    for (const c of candidates) if (hashesEqual(c.key_hash, hash)) found = c;
    if (!found) return { ok: false, code: 'NOT_FOUND' };
    return { ok: true, key: found };
  }

  /** REVOKED or EXPIRED for a key that exists but may not be used; undefined when usable. */
  private standing(key: StoredKey): LicenseCode | undefined {
    if (key.revoked_at !== null) return 'REVOKED';
    if (key.expires_at !== null && Date.parse(key.expires_at) <= this.d.clock.now()) return 'EXPIRED';
    return undefined;
  }

  async status(raw: string): Promise<KeyStatusResponse> {
    const l = await this.lookup(raw);
    if (!l.ok) return { valid: false, error: MESSAGES[l.code], code: l.code, license: null };
    const bad = this.standing(l.key);
    return { valid: bad === undefined, error: bad ? MESSAGES[bad] : null, code: bad ?? 'VALID', license: summary(l.key) };
  }

  async validate(req: ValidateKeyRequest): Promise<ValidateKeyResponse> {
    const answer = (code: LicenseCode, key: StoredKey | null, activated = false): ValidateKeyResponse => ({
      valid: code === 'VALID',
      error: MESSAGES[code],
      code,
      license: key ? summary(key) : null,
      activated,
    });
    if (req.machine_id === undefined) {
      const l = await this.lookup(req.key);
      return l.ok ? answer(this.standing(l.key) ?? 'VALID', l.key) : answer(l.code, null);
    }
    const l = await this.lookupFor(req.key, req.machine_id);
    if (!l.ok) return answer(l.code, null);
    const bad = this.standing(l.key);
    if (bad) return answer(bad, l.key);
    // An active machine answers from the lookup: activating it again changes nothing.
    if (l.key.machine_activated) return answer('VALID', l.key);
    if (req.activate) {
      const r = await this.activate(l.key, req.machine_id, req.machine_name ?? null);
      const key = { ...l.key, activation_count: r.count };
      return r.kind === 'full' ? answer('TOO_MANY_ACTIVATIONS', key) : answer('VALID', key, r.kind === 'created');
    }
    return answer('MACHINE_NOT_ACTIVATED', l.key);
  }

  /** Frees one machine's slot. Unknown key or machine: `success: false`, never an exception. */
  async deactivate(raw: string, machineId: string): Promise<DeactivateKeyResponse> {
    const l = await this.lookup(raw);
    if (!l.ok) return { success: false, message: MESSAGES[l.code]!, code: l.code };
    if (!(await this.release(l.key.id, machineId))) {
      return { success: false, message: MESSAGES.MACHINE_NOT_ACTIVATED!, code: 'MACHINE_NOT_ACTIVATED' };
    }
    return { success: true, message: 'machine deactivated; its activation slot is free', code: 'DEACTIVATED' };
  }

  async verify(raw: string, fingerprint: string): Promise<LicenseVerifyResponse> {
    const fail = (code: LicenseCode): LicenseVerifyResponse => ({ valid: false, error: MESSAGES[code], expires_in: null, token: null, code });
    const l = await this.lookupFor(raw, fingerprint);
    if (!l.ok) return fail(l.code);
    if (!l.key.verification_enabled) return fail('VERIFICATION_DISABLED');
    const bad = this.standing(l.key);
    if (bad) return fail(bad);
    // Re-verifying an active machine (the common case, weekly in CI) needs no write lock.
    if (!l.key.machine_activated) {
      const r = await this.activate(l.key, fingerprint, null);
      if (r.kind === 'full') return fail('TOO_MANY_ACTIVATIONS');
    }
    const iat = Math.floor(this.d.clock.now() / 1000);
    const fph = fingerprintHash(fingerprint);
    return { valid: true, error: null, expires_in: TOKEN_LIFETIME_SECONDS, token: this.token(l.key, fph, iat), code: 'VALID' };
  }

  /**
   * Ed25519 signatures are deterministic, so the same claims under the same key give the same
   * token: within one second (same `iat`) a repeated verify reuses it instead of signing again.
   */
  private readonly recent = new Map<string, { iat: number; kid: string; token: string }>();

  private token(key: StoredKey, fph: string, iat: number): string {
    const memoKey = `${key.id}\n${fph}`;
    const kid = this.d.keyring.currentKid();
    const hit = this.recent.get(memoKey);
    if (hit && hit.iat === iat && hit.kid === kid) return hit.token;
    const claims: LicenseTokenClaims & { [k: string]: unknown } = {
      iss: this.d.issuer,
      sub: key.id,
      license: key.id,
      item: key.item_id,
      fph,
      iat,
      exp: iat + TOKEN_LIFETIME_SECONDS,
    };
    const token = this.d.keyring.signJwt(claims);
    if (this.recent.size >= 10_000) this.recent.clear();
    this.recent.set(memoKey, { iat, kid, token });
    return token;
  }

  /**
   * The item's license template with `{{item_name}}`, `{{licensee}}`, `{{year}}` and
   * `{{key_prefix}}` filled in; undefined when the item is missing or has no license. The
   * key, when one is presented for this item, personalises the text; `code` tells a failed
   * lookup, which counts towards the abuse limit like any other.
   */
  async licenseText(itemId: string, rawKey: string | undefined): Promise<{ text: string | undefined; code?: LicenseCode }> {
    const item = await this.d.store.getItem(itemId);
    if (!item || item.license_template === null) return { text: undefined };
    let key: StoredKey | undefined;
    let code: LicenseCode | undefined;
    if (rawKey !== undefined) {
      const l = await this.lookup(rawKey);
      if (!l.ok) code = l.code;
      else if (l.key.item_id === item.id) key = l.key;
    }
    const values: Record<string, string> = {
      item_name: item.name,
      item_id: item.id,
      licensee: key?.licensee ?? 'the licensee',
      year: String(new Date(key ? Date.parse(key.created_at) : this.d.clock.now()).getUTCFullYear()),
      key_prefix: key ? displayPrefix(key.key_prefix) : '(no key)',
    };
    return { text: item.license_template.replace(/\{\{\s*([a-z_]+)\s*\}\}/g, (m, name: string) => values[name] ?? m), code };
  }
}

export function newKeyId(): string {
  return `lk_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
}
