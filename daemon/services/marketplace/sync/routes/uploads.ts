// The HTTP answers of the upload and cap rules (../uploads.ts, ../quota.ts), shared by the blob,
// multipart and changelog routes: 413 naming the cap, 409 for a blob's pending or busy uploads.
import type { Usage } from '../../../../../src/store/sync-usage.js';
import type { UploadSession } from '../../../../../src/store/sync-billing.js';
import { HttpError } from '../../../../plugins/errors.js';
import { committedBytes, fits, MAX_PENDING_PER_BLOB } from '../quota.js';
import type { StorageContext } from '../storage-context.js';
import { confirmUpload, reserve } from '../uploads.js';

/** 413 naming the cap, what is committed and what the request would add. */
export function overCap(u: Usage, extra: number, what = 'this upload'): HttpError {
  const hint = u.subscription_active ? 'queue a larger cap with POST /api/v1/sync/subscription/storage-cap' : 'buy a storage subscription (POST /api/v1/sync/subscription/checkout)';
  const pending = u.reserved_bytes > 0 ? ` (${u.reserved_bytes} of them reserved by pending uploads)` : '';
  return new HttpError(413, `storage cap exceeded: ${committedBytes(u)} bytes used${pending} + ${extra} for ${what} would pass the cap of ${u.cap_bytes} bytes; ${hint}`);
}

/** Answers 413 when `extra` more bytes would go over the cap. */
export function assertRoom(u: Usage, extra: number, what?: string): void {
  if (!fits(u, extra)) throw overCap(u, extra, what);
}

/** Reserves an upload (../uploads.ts `reserve`): 409 past MAX_PENDING_PER_BLOB pending uploads, 413 over the cap. */
export async function reserveUpload(c: Pick<StorageContext, 'store'>, u: UploadSession): Promise<'reserved' | 'exists'> {
  const r = await reserve(c, u);
  if (r.kind === 'too_many') throw new HttpError(409, `blob ${u.hash} already has ${MAX_PENDING_PER_BLOB} pending uploads: confirm one, abort its multipart sessions, or wait until their URLs expire`);
  if (r.kind === 'over_cap') throw overCap(r.usage, u.size_bytes);
  return r.kind;
}

/** Blob confirm (../uploads.ts `confirmUpload`) answered: nothing once recorded, else 409 or 413. */
export async function confirmBlob(c: StorageContext, appId: string, userId: string, hash: string): Promise<void> {
  const r = await confirmUpload(c, appId, userId, hash);
  switch (r.kind) {
    case 'recorded':
      return;
    case 'no_object':
      throw new HttpError(409, `no object was uploaded for blob ${hash}: upload it (or complete its multipart upload) before confirming`);
    case 'busy':
      throw new HttpError(409, `blob ${hash} is being confirmed by another request: try again`);
    case 'over_cap':
      throw overCap(r.usage, r.size, `blob ${hash}`);
    case 'gone':
      throw new HttpError(409, `the upload of blob ${hash} was reaped while confirming: upload it again`);
  }
}
