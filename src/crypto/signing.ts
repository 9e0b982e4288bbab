// Ed25519 signing keys (node:crypto) for offline license tokens, kept in the license store so every
// instance shares them: one current key and recently retired public keys, compact EdDSA JWTs, and
// the JWKS. Rotation is decided here, in a transaction that locks the keys; each instance's
// SigningKeyring follows changes by notification and, in case one is missed, by polling a version.
import { createPrivateKey, hash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import type { LicenseRows, LicenseStore, SigningKeyRow } from '../store/license.js';

export interface PublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  alg: 'EdDSA';
  use: 'sig';
}

export interface Jwks {
  keys: PublicJwk[];
}

/**
 * The keyring file of earlier versions (0600, in the data dir). On first open it is imported into
 * the database and renamed `<name>.imported`, so nobody takes it for the live keyring later.
 */
export const KEYRING_FILE = 'license-signing-keys.json';
export const IMPORTED_SUFFIX = '.imported';

/** How often an instance checks the version row, in case a notification was missed. */
export const DEFAULT_POLL_MS = 2_000;

interface FileKey {
  kid: string;
  created_at: string;
  retired_at: string | null;
  private_key: string | null;
  public_jwk: PublicJwk;
}

function b64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

function newKey(nowMs: number, position: number): SigningKeyRow {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const jwk = publicKey.export({ format: 'jwk' }) as { x: string };
  const kid = `${new Date(nowMs).toISOString().slice(0, 10).replace(/-/g, '')}-${randomBytes(4).toString('hex')}`;
  const publicJwk: PublicJwk = { kty: 'OKP', crv: 'Ed25519', x: jwk.x, kid, alg: 'EdDSA', use: 'sig' };
  return {
    kid,
    position,
    created_at: new Date(nowMs).toISOString(),
    retired_at: null,
    private_key: b64url(privateKey.export({ format: 'der', type: 'pkcs8' })),
    public_jwk: JSON.stringify(publicJwk),
  };
}

function live(k: SigningKeyRow, nowMs: number, keepMs: number): boolean {
  return k.retired_at === null || Date.parse(k.retired_at) + keepMs > nowMs;
}

function current(keys: SigningKeyRow[]): SigningKeyRow | undefined {
  return keys.filter((k) => k.retired_at === null && k.private_key).at(-1);
}

