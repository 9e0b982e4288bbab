// Upload rules of sync blobs (issue 11 defect 1): every upload writes its own object, reserves
// its full signed size against the cap until it is settled, and blob confirm promotes exactly one
// upload's object, after which no signed URL can change the bytes the blob serves. The rules run
// in the store's transactions under PostgreSQL advisory locks, so they hold across instances.
import { ownerLockKey } from './owner-lock.js';
import type { BlobRecord, ConfirmOutcome, StoredPartRow, SyncStorageStore, UploadSession, UploadState } from '../../../../src/store/sync-billing.js';
import { blobKey, stagingKey } from '../../../../src/sync-objects/store.js';
import type { Usage } from '../../../../src/store/sync-usage.js';
import { fits, MAX_PENDING_PER_BLOB } from './quota.js';
import type { StorageContext } from './storage-context.js';
import { timestampNow } from '../../../../src/util/time.js';

/** The object an upload fills (a session's assembly, a grant's promoted copy); legacy rows use the blob key. */
export function uploadObject(u: Pick<UploadSession, 'app_id' | 'user_id' | 'hash' | 'object_key'>): string {
  return u.object_key ?? blobKey(u.app_id, u.user_id, u.hash);
}

/** Where a one-shot grant's signed URL writes (legacy grants wrote the blob key itself). */
export function grantTarget(u: Pick<UploadSession, 'app_id' | 'user_id' | 'hash' | 'object_key'>): string {
  return u.object_key ? stagingKey(u.object_key) : blobKey(u.app_id, u.user_id, u.hash);
}

export function blobObject(appId: string, userId: string, hash: string, b: BlobRecord): string {
  return b.object_key ?? blobKey(appId, userId, hash);
}

/** The lock of every read-decide-write over an (app, user)'s usage: the owner lock the changelog push takes. */
export const ownerLock = (appId: string, userId: string): string => ownerLockKey({ appId, userId });
/** The lock of one upload's parts and state moves. */
export const uploadLock = (id: string): string => `sync-upload:${id}`;

export type Reservation = { kind: 'reserved' } | { kind: 'exists' } | { kind: 'too_many' } | { kind: 'over_cap'; usage: Usage };

/**
 * Records a new upload if it fits: what is stored plus every pending upload's signed size must
 * stay within the cap, and one blob has at most MAX_PENDING_PER_BLOB pending uploads. Decided in
 * one transaction holding the owner's lock, so concurrent requests (on any instance) never
 * reserve past the cap. 'exists' when the blob was confirmed meanwhile.
 */
export async function reserve(c: Pick<StorageContext, 'store'>, u: UploadSession): Promise<Reservation> {
  return c.store.transaction(async (tx): Promise<Reservation> => {
    await tx.lock(ownerLock(u.app_id, u.user_id));
    if (await tx.blob(u.app_id, u.user_id, u.hash)) return { kind: 'exists' };
    if ((await tx.pendingUploads(u.app_id, u.user_id, u.hash)) >= MAX_PENDING_PER_BLOB) return { kind: 'too_many' };
    const usage = await tx.usage(u.app_id, u.user_id);
    if (!fits(usage, u.size_bytes)) return { kind: 'over_cap', usage };
    await tx.insertUpload(u);
    return { kind: 'reserved' };
  });
}

/**
 * Moves an upload from one of `from` to `to`; false when it was in another state. An upload that
 * ends (aborted, reaped) drops its recorded parts: they no longer exist, so they no longer bill.
 */
export async function moveUpload(store: SyncStorageStore, id: string, from: readonly UploadState[], to: UploadState, nowMs: number): Promise<boolean> {
  return store.transaction(async (tx) => {
    await tx.lock(uploadLock(id));
    const moved = await tx.setUploadState(id, from, to, nowMs);
    if (moved && (to === 'aborted' || to === 'reaped')) await tx.replaceParts(id, []);
    return moved;
  });
}

/**
 * Activity on an open session (it is not idle); `parts`, when given, is what the object store
 * holds now and becomes what bills. Nothing changes once the session is no longer open.
 */
export async function touchUpload(store: SyncStorageStore, id: string, nowMs: number, parts?: readonly StoredPartRow[]): Promise<void> {
  await store.transaction(async (tx) => {
    await tx.lock(uploadLock(id));
    if (!(await tx.touchOpenUpload(id, nowMs)) || !parts) return;
    await tx.replaceParts(id, parts);
  });
}

/** Records what the object store holds of a session that is still open, without counting it as activity. */
export async function recordParts(store: SyncStorageStore, id: string, parts: readonly StoredPartRow[]): Promise<void> {
  await store.transaction(async (tx) => {
    await tx.lock(uploadLock(id));
    if ((await tx.upload(id))?.state !== 'open') return;
    await tx.replaceParts(id, parts);
  });
}

