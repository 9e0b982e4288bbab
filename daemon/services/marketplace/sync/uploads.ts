// Upload rules of sync blobs (issue 11 defect 1): every upload writes its own object, reserves
// its full signed size against the cap until it is settled, and blob confirm promotes exactly one
// upload's object, after which no signed URL can change the bytes the blob serves.
import type { BlobRecord, UploadSession } from '../../../../src/store/sync-billing.js';
import { blobKey, stagingKey } from '../../../../src/sync-objects/store.js';
import { HttpError } from '../../../plugins/errors.js';
import { fits, MAX_PENDING_PER_BLOB, overCap } from './quota.js';
import { nowIso, type StorageContext } from './storage-context.js';

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

/**
 * Records a new upload if it fits: what is stored plus every pending upload's signed size must
 * stay within the cap, and one blob has at most MAX_PENDING_PER_BLOB pending uploads. Decided in
 * the store's transaction, so concurrent requests never reserve past the cap. 'exists' when the
 * blob was confirmed meanwhile.
 */
export async function reserveUpload(c: StorageContext, u: UploadSession): Promise<'reserved' | 'exists'> {
  const r = await c.store.reserveUpload(u, (usage, pending) => {
    if (pending >= MAX_PENDING_PER_BLOB) return 'too_many';
    return fits(usage, u.size_bytes) ? undefined : 'over_cap';
  });
  if (r.kind === 'refused') {
    if (r.reason === 'too_many') throw new HttpError(409, `blob ${u.hash} already has ${MAX_PENDING_PER_BLOB} pending uploads: confirm one, abort its multipart sessions, or wait until their URLs expire`);
    throw overCap(r.usage, u.size_bytes);
  }
  return r.kind;
}

/**
 * Blob confirm: picks the newest upload of the hash whose bytes are stored, claims it (so only
 * one request promotes it), copies a one-shot grant's staged bytes into the upload's own object,
 * reads the authoritative size there, and records the blob if the cap allows. The blob's object
 * is never a signed URL's target, so its bytes and recorded size stay equal.
 */
export async function confirmUpload(c: StorageContext, appId: string, userId: string, hash: string): Promise<void> {
  if (await c.store.blob(appId, userId, hash)) return;
  let chosen: UploadSession | undefined;
  for (const u of await c.store.confirmable(appId, userId, hash)) {
    const where = u.state === 'single' ? grantTarget(u) : uploadObject(u);
    if (await c.objects.head(where)) {
      chosen = u;
      break;
    }
  }
  if (!chosen) throw new HttpError(409, `no object was uploaded for blob ${hash}: upload it (or complete its multipart upload) before confirming`);
  if (!(await c.store.moveUpload(chosen.id, [chosen.state], 'promoting', c.clock.now()))) {
    if (await c.store.blob(appId, userId, hash)) return;
    throw new HttpError(409, `blob ${hash} is being confirmed by another request: try again`);
  }
  const object = uploadObject(chosen);
  if (chosen.state === 'single' && chosen.object_key) await c.objects.promote(grantTarget(chosen), object);
  const head = await c.objects.head(object);
  if (!head) {
    await c.store.moveUpload(chosen.id, ['promoting'], chosen.state, c.clock.now());
    throw new HttpError(409, `no object was uploaded for blob ${hash}: upload it (or complete its multipart upload) before confirming`);
  }
  const res = await c.store.confirmBlob(
    { upload_id: chosen.id, app_id: appId, user_id: userId, hash, size_bytes: head.size, object_key: object, at: nowIso(c.clock), now_ms: c.clock.now() },
    (usage, released) => fits(usage, head.size, released),
  );
  if (res.kind === 'created') return;
  // Unrecorded bytes are neither reachable nor billed: do not keep them (legacy objects may be the blob's own).
  if (chosen.object_key) await c.objects.delete(object);
  if (res.kind === 'over_cap') throw overCap(res.usage, head.size, `blob ${hash}`);
  if (res.kind === 'gone') throw new HttpError(409, `the upload of blob ${hash} was reaped while confirming: upload it again`);
}
