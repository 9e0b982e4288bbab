// The sync master-key envelope: a keyring (current key first, older keys after it) sealed with a
// tweetnacl secretbox under a key derived from the account password with scrypt.
// The envelope is JSON text so browser and mobile clients open it with tweetnacl + any scrypt.
import { randomBytes, scrypt as scryptCb } from 'node:crypto';
import nacl from 'tweetnacl';
import { keyFingerprint, MASTER_KEY_BYTES } from './sync-keys.js';

/** scrypt cost: N = 2^17, r = 8, p = 1 (OWASP's minimum for scrypt), 128 MiB, ~0.3-1 s. */
export const DEFAULT_SCRYPT = { logN: 17, r: 8, p: 1 } as const;
export interface ScryptParams {
  logN: number;
  r: number;
  p: number;
}
/** Upper bounds when reading an envelope, so a hostile server cannot make us allocate gigabytes. */
const MAX_LOG_N = 20;
const MAX_RP = 64;

/** Wire form of the envelope (the string stored with PUT /api/v1/sync/keys). */
interface EnvelopeJson {
  v: 1;
  kdf: 'scrypt';
  log_n: number;
  r: number;
  p: number;
  salt: string;
  nonce: string;
  box: string;
}

/** The keys a device holds: `keys[0]` seals new data; older keys only open old blobs. */
export interface Keyring {
  keys: Uint8Array[];
}

export class EnvelopeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EnvelopeError';
  }
}

function scrypt(password: string, salt: Uint8Array, params: ScryptParams): Promise<Uint8Array> {
  const N = 2 ** params.logN;
  const maxmem = 128 * N * params.r * params.p + 32 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    scryptCb(password.normalize('NFKC'), salt, nacl.secretbox.keyLength, { N, r: params.r, p: params.p, maxmem }, (err, key) =>
      err ? reject(err) : resolve(new Uint8Array(key)),
    );
  });
}

export function newMasterKey(): Uint8Array {
  return new Uint8Array(randomBytes(MASTER_KEY_BYTES));
}

/** Seals the keyring under the password. A fresh salt and nonce every time. */
export async function sealKeyring(ring: Keyring, password: string, params: ScryptParams = DEFAULT_SCRYPT): Promise<string> {
  if (ring.keys.length === 0) throw new EnvelopeError('a keyring needs at least one key');
  for (const k of ring.keys) if (k.length !== MASTER_KEY_BYTES) throw new EnvelopeError('master keys are 32 bytes');
  const salt = new Uint8Array(randomBytes(16));
  const nonce = new Uint8Array(randomBytes(nacl.secretbox.nonceLength));
  const kek = await scrypt(password, salt, params);
  const plain = new Uint8Array(ring.keys.length * MASTER_KEY_BYTES);
  ring.keys.forEach((k, i) => plain.set(k, i * MASTER_KEY_BYTES));
  const box = nacl.secretbox(plain, nonce, kek);
  kek.fill(0);
  plain.fill(0);
  const json: EnvelopeJson = {
    v: 1,
    kdf: 'scrypt',
    log_n: params.logN,
    r: params.r,
    p: params.p,
    salt: Buffer.from(salt).toString('base64'),
    nonce: Buffer.from(nonce).toString('base64'),
    box: Buffer.from(box).toString('base64'),
  };
  return JSON.stringify(json);
}

function parseEnvelope(text: string): EnvelopeJson {
  let j: Partial<EnvelopeJson>;
  try {
    j = JSON.parse(text) as Partial<EnvelopeJson>;
  } catch {
    throw new EnvelopeError('the key envelope is not an mkt envelope (not JSON)');
  }
  if (j === null || typeof j !== 'object' || j.v !== 1 || j.kdf !== 'scrypt') throw new EnvelopeError('unknown key envelope format');
  const ints = [j.log_n, j.r, j.p];
  if (!ints.every((n) => Number.isInteger(n) && (n as number) >= 1)) throw new EnvelopeError('bad scrypt parameters in the key envelope');
  if (j.log_n! > MAX_LOG_N || j.r! * j.p! > MAX_RP) throw new EnvelopeError('scrypt parameters in the key envelope are too large');
  if (typeof j.salt !== 'string' || typeof j.nonce !== 'string' || typeof j.box !== 'string') throw new EnvelopeError('incomplete key envelope');
  return j as EnvelopeJson;
}

/** Opens an envelope with the password; a wrong password (or a tampered envelope) throws. */
export async function openKeyring(envelope: string, password: string): Promise<Keyring> {
  const j = parseEnvelope(envelope);
  const salt = Buffer.from(j.salt, 'base64');
  const nonce = Buffer.from(j.nonce, 'base64');
  if (nonce.length !== nacl.secretbox.nonceLength || salt.length < 8) throw new EnvelopeError('bad salt or nonce in the key envelope');
  const kek = await scrypt(password, salt, { logN: j.log_n, r: j.r, p: j.p });
  const plain = nacl.secretbox.open(new Uint8Array(Buffer.from(j.box, 'base64')), new Uint8Array(nonce), kek);
  kek.fill(0);
  if (!plain) throw new EnvelopeError('wrong password, or the key envelope was altered');
  if (plain.length === 0 || plain.length % MASTER_KEY_BYTES !== 0) throw new EnvelopeError('the key envelope holds no valid keyring');
  const keys: Uint8Array[] = [];
  for (let i = 0; i < plain.length; i += MASTER_KEY_BYTES) keys.push(plain.slice(i, i + MASTER_KEY_BYTES));
  return { keys };
}

/** The keyring after a rotation: the new key first, every older one kept for old blobs. */
export function rotatedKeyring(ring: Keyring, newKey: Uint8Array): Keyring {
  const fp = keyFingerprint(newKey);
  return { keys: [newKey, ...ring.keys.filter((k) => keyFingerprint(k) !== fp)] };
}

/** Keyring <-> one string, for the credential store (keychain or 0600 file). */
export function encodeKeyring(ring: Keyring): string {
  return ring.keys.map((k) => Buffer.from(k).toString('base64')).join('.');
}
export function decodeKeyring(text: string): Keyring {
  const keys = text.split('.').map((s) => new Uint8Array(Buffer.from(s, 'base64')));
  if (keys.length === 0 || keys.some((k) => k.length !== MASTER_KEY_BYTES)) throw new EnvelopeError('the stored keyring is damaged');
  return { keys };
}
