// Subkeys of a sync master key (HKDF-SHA256, one label per use) and the key fingerprint that
// names a master key inside blob headers. Separate labels mean no two uses ever share a key.
import { hkdfSync } from 'node:crypto';

export const MASTER_KEY_BYTES = 32;
const EMPTY = new Uint8Array(0);

function hkdf(master: Uint8Array, salt: Uint8Array, info: string, length: number): Buffer {
  return Buffer.from(hkdfSync('sha256', master, salt, Buffer.from(info, 'utf8'), length));
}

/** 8 bytes, hex: which master key sealed a blob (not secret: derived one-way). */
export function keyFingerprint(master: Uint8Array): string {
  return hkdf(master, EMPTY, 'mkt-sync key fingerprint v1', 8).toString('hex');
}

/** AES-256-GCM key for changelog entries. */
export function entryKey(master: Uint8Array): Buffer {
  return hkdf(master, EMPTY, 'mkt-sync entry v1', 32);
}

/**
 * AES-256-GCM key for one blob, salted with its plaintext hash. Chunk nonces are the chunk index,
 * which is safe because a key only ever seals the one plaintext that has this hash; it also
 * makes encryption deterministic, so a resumed multipart upload rebuilds identical parts.
 */
export function blobKey(master: Uint8Array, hashHex: string): Buffer {
  return hkdf(master, Buffer.from(hashHex, 'hex'), 'mkt-sync blob v1', 32);
}
