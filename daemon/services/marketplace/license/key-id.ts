// Finding a license key's id from what an administrator types: the id itself (`lk_…`) or the key
// in full, which is stored only as a keyed hash and so is found by its prefix, then its hash.
import { hashLicenseKey, parseLicenseKey } from '../../../../src/crypto/license-key.js';
import type { StoredKey } from '../../../../src/store/license.js';
import { hashesEqual } from './licenses.js';

/** A key id as an administrator writes it. */
export const KEY_ID = /^lk_[0-9a-f]+$/;

/**
 * The id of the key given by id (returned as given, not looked up: the caller's own read says
 * whether it exists) or in full (looked up; undefined when no stored key has its hash).
 */
export async function keyIdOf(keyOrId: string, keysByPrefix: (prefix: string) => Promise<StoredKey[]>, secret: () => Buffer): Promise<string | undefined> {
  if (KEY_ID.test(keyOrId)) return keyOrId;
  const parsed = parseLicenseKey(keyOrId);
  if (!parsed) return undefined;
  const hash = hashLicenseKey(secret(), parsed.key);
  return (await keysByPrefix(parsed.prefix)).find((k) => hashesEqual(k.key_hash, hash))?.id;
}