function readKeyringFile(file: string): FileKey[] | undefined {
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { keys: FileKey[] }).keys;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read the license signing keyring ${file}: ${(err as Error).message}`);
  }
}

/** Bumps the version in the transaction; announced by the caller after the commit. */
async function bump(tx: LicenseRows): Promise<number> {
  const v = (await tx.signingKeysVersion()) + 1;
  await tx.setSigningKeysVersion(v);
  return v;
}

/**
 * Makes sure the store holds a current key: on a database without signing keys, the data dir's
 * keyring file (if any) is imported first, so tokens it signed keep verifying; a key is created
 * when there is still no current one (unless `create` is false: a rotation follows). Returns the
 * kids imported from the file.
 */
export async function ensureSigningKey(store: LicenseStore, opts: { dataDir?: string; nowMs: number; keepMs: number; create?: boolean }): Promise<{ imported: string[] }> {
  const file = opts.dataDir === undefined ? undefined : join(opts.dataDir, KEYRING_FILE);
  const r = await store.transaction(async (tx) => {
    await tx.lockSigningKeys();
    let keys = await tx.signingKeys();
    const imported: string[] = [];
    if (keys.length === 0 && file) {
      const fromFile = readKeyringFile(file) ?? [];
      for (const [i, k] of fromFile.entries()) {
        await tx.addSigningKey({ kid: k.kid, position: i + 1, created_at: k.created_at, retired_at: k.retired_at, private_key: k.private_key, public_jwk: JSON.stringify(k.public_jwk) });
        imported.push(k.kid);
      }
      keys = await tx.signingKeys();
    }
    let changed = imported.length > 0;
    if (!current(keys) && opts.create !== false) {
      await tx.addSigningKey(newKey(opts.nowMs, (keys.at(-1)?.position ?? 0) + 1));
      changed = true;
    }
    return { imported, version: changed ? await bump(tx) : undefined };
  });
  if (r.imported.length > 0 && file) {
    try {
      renameSync(file, file + IMPORTED_SUFFIX);
    } catch (err) {
      // Another instance renamed it first; the database is the keyring either way.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  if (r.version !== undefined) await store.announceSigningKeys(r.version);
  return { imported: r.imported };
}

/**
 * Replaces the current signing key with a new one. The old key's public half stays in the JWKS
 * for `keepMs` (the token lifetime), so tokens it signed verify until they expire; keys retired
 * longer ago are deleted. Every instance hears of it and signs with the new key.
 */
export async function rotateSigningKey(store: LicenseStore, nowMs: number, keepMs: number): Promise<{ kid: string; retired: string[] }> {
  const r = await store.transaction(async (tx) => {
    await tx.lockSigningKeys();
    const keys = await tx.signingKeys();
    const at = new Date(nowMs).toISOString();
    const retired: string[] = [];
    for (const k of keys) {
      if (k.retired_at === null) {
        await tx.retireSigningKey(k.kid, at);
        retired.push(k.kid);
      } else if (!live(k, nowMs, keepMs)) {
        await tx.deleteSigningKey(k.kid);
      }
    }
    const fresh = newKey(nowMs, (keys.at(-1)?.position ?? 0) + 1);
    await tx.addSigningKey(fresh);
    return { kid: fresh.kid, retired, version: await bump(tx) };
  });
  await store.announceSigningKeys(r.version);
  return { kid: r.kid, retired: r.retired };
}

interface Loaded {
  version: number;
  kid: string;
  key: KeyObject;
  /** Every stored key's public half and retirement, for the JWKS. */
  published: { jwk: PublicJwk; retiredAt: number | null }[];
}

export interface SigningKeyringOptions {
  store: LicenseStore;
  /** The clock of the service (retired keys leave the JWKS one token lifetime after retirement). */
  now: () => number;
  keepMs: number;
  /** Where an earlier version's keyring file may wait to be imported. */
  dataDir?: string;
  /** How often to check the version row in case a notification was missed (default 2 s). */
  pollMs?: number;
  /** A failed background refresh (the database away): the loaded keys stay in use. */
  onRefreshError?: (err: unknown) => void;
}

/**
 * One instance's view of the shared signing keys, held in memory so signing costs no query. It
 * reloads when an instance announces a change (LISTEN/NOTIFY on PostgreSQL) and, as a fallback,
 * when the version row differs at a poll, so a missed notification costs at most `pollMs`.
 */
export class SigningKeyring {
  private loaded!: Loaded;
  private timer: NodeJS.Timeout | undefined;
  private unlisten: (() => void) | undefined;
  private refreshing: Promise<void> | undefined;
  private closed = false;

  private constructor(private readonly opts: SigningKeyringOptions) {}

  static async open(opts: SigningKeyringOptions): Promise<SigningKeyring> {
    await ensureSigningKey(opts.store, { dataDir: opts.dataDir, nowMs: opts.now(), keepMs: opts.keepMs });
    const ring = new SigningKeyring(opts);
    await ring.reload();
    ring.unlisten = await opts.store.onSigningKeysAnnounced(() => void ring.refresh().catch((err: unknown) => opts.onRefreshError?.(err)));
    ring.timer = setInterval(() => void ring.refresh().catch((err: unknown) => opts.onRefreshError?.(err)), opts.pollMs ?? DEFAULT_POLL_MS);
    ring.timer.unref();
    return ring;
  }

  /** Re-reads the keys (SIGHUP, or a changed version). */
  async reload(): Promise<void> {
    // The version first: a rotation committed between the two reads shows as a newer version at the next check.
    const version = await this.opts.store.signingKeysVersion();
    const keys = await this.opts.store.signingKeys();
    const active = current(keys);
    if (!active) throw new Error('the license store has no current signing key');
    this.loaded = {
      version,
      kid: active.kid,
      key: createPrivateKey({ key: Buffer.from(active.private_key!, 'base64url'), format: 'der', type: 'pkcs8' }),
      published: keys.map((k) => ({ jwk: JSON.parse(k.public_jwk) as PublicJwk, retiredAt: k.retired_at === null ? null : Date.parse(k.retired_at) })),
    };
  }

  /** Reloads when the version row moved; concurrent calls share one check. */
  refresh(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.refreshing ??= (async () => {
      try {
        if ((await this.opts.store.signingKeysVersion()) !== this.loaded.version) await this.reload();
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  currentKid(): string {
    return this.loaded.kid;
  }

  publicJwks(): Jwks {
    const t = this.opts.now();
    return { keys: this.loaded.published.filter((k) => k.retiredAt === null || k.retiredAt + this.opts.keepMs > t).map((k) => k.jwk) };
  }

  /**
   * A compact JWS (JWT) with header `{alg: EdDSA, typ: JWT, kid}`. The signature is made on
   * libuv's thread pool (crypto.sign with a callback): an Ed25519 signature is 55-90 µs of CPU on
   * this class of machine, which on the event loop every other request waited for; handed off it
   * costs the loop 6-10 µs (bench/README.md, issue 37, sixth session).
   */
  signJwt(claims: Record<string, unknown>): Promise<string> {
    const { kid, key } = this.loaded;
    const header = b64url(JSON.stringify({ alg: 'EdDSA', typ: 'JWT', kid }));
    const payload = b64url(JSON.stringify(claims));
    const input = `${header}.${payload}`;
    return new Promise((resolve, reject) => {
      sign(null, Buffer.from(input), key, (err, signature) => (err ? reject(err) : resolve(`${input}.${b64url(signature)}`)));
    });
  }

  /** Stops following changes (the store stays open). */
  close(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.unlisten?.();
  }
}

/** The fingerprint claim: SHA-256 of the machine fingerprint, so the token does not carry it. */
export function fingerprintHash(fingerprint: string): string {
  // One-shot: a Hash object cost each verify 6 µs where this costs 1 (bench/README.md, issue 37).
  return hash('sha256', fingerprint, 'base64url');
}
