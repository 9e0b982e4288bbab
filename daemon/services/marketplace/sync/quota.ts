// The storage cap of a sync (app, user) — one rule for blob uploads, multipart sessions, blob
// confirm and changelog push: what is stored (blobs, changelog ciphertext) plus what pending
// uploads may still write (their full signed sizes) must stay within the cap.
import type { Usage } from '../../../../src/store/sync-usage.js';
import { HttpError } from '../../../plugins/errors.js';

/** Most pending uploads (one-shot grants and open sessions) one blob may have at once. */
export const MAX_PENDING_PER_BLOB = 8;

/** Bytes the cap must cover: stored blobs and changelog, and every pending upload's signed size. */
export function committedBytes(u: Usage): number {
  return u.blob_bytes + u.changelog_bytes + u.reserved_bytes;
}

/** Whether `extra` more bytes fit; `released` is a reservation the same step turns into stored bytes. */
export function fits(u: Usage, extra: number, released = 0): boolean {
  return committedBytes(u) - released + extra <= u.cap_bytes;
}

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
