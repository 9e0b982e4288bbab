// The key-rotation state machine (spec "Key rotation"): begin (or resume the same device's own
// with the same envelope; any other begin is refused while one runs), the entries up to the
// target still sealed with an old key, all-or-none re-sealed batches, complete once none remain
// (again: already completed), and the cancel of a stale rotation keeping the envelope its
// entries need. Each step runs in one transaction under the owner's lock.
import { randomUUID } from 'node:crypto';
import type { StoredChangeEntry } from '../../../../src/schemas/sync.js';
import type { Owner, RotationRow, SyncRows, SyncStore } from '../../../../src/store/sync.js';
import { lockOwner } from './owner-lock.js';

export type BeginOutcome =
  | { kind: 'ok'; rotation_id: string; target_seq: number; new_key_id: number; resumed: boolean }
  | { kind: 'no_key' }
  | { kind: 'unknown_device' }
  | { kind: 'version_mismatch'; current: number }
  /** Another device's rotation, or this device's with a different new envelope. */
  | { kind: 'in_progress'; device_id: string; same_device: boolean };

export type RotationEntriesOutcome = { kind: 'ok'; entries: StoredChangeEntry[]; has_more: boolean; remaining: number } | { kind: 'not_found' };
export type RotationBatchOutcome = { kind: 'ok'; updated: number; remaining: number } | { kind: 'not_found' } | { kind: 'not_in_rotation'; seq: number };
export type CompleteOutcome = { kind: 'completed'; key_version: number; key_id: number; already: boolean } | { kind: 'remaining'; remaining: number } | { kind: 'not_found' };

/** Entries of the rotation not yet re-sealed: at or below its target, not under its new key. */
function remaining(tx: SyncRows, o: Owner, rot: RotationRow): Promise<number> {
  return tx.countUnsealed(o, rot.target_seq, rot.new_key_id);
}

/** The owner's running rotation if it is `rotationId`. */
async function running(tx: SyncRows, o: Owner, rotationId: string): Promise<RotationRow | undefined> {
  const rot = await tx.activeRotation(o);
  return rot && rot.id === rotationId ? rot : undefined;
}

export function beginRotation(store: SyncStore, o: Owner, input: { deviceId: string; newEncryptedKey: string; expectedVersion: number; nowMs: number }): Promise<BeginOutcome> {
  return store.transaction(async (tx): Promise<BeginOutcome> => {
    await lockOwner(tx, o);
    const key = await tx.key(o);
    if (!key) return { kind: 'no_key' };
    if (!(await tx.device(o, input.deviceId))) return { kind: 'unknown_device' };
    if (input.expectedVersion !== key.key_version) return { kind: 'version_mismatch', current: key.key_version };
    const rot = await tx.activeRotation(o);
    if (rot) {
      const same = rot.device_id === input.deviceId;
      if (!same || rot.new_encrypted_key !== input.newEncryptedKey) return { kind: 'in_progress', device_id: rot.device_id, same_device: same };
      await tx.touchRotation(o, rot.id, input.nowMs);
      return { kind: 'ok', rotation_id: rot.id, target_seq: rot.target_seq, new_key_id: rot.new_key_id, resumed: true };
    }
    // Key ids are never reused: not the current one, nor one of an earlier (cancelled) rotation.
    const newKeyId = Math.max(key.key_id, await tx.maxRotationKeyId(o)) + 1;
    const id = randomUUID();
    const target = await tx.maxSeq(o);
    await tx.insertRotation(o, { id, device_id: input.deviceId, new_encrypted_key: input.newEncryptedKey, new_key_id: newKeyId, target_seq: target, last_activity_ms: input.nowMs }, new Date(input.nowMs).toISOString());
    return { kind: 'ok', rotation_id: id, target_seq: target, new_key_id: newKeyId, resumed: false };
  });
}

