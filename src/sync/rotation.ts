// `key rotate`: the whole rotation as one resumable run — begin (or resume), fetch the entries
// still sealed with the old key page by page, re-seal them with the new key, send batches,
// complete. Killed anywhere and run again, it picks up from what the server still holds.
import { NegativeError } from '../cli/errors.js';
import { ApiError } from '../client/http.js';
import { DEFAULT_SCRYPT, newMasterKey, rotatedKeyring, sealKeyring, type Keyring, type ScryptParams } from '../crypto/envelope.js';
import { keysFromServer } from './keys.js';
import { openEntryData, sealEntryData } from '../crypto/sync-entry.js';
import { keyFingerprint } from '../crypto/sync-keys.js';
import type { SyncSession } from './session.js';

export interface RotationProgress {
  phase: 'begin' | 'reseal' | 'complete';
  resealed: number;
}

export interface RotationReport {
  rotation_id: string;
  new_key_id: number;
  resealed: number;
  resumed: boolean;
  /** True when the server had already completed it (an earlier run died after complete). */
  already_complete: boolean;
}

export interface RotateOptions {
  password: string;
  pageSize?: number;
  scrypt?: ScryptParams;
  onProgress?: (p: RotationProgress) => void;
  /** Test hook: called after each step; throwing there simulates a kill at that point. */
  checkpoint?: (step: 'begun-remote' | 'begun' | 'batch' | 'completed') => void;
}

export async function rotateKey(s: SyncSession, o: RotateOptions): Promise<RotationReport> {
  const info = await s.client.getKey();
  if (!info) throw new NegativeError('this account has no sync key yet', 'run `mkt sync key init` first');
  const deviceId = s.profile.device_id;
  if (!deviceId) throw new NegativeError('this device is not registered', 'run `mkt sync devices rename NAME` to register it');
  // Opening the server's envelopes checks the password before anything changes on the server.
  const { ring: serverRing, ids: serverIds } = await keysFromServer(info, o.password);
  const local = s.profile.rotation;
  if (!info.pending_key && local && keyFingerprint(serverRing.keys[0]!) === local.new_key_fingerprint) {
    // An earlier run died between complete and forgetting its local state.
    await s.saveKeyring(serverRing, serverIds);
    s.save((p) => delete p.rotation);
    return { rotation_id: local.rotation_id, new_key_id: local.new_key_id, resealed: 0, resumed: true, already_complete: true };
  }

  let newRing: Keyring;
  let envelope: string;
  if (info.pending_key) {
    // A rotation is under way (ours, killed earlier): its envelope on the server is the truth,
    // and keysFromServer put its new key first.
    envelope = info.pending_key.encrypted_key;
    newRing = serverRing;
  } else {
    const held = await s.keyring().catch(() => serverRing);
    const all = { keys: [...serverRing.keys, ...held.keys.filter((k) => !serverRing.keys.some((c) => keyFingerprint(c) === keyFingerprint(k)))] };
    newRing = rotatedKeyring(all, newMasterKey());
    envelope = await sealKeyring(newRing, o.password, o.scrypt ?? DEFAULT_SCRYPT);
  }
  o.onProgress?.({ phase: 'begin', resealed: 0 });
  let begun;
  try {
    begun = await s.client.beginRotation({ device_id: deviceId, new_encrypted_key: envelope, expected_key_version: info.key_version });
  } catch (err) {
    if (err instanceof ApiError && err.status === 409) {
      throw new NegativeError(
        info.pending_key ? 'another device is rotating the sync key' : 'the sync key changed on another device',
        info.pending_key ? 'finish it there, or after 24 idle hours run `mkt sync key cancel-rotation`' : 'run `mkt sync key unlock`, then rotate again',
      );
    }
    throw err;
  }
  o.checkpoint?.('begun-remote');
  const newKey = newRing.keys[0]!;
  // The device keeps both keys before touching any entry, so nothing becomes unreadable here.
  await s.saveKeyring(newRing, { ...serverIds, [begun.new_key_id]: newKey });
  const resumed = Boolean(info.pending_key);
  s.save((p) => {
    p.rotation = {
      rotation_id: begun.rotation_id,
      new_key_id: begun.new_key_id,
      new_key_fingerprint: keyFingerprint(newKey),
      target_seq: begun.target_seq,
      done_seq: p.rotation?.rotation_id === begun.rotation_id ? p.rotation.done_seq : 0,
      started_at: p.rotation?.rotation_id === begun.rotation_id ? p.rotation.started_at : new Date().toISOString(),
    };
  });
  o.checkpoint?.('begun');

  let resealed = 0;
  for (let attempt = 0; ; attempt++) {
    resealed += await resealAll(s, begun.rotation_id, begun.new_key_id, newKey, newRing, o, resealed);
    o.onProgress?.({ phase: 'complete', resealed });
    try {
      await s.client.completeRotation(begun.rotation_id);
      break;
    } catch (err) {
      // 409: entries still need re-encryption (a page arrived late); sweep once more.
      if (!(err instanceof ApiError && err.status === 409) || attempt >= 3) throw err;
    }
  }
  o.checkpoint?.('completed');
  s.save((p) => delete p.rotation);
  return { rotation_id: begun.rotation_id, new_key_id: begun.new_key_id, resealed, resumed, already_complete: false };
}

/** Re-seals every entry the server still lists for the rotation; returns how many. */
async function resealAll(s: SyncSession, rotationId: string, newKeyId: number, newKey: Uint8Array, ring: Keyring, o: RotateOptions, before: number): Promise<number> {
  let count = 0;
  let after = 0;
  for (;;) {
    const page = await s.client.rotationEntries({ rotation_id: rotationId, after_seq: after, limit: o.pageSize ?? 500 });
    if (page.entries.length === 0) break;
    const batch = [];
    for (const e of page.entries) {
      const old = await s.keyFor(e.key_id, ring);
      const data = openEntryData(old, { table: e.table, op: e.op, row_id: e.row_id, key_id: e.key_id }, e.data);
      batch.push({ seq: e.seq, data: sealEntryData(newKey, { table: e.table, op: e.op, row_id: e.row_id, key_id: newKeyId }, data) });
      after = Math.max(after, e.seq);
    }
    await s.client.rotationBatch({ rotation_id: rotationId, entries: batch });
    count += batch.length;
    s.save((p) => {
      if (p.rotation) p.rotation.done_seq = Math.max(p.rotation.done_seq, after);
    });
    o.onProgress?.({ phase: 'reseal', resealed: before + count });
    o.checkpoint?.('batch');
    if (!page.has_more) break;
  }
  return count;
}