/**
 * The cap rule at confirm, in one transaction holding the owner's lock: the `promoting` upload
 * becomes `confirmed` and its blob is recorded at its authoritative size if that fits (its own
 * reservation is released into stored bytes); it becomes `rejected` when over the cap or when
 * the blob exists; `gone` when the upload is no longer `promoting` (reaped meanwhile).
 */
export async function settleConfirm(
  store: SyncStorageStore,
  input: { upload_id: string; app_id: string; user_id: string; hash: string; size_bytes: number; object_key: string; at: string; now_ms: number },
): Promise<ConfirmOutcome> {
  const { app_id, user_id, hash, upload_id, now_ms } = input;
  return store.transaction(async (tx): Promise<ConfirmOutcome> => {
    await tx.lock(ownerLock(app_id, user_id));
    const up = await tx.upload(upload_id);
    if (!up || up.state !== 'promoting') return { kind: 'gone' };
    if (await tx.blob(app_id, user_id, hash)) {
      if (!(await tx.setUploadState(upload_id, ['promoting'], 'rejected', now_ms))) return { kind: 'gone' };
      return { kind: 'exists', usage: await tx.usage(app_id, user_id) };
    }
    const usage = await tx.usage(app_id, user_id);
    if (!fits(usage, input.size_bytes, up.size_bytes)) {
      if (!(await tx.setUploadState(upload_id, ['promoting'], 'rejected', now_ms))) return { kind: 'gone' };
      return { kind: 'over_cap', usage };
    }
    // Conditional: a reaper that moved it meanwhile wins, and no blob points at a deleted object.
    if (!(await tx.setUploadState(upload_id, ['promoting'], 'confirmed', now_ms))) return { kind: 'gone' };
    await tx.insertBlob({ app_id, user_id, hash, size_bytes: input.size_bytes, created_at: input.at, object_key: input.object_key });
    return { kind: 'created', usage: await tx.usage(app_id, user_id) };
  });
}

/**
 * Blob confirm: picks the newest upload of the hash whose bytes are stored, claims it (so only
 * one request promotes it), copies a one-shot grant's staged bytes into the upload's own object,
 * reads the authoritative size there, and records the blob if the cap allows. The blob's object
 * is never a signed URL's target, so its bytes and recorded size stay equal.
 */
export type Confirmation =
  | { kind: 'recorded' }
  /** No stored object for the hash (or its multipart upload was not completed). */
  | { kind: 'no_object' }
  /** Another request is promoting the chosen upload. */
  | { kind: 'busy' }
  | { kind: 'over_cap'; usage: Usage; size: number }
  /** The upload was reaped while confirming. */
  | { kind: 'gone' };

export async function confirmUpload(c: StorageContext, appId: string, userId: string, hash: string): Promise<Confirmation> {
  if (await c.store.blob(appId, userId, hash)) return { kind: 'recorded' };
  let chosen: UploadSession | undefined;
  for (const u of await c.store.confirmable(appId, userId, hash)) {
    const where = u.state === 'single' ? grantTarget(u) : uploadObject(u);
    if (await c.objects.head(where)) {
      chosen = u;
      break;
    }
  }
  if (!chosen) return { kind: 'no_object' };
  if (!(await moveUpload(c.store, chosen.id, [chosen.state], 'promoting', c.clock.now()))) {
    if (await c.store.blob(appId, userId, hash)) return { kind: 'recorded' };
    return { kind: 'busy' };
  }
  const object = uploadObject(chosen);
  if (chosen.state === 'single' && chosen.object_key) await c.objects.promote(grantTarget(chosen), object);
  const head = await c.objects.head(object);
  if (!head) {
    await moveUpload(c.store, chosen.id, ['promoting'], chosen.state, c.clock.now());
    return { kind: 'no_object' };
  }
  const res = await settleConfirm(c.store, { upload_id: chosen.id, app_id: appId, user_id: userId, hash, size_bytes: head.size, object_key: object, at: timestampNow(c.clock), now_ms: c.clock.now() });
  if (res.kind === 'created') return { kind: 'recorded' };
  // Unrecorded bytes are neither reachable nor billed: do not keep them (legacy objects may be the blob's own).
  if (chosen.object_key) await c.objects.delete(object);
  if (res.kind === 'over_cap') return { kind: 'over_cap', usage: res.usage, size: head.size };
  if (res.kind === 'gone') return { kind: 'gone' };
  return { kind: 'recorded' };
}
