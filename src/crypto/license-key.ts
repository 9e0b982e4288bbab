// License key codes: a readable format (`MKT-XXXXX-XXXXX-XXXXX-XXXXX-CCCCC`, Crockford base32)
// whose last group is a check part that rejects typos before any lookup, and the keyed hash
// that is all the database ever holds of a key.
import { createHmac, hash, randomBytes } from 'node:crypto';
import { loadSecretFile, readProvisionedSecretFile } from './secret-file.js';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const GROUP = 5;
const BODY_GROUPS = 4;
export const KEY_PREFIX_TEXT = 'MKT';

function encode(bytes: Buffer, chars: number): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5 && out.length < chars) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  return out;
}

function checkPart(body: string): string {
  // Hex then decoded: node 20's one-shot hash returns hex in half the time it takes to return a Buffer.
  return encode(Buffer.from(hash('sha256', `mkt-license:${body}`, 'hex'), 'hex'), GROUP);
}

function groups(s: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < s.length; i += GROUP) out.push(s.slice(i, i + GROUP));
  return out;
}

/** A new random key: 100 random bits in four groups, then the check group. */
export function generateLicenseKey(): string {
  const body = encode(randomBytes(13), GROUP * BODY_GROUPS);
  return [KEY_PREFIX_TEXT, ...groups(body), checkPart(body)].join('-');
}

export interface ParsedKey {
  /** Canonical form, as issued. */
  key: string;
  /** The first body group: not secret, used to find the key's row and shown in listings. */
  prefix: string;
}

/**
 * Parses what a person typed or pasted: case, spaces and dashes are forgiven, and Crockford's
 * look-alikes (O→0, I/L→1) are mapped. undefined when the shape or the check part is wrong.
 */
const CANONICAL = /^MKT-([0-9A-HJKMNP-TV-Z]{5})-([0-9A-HJKMNP-TV-Z]{5})-([0-9A-HJKMNP-TV-Z]{5})-([0-9A-HJKMNP-TV-Z]{5})-([0-9A-HJKMNP-TV-Z]{5})$/;

export function parseLicenseKey(raw: string): ParsedKey | undefined {
  if (typeof raw !== 'string' || raw.length > 100) return undefined;
  // Fast path: a key exactly as issued (what clients send almost always).
  const m = CANONICAL.exec(raw);
  if (m) {
    const body = m[1]! + m[2]! + m[3]! + m[4]!;
    return checkPart(body) === m[5] ? { key: raw, prefix: m[1]! } : undefined;
  }
  let s = raw.toUpperCase().replace(/[\s-]+/g, '');
  if (s.startsWith(KEY_PREFIX_TEXT)) s = s.slice(KEY_PREFIX_TEXT.length);
  s = s.replace(/O/g, '0').replace(/[IL]/g, '1');
  if (s.length !== GROUP * (BODY_GROUPS + 1)) return undefined;
  for (const ch of s) if (!ALPHABET.includes(ch)) return undefined;
  const body = s.slice(0, GROUP * BODY_GROUPS);
  if (checkPart(body) !== s.slice(GROUP * BODY_GROUPS)) return undefined;
  return { key: [KEY_PREFIX_TEXT, ...groups(body), checkPart(body)].join('-'), prefix: body.slice(0, GROUP) };
}

/** The displayable, non-secret start of a key (`MKT-7K2QH`). */
export function displayPrefix(prefix: string): string {
  return `${KEY_PREFIX_TEXT}-${prefix}`;
}

/**
 * HMAC-SHA256 of the canonical key under the server's key-hash secret (a file beside, not
 * inside, the database): a stolen database alone neither reveals keys nor allows guessing them.
 */
export function hashLicenseKey(secret: Buffer, canonicalKey: string): string {
  return createHmac('sha256', secret).update(canonicalKey, 'utf8').digest('hex');
}

/** Names a key-hash secret file the operator provisioned (a systemd credential, a mounted secret). */
export const KEY_SECRET_FILE_ENV = 'MKT_LICENSE_KEY_SECRET_FILE';

/**
 * The key-hash secret every instance must share: the file `$MKT_LICENSE_KEY_SECRET_FILE` names
 * (provisioned by the operator: 32 random bytes, raw or as base64 text, 0600 or 0400, never
 * created here), else `<data-dir>/license-key-secret` (0600, created on first use; the data dir
 * is the volume every instance mounts).
 */
export function loadKeyHashSecret(dataDir: string, env: NodeJS.ProcessEnv = {}): Buffer {
  const named = env[KEY_SECRET_FILE_ENV]?.trim();
  if (!named) return loadSecretFile(dataDir, 'license-key-secret');
  return readProvisionedSecretFile(named, KEY_SECRET_FILE_ENV);
}
