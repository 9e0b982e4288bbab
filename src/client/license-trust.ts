// The trust anchor of `mkt license check`: the vendor's public keys, pinned from outside the
// user-writable token cache (`--public-key FILE` or $MKT_LICENSE_PUBLIC_KEYS), never from it.
import { createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** One pinned Ed25519 public key; `kid` is absent for a PEM key (it then matches any token kid). */
export interface PinnedKey {
  kid?: string;
  key: KeyObject;
}

export interface PinnedKeys {
  keys: PinnedKey[];
  /** Where they came from, for messages: a path, or `$MKT_LICENSE_PUBLIC_KEYS`. */
  source: string;
}

export const PUBLIC_KEYS_ENV = 'MKT_LICENSE_PUBLIC_KEYS';

export type PinResult = { ok: true; pinned: PinnedKeys } | { ok: false; missing: boolean; error: string };

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

function isInline(text: string): boolean {
  return text.startsWith('{') || text.startsWith('-----BEGIN');
}

/** An Ed25519 public JWK as a KeyObject; anything else (a private key above all) is refused. */
function jwkKey(jwk: unknown, where: string): PinnedKey {
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) throw new Error(`${where} is not a JSON Web Key`);
  const k = jwk as Record<string, unknown>;
  // A shipped private key would let every user mint tokens: refuse it loudly rather than use its public half.
  if ('d' in k) throw new Error(`${where} is a private key; pin only the public keys (the server's jwks.json)`);
  if (k.kty !== 'OKP' || k.crv !== 'Ed25519' || typeof k.x !== 'string') throw new Error(`${where} is not an Ed25519 public key (kty OKP, crv Ed25519)`);
  if (k.kid !== undefined && typeof k.kid !== 'string') throw new Error(`${where} has a kid that is not a string`);
  try {
    return { kid: k.kid as string | undefined, key: createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: k.x }, format: 'jwk' }) };
  } catch {
    throw new Error(`${where} is not a valid Ed25519 public key`);
  }
}

function pemKeys(text: string, source: string): PinnedKey[] {
  const keys: PinnedKey[] = [];
  for (const m of text.matchAll(PEM_BLOCK)) {
    if (m[1] !== 'PUBLIC KEY') throw new Error(`${source} holds a ${m[1]} block; pin only public keys (BEGIN PUBLIC KEY)`);
    let key: KeyObject;
    try {
      key = createPublicKey(m[0]);
    } catch {
      throw new Error(`${source} holds a PEM block that is not a valid public key`);
    }
    if (key.asymmetricKeyType !== 'ed25519') throw new Error(`${source} holds a ${key.asymmetricKeyType ?? 'non-Ed25519'} key; license tokens are signed with Ed25519`);
    keys.push({ key });
  }
  return keys;
}

/** Parses a JWKS (`{"keys": [...]}`), a single JWK, or one or more PEM `PUBLIC KEY` blocks. */
export function parsePinnedKeys(text: string, source: string): PinnedKey[] {
  const t = text.trim();
  let keys: PinnedKey[];
  if (t.startsWith('-----BEGIN')) keys = pemKeys(t, source);
  else {
    let doc: unknown;
    try {
      doc = JSON.parse(t);
    } catch {
      throw new Error(`${source} is neither a JWKS, a JWK nor a PEM public key`);
    }
    const set = doc as { keys?: unknown };
    if (typeof doc === 'object' && doc !== null && 'keys' in set) {
      if (!Array.isArray(set.keys)) throw new Error(`${source}: "keys" is not an array`);
      keys = set.keys.map((k, i) => jwkKey(k, `${source} key ${i + 1}`));
    } else keys = [jwkKey(doc, source)];
  }
  if (keys.length === 0) throw new Error(`${source} holds no public key`);
  return keys;
}

/**
 * The pinned keys: `--public-key FILE` first, else $MKT_LICENSE_PUBLIC_KEYS (a path, or an
 * inline JWKS, JWK or PEM). There is deliberately no fallback to the cached JWKS.
 */
export function loadPinnedKeys(flag: string | undefined, env: NodeJS.ProcessEnv, cwd: string): PinResult {
  let text: string;
  let source: string;
  const fromEnv = env[PUBLIC_KEYS_ENV]?.trim();
  if (flag !== undefined || (fromEnv !== undefined && fromEnv !== '' && !isInline(fromEnv))) {
    const path = flag ?? fromEnv!;
    source = flag !== undefined ? path : `$${PUBLIC_KEYS_ENV} file ${path}`;
    try {
      text = readFileSync(resolve(cwd, path), 'utf8');
    } catch (err) {
      return { ok: false, missing: false, error: `cannot read the pinned public keys ${source}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
    }
  } else if (fromEnv) {
    text = fromEnv;
    source = `$${PUBLIC_KEYS_ENV}`;
  } else {
    return {
      ok: false,
      missing: true,
      error: `no pinned license public key: pass --public-key FILE or set $${PUBLIC_KEYS_ENV} to the vendor's JWKS (the cached keys are never trusted)`,
    };
  }
  try {
    return { ok: true, pinned: { keys: parsePinnedKeys(text, source), source } };
  } catch (err) {
    return { ok: false, missing: false, error: (err as Error).message };
  }
}
