// The storage cap of a sync (app, user) — one rule for blob uploads, multipart sessions, blob
// confirm and changelog push: what is stored (blobs, changelog ciphertext) plus what pending
// uploads may still write (their full signed sizes) must stay within the cap.
import type { Usage } from '../../../../src/store/sync-usage.js';

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
