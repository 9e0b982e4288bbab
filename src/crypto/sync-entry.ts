// Sealing of changelog entry payloads: AES-256-GCM with associated data binding the entry's
// table, op, row id and key id, so a ciphertext moved to another row or key fails to open.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { entryKey } from './sync-keys.js';

/** The plaintext fields an entry's ciphertext is bound to. */
export interface EntryBinding {
  table: string;
  op: string;
  row_id: string;
  key_id: number;
}

/** A sealed payload: `m1.` + base64(nonce 12 | ciphertext | tag 16). */
const PREFIX = 'm1.';
const NONCE = 12;
const TAG = 16;

export class SealError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealError';
  }
}

function aad(b: EntryBinding): Buffer {
  // JSON of an array is an unambiguous encoding (no field can bleed into the next).
  return Buffer.from(JSON.stringify(['mkt-sync entry v1', b.table, b.op, b.row_id, b.key_id]), 'utf8');
}

/** Seals any JSON value (including null, for a delete without data). */
export function sealEntryData(master: Uint8Array, binding: EntryBinding, data: unknown): string {
  const nonce = randomBytes(NONCE);
  const c = createCipheriv('aes-256-gcm', entryKey(master), nonce, { authTagLength: TAG });
  c.setAAD(aad(binding));
  const ct = Buffer.concat([c.update(JSON.stringify(data ?? null), 'utf8'), c.final()]);
  return PREFIX + Buffer.concat([nonce, ct, c.getAuthTag()]).toString('base64');
}

export function openEntryData(master: Uint8Array, binding: EntryBinding, sealed: unknown): unknown {
  if (typeof sealed !== 'string' || !sealed.startsWith(PREFIX)) throw new SealError(`entry ${binding.table}/${binding.row_id} is not sealed by mkt`);
  const raw = Buffer.from(sealed.slice(PREFIX.length), 'base64');
  if (raw.length < NONCE + TAG) throw new SealError(`entry ${binding.table}/${binding.row_id} is truncated`);
  const d = createDecipheriv('aes-256-gcm', entryKey(master), raw.subarray(0, NONCE), { authTagLength: TAG });
  d.setAAD(aad(binding));
  d.setAuthTag(raw.subarray(raw.length - TAG));
  let text: string;
  try {
    text = Buffer.concat([d.update(raw.subarray(NONCE, raw.length - TAG)), d.final()]).toString('utf8');
  } catch {
    throw new SealError(`entry ${binding.table}/${binding.row_id} (key ${binding.key_id}) failed to open: wrong key, or the ciphertext was altered or moved`);
  }
  return JSON.parse(text) as unknown;
}
