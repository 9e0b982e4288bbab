// The master-key envelope rules: the first envelope is version 1 with key id 1; a later put needs
// the stored version and keeps the key id; no put while a rotation runs. Reading shows the pending
// envelope of a running rotation and the retired ones entries still need.
import type { KeyRow, Owner, RetiredKey, SyncStore } from '../../../../src/store/sync.js';
import { lockOwner } from './owner-lock.js';

export interface KeyInfo extends KeyRow {
  pending_key: { encrypted_key: string; key_id: number; rotation_id: string; target_seq: number } | null;
  retired_keys: RetiredKey[];
}

export type PutKeyOutcome = { kind: 'ok'; key_version: number; key_id: number } | { kind: 'version_mismatch'; current: number } | { kind: 'rotating' };

/** The envelope with its pending and retired companions, undefined when none is stored. */
export function getKey(store: SyncStore, o: Owner): Promise<KeyInfo | undefined> {
  // One transaction: the key and the rotation are read as one state (not mid-completion).
  return store.transaction(async (tx) => {
    const key = await tx.key(o);
    if (!key) return undefined;
    const rot = await tx.activeRotation(o);
    return {
      ...key,
      pending_key: rot ? { encrypted_key: rot.new_encrypted_key, key_id: rot.new_key_id, rotation_id: rot.id, target_seq: rot.target_seq } : null,
      retired_keys: await tx.retiredKeys(o),
    };
  });
}

/** Stores the envelope if `expectedVersion` is the stored version (0: none stored yet). */
export function putKey(store: SyncStore, o: Owner, input: { encryptedKey: string; expectedVersion: number; now: string }): Promise<PutKeyOutcome> {
  return store.transaction(async (tx) => {
    await lockOwner(tx, o);
    const key = await tx.key(o);
    const current = key?.key_version ?? 0;
    if (input.expectedVersion !== current) return { kind: 'version_mismatch', current };
    // Re-wrapping the key mid-rotation would strand the rotation's pending envelope.
    if (await tx.activeRotation(o)) return { kind: 'rotating' };
    if (!key) {
      await tx.insertKey(o, { encrypted_key: input.encryptedKey, key_version: 1, key_id: 1 }, input.now);
      return { kind: 'ok', key_version: 1, key_id: 1 };
    }
    const next = { encrypted_key: input.encryptedKey, key_version: key.key_version + 1, key_id: key.key_id };
    await tx.updateKey(o, next, input.now);
    return { kind: 'ok', key_version: next.key_version, key_id: next.key_id };
  });
}
