// `key init` and `key unlock`: create the account's master key on the first device, and fetch
// and unwrap it on the others. The password only ever derives the wrapping key locally.
import { NegativeError } from '../cli/errors.js';
import { ApiError } from '../client/http.js';
import { newMasterKey, openKeyring, sealKeyring, type Keyring, type ScryptParams, DEFAULT_SCRYPT } from '../crypto/envelope.js';
import { keyFingerprint } from '../crypto/sync-keys.js';
import type { SyncSession } from './session.js';
import type { GetKeyResponse } from './wire.js';

export interface KeyReport {
  key_id: number;
  key_version: number;
  fingerprint: string;
  pending_key_id: number | null;
  keys_held: number;
}

/** Generates a master key, wraps it with the password and stores the envelope (PUT). */
export async function initKey(s: SyncSession, password: string, params: ScryptParams = DEFAULT_SCRYPT): Promise<KeyReport> {
  const existing = await s.client.getKey();
  if (existing) throw new NegativeError('this account already has a sync key', 'run `mkt sync key unlock` to fetch it on this device');
  const master = newMasterKey();
  const ring: Keyring = { keys: [master] };
  const envelope = await sealKeyring(ring, password, params);
  try {
    await s.client.putKey({ encrypted_key: envelope, expected_key_version: 0 });
  } catch (err) {
    // 409: another device stored the first envelope between our look and our PUT.
    if (err instanceof ApiError && err.status === 409) throw new NegativeError('another device stored a sync key first', 'run `mkt sync key unlock`');
    throw err;
  }
  const info = await s.client.getKey();
  if (!info) throw new NegativeError('the server did not keep the key envelope');
  // Another device may have won a race to init: then ours was refused (409) or is not current.
  const stored = await openKeyring(info.encrypted_key, password);
  if (keyFingerprint(stored.keys[0]!) !== keyFingerprint(master)) throw new NegativeError('another device stored a sync key first', 'run `mkt sync key unlock`');
  await s.saveKeyring(ring, { [info.key_id]: master });
  return report(info.key_id, info.key_version, ring, null);
}

/** Every key the server's envelopes hold (current, pending, retired), with the key id of each. */
export async function keysFromServer(info: GetKeyResponse, password: string): Promise<{ ring: Keyring; ids: Record<number, Uint8Array> }> {
  const current = await openKeyring(info.encrypted_key, password);
  const ids: Record<number, Uint8Array> = { [info.key_id]: current.keys[0]! };
  let ring = current;
  const add = (more: Keyring, first: boolean): void => {
    const fresh = more.keys.filter((k) => !ring.keys.some((x) => keyFingerprint(x) === keyFingerprint(k)));
    ring = { keys: first ? [...more.keys, ...ring.keys.filter((k) => !more.keys.some((m) => keyFingerprint(m) === keyFingerprint(k)))] : [...ring.keys, ...fresh] };
  };
  if (info.pending_key) {
    // The pending keyring holds the new key first and every older one after it.
    const pending = await openKeyring(info.pending_key.encrypted_key, password);
    ids[info.pending_key.key_id] = pending.keys[0]!;
    add(pending, true);
  }
  // Entries a cancelled rotation left sealed with its key stay readable through the retired envelopes.
  for (const r of info.retired_keys ?? []) {
    const retired = await openKeyring(r.encrypted_key, password);
    ids[r.key_id] = retired.keys[0]!;
    add(retired, false);
  }
  return { ring, ids };
}

/** Fetches the envelope (and a rotation's pending one) and keeps the keyring on this device. */
export async function unlockKey(s: SyncSession, password: string): Promise<KeyReport> {
  const info = await s.client.getKey();
  if (!info) throw new NegativeError('this account has no sync key yet', 'run `mkt sync key init` on the first device');
  const { ring, ids } = await keysFromServer(info, password);
  await s.saveKeyring(ring, ids);
  return report(info.key_id, info.key_version, ring, info.pending_key?.key_id ?? null);
}

function report(keyId: number, version: number, ring: Keyring, pending: number | null): KeyReport {
  return { key_id: keyId, key_version: version, fingerprint: keyFingerprint(ring.keys[0]!), pending_key_id: pending, keys_held: ring.keys.length };
}