export function rotationEntries(store: SyncStore, o: Owner, input: { rotationId: string; afterSeq: number; limit: number; nowMs: number }): Promise<RotationEntriesOutcome> {
  return store.transaction(async (tx): Promise<RotationEntriesOutcome> => {
    await lockOwner(tx, o);
    const rot = await running(tx, o, input.rotationId);
    if (!rot) return { kind: 'not_found' };
    const page = await tx.unsealedPage(o, { afterSeq: input.afterSeq, upToSeq: rot.target_seq, newKeyId: rot.new_key_id, limit: input.limit });
    await tx.touchRotation(o, rot.id, input.nowMs);
    return { kind: 'ok', entries: page.entries, has_more: page.has_more, remaining: await remaining(tx, o, rot) };
  });
}

export function rotationBatch(store: SyncStore, o: Owner, input: { rotationId: string; entries: { seq: number; data: unknown }[]; nowMs: number }): Promise<RotationBatchOutcome> {
  return store.transaction(async (tx): Promise<RotationBatchOutcome> => {
    await lockOwner(tx, o);
    const rot = await running(tx, o, input.rotationId);
    if (!rot) return { kind: 'not_found' };
    // All or none: every entry must belong to this rotation before any is replaced.
    for (const e of input.entries) {
      if (e.seq > rot.target_seq || (await tx.entryKeyId(o, e.seq)) === undefined) return { kind: 'not_in_rotation', seq: e.seq };
    }
    let delta = 0;
    for (const e of input.entries) {
      const dataJson = JSON.stringify(e.data ?? null);
      // Re-sealed ciphertext replaces the old in the storage count (re-sealing is never refused).
      delta += Buffer.byteLength(dataJson, 'utf8') - (await tx.entryDataBytes(o, e.seq));
      await tx.resealEntry(o, e.seq, rot.new_key_id, dataJson);
    }
    await tx.addChangelogBytes(o, delta);
    await tx.touchRotation(o, rot.id, input.nowMs);
    return { kind: 'ok', updated: input.entries.length, remaining: await remaining(tx, o, rot) };
  });
}

export function completeRotation(store: SyncStore, o: Owner, input: { rotationId: string; nowMs: number }): Promise<CompleteOutcome> {
  return store.transaction(async (tx): Promise<CompleteOutcome> => {
    await lockOwner(tx, o);
    const rot = await tx.rotation(o, input.rotationId);
    const key = await tx.key(o);
    if (rot?.state === 'completed' && key) return { kind: 'completed', key_version: key.key_version, key_id: key.key_id, already: true };
    if (!rot || rot.state !== 'active' || !key) return { kind: 'not_found' };
    const left = await remaining(tx, o, rot);
    if (left > 0) {
      await tx.touchRotation(o, rot.id, input.nowMs);
      return { kind: 'remaining', remaining: left };
    }
    const next = { encrypted_key: rot.new_encrypted_key, key_version: key.key_version + 1, key_id: rot.new_key_id };
    await tx.updateKey(o, next, new Date(input.nowMs).toISOString());
    await tx.setRotationState(o, rot.id, 'completed', input.nowMs);
    // Every entry is now sealed with the new key: envelopes of cancelled rotations are no longer needed.
    await tx.dropUnusedRetiredKeys(o);
    return { kind: 'completed', key_version: next.key_version, key_id: next.key_id, already: false };
  });
}

/** Cancels the owner's rotation if its last activity is at or before `idleSinceMs`. */
export function cancelStaleRotation(store: SyncStore, o: Owner, input: { idleSinceMs: number; nowMs: number }): Promise<boolean> {
  return store.transaction(async (tx) => {
    await lockOwner(tx, o);
    const rot = await tx.activeRotation(o);
    if (!rot || rot.last_activity_ms > input.idleSinceMs) return false;
    await tx.setRotationState(o, rot.id, 'cancelled', input.nowMs);
    // Entries pushed or re-sealed under the abandoned key must stay readable.
    if ((await tx.countWithKey(o, rot.new_key_id)) > 0) {
      await tx.retireKey(o, { key_id: rot.new_key_id, encrypted_key: rot.new_encrypted_key }, new Date(input.nowMs).toISOString());
    }
    return true;
  });
}
