// Ed25519 signing keys (node:crypto) for offline license tokens: a keyring file (0600) in the
// data dir with one current key and recently retired public keys, compact EdDSA JWTs, and JWKS.
import { createHash, createPrivateKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

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

interface StoredKey {
  kid: string;
  created_at: string;
  /** When a rotation replaced it; its public half stays published while its tokens live. */
  retired_at: string | null;
  /** PKCS#8 DER, base64url; dropped once the key is retired. */
  private_key: string | null;
  public_jwk: PublicJwk;
}

interface KeyringFile {
  keys: StoredKey[];
}

export const KEYRING_FILE = 'license-signing-keys.json';

function b64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

function newKey(nowMs: number): StoredKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const jwk = publicKey.export({ format: 'jwk' }) as { x: string };
  const kid = `${new Date(nowMs).toISOString().slice(0, 10).replace(/-/g, '')}-${randomBytes(4).toString('hex')}`;
  return {
    kid,
    created_at: new Date(nowMs).toISOString(),
    retired_at: null,
    private_key: b64url(privateKey.export({ format: 'der', type: 'pkcs8' })),
    public_jwk: { kty: 'OKP', crv: 'Ed25519', x: jwk.x, kid, alg: 'EdDSA', use: 'sig' },
  };
}

function writeKeyring(file: string, ring: KeyringFile): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(ring, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, file);
}

function readKeyring(file: string): KeyringFile | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as KeyringFile;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read the license signing keyring ${file}: ${(err as Error).message}`);
  }
}

/**
 * Replaces the current signing key with a new one. The old key's public half stays in the
 * JWKS for `keepMs` (the token lifetime), so tokens it signed verify until they expire.
 */
export function rotateSigningKey(dataDir: string, nowMs: number, keepMs: number): { kid: string; retired: string[] } {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, KEYRING_FILE);
  const ring = readKeyring(file) ?? { keys: [] };
  const now = new Date(nowMs).toISOString();
  const retired: string[] = [];
  for (const k of ring.keys) {
    if (k.retired_at === null) {
      k.retired_at = now;
      k.private_key = null;
      retired.push(k.kid);
    }
  }
  ring.keys = ring.keys.filter((k) => k.retired_at === null || Date.parse(k.retired_at) + keepMs > nowMs);
  const fresh = newKey(nowMs);
  ring.keys.push(fresh);
  writeKeyring(file, ring);
  return { kid: fresh.kid, retired };
}

/**
 * The server's view of the keyring file. It re-reads the file when it changes (checked at
 * most once a second), so `mkt admin signing-key rotate` takes effect in a running server.
 */
export class SigningKeyring {
  private readonly file: string;
  private mtimeMs = -1;
  private checkedAt = 0;
  private current!: { kid: string; key: KeyObject };
  private jwks: Jwks = { keys: [] };

  constructor(
    private readonly dataDir: string,
    private readonly now: () => number,
    private readonly keepMs: number,
  ) {
    this.file = join(dataDir, KEYRING_FILE);
    const ring = readKeyring(this.file);
    if (!ring || !ring.keys.some((k) => k.retired_at === null && k.private_key)) rotateSigningKey(dataDir, now(), keepMs);
    this.load();
  }

  private load(): void {
    const ring = readKeyring(this.file);
    const active = ring?.keys.filter((k) => k.retired_at === null && k.private_key).at(-1);
    if (!ring || !active) throw new Error(`the license signing keyring ${this.file} has no current key`);
    this.mtimeMs = statSync(this.file).mtimeMs;
    this.current = { kid: active.kid, key: createPrivateKey({ key: Buffer.from(active.private_key!, 'base64url'), format: 'der', type: 'pkcs8' }) };
    const t = this.now();
    this.jwks = { keys: ring.keys.filter((k) => k.retired_at === null || Date.parse(k.retired_at) + this.keepMs > t).map((k) => k.public_jwk) };
  }

  private refresh(): void {
    const t = Date.now();
    if (t - this.checkedAt < 1000) return;
    this.checkedAt = t;
    try {
      if (statSync(this.file).mtimeMs !== this.mtimeMs) this.load();
    } catch {
      // keep the keys already loaded if the file is briefly missing mid-rename
    }
  }

  /** Forces a re-read (SIGHUP). */
  reload(): void {
    this.load();
  }

  currentKid(): string {
    this.refresh();
    return this.current.kid;
  }

  publicJwks(): Jwks {
    this.refresh();
    return this.jwks;
  }

  /** A compact JWS (JWT) with header `{alg: EdDSA, typ: JWT, kid}`. */
  signJwt(claims: Record<string, unknown>): string {
    this.refresh();
    const header = b64url(JSON.stringify({ alg: 'EdDSA', typ: 'JWT', kid: this.current.kid }));
    const payload = b64url(JSON.stringify(claims));
    const input = `${header}.${payload}`;
    return `${input}.${b64url(sign(null, Buffer.from(input), this.current.key))}`;
  }
}

/** The fingerprint claim: SHA-256 of the machine fingerprint, so the token does not carry it. */
export function fingerprintHash(fingerprint: string): string {
  return createHash('sha256').update(fingerprint, 'utf8').digest('base64url');
}
