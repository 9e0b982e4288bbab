// Multipart session rules (spec "Multipart blob upload"): which session a caller may use, which
// window of parts it may sign, and whether the parts a client lists complete the session against
// what the object store holds. Outcomes only; routes/multipart.ts maps them to HTTP.
import type { UploadSession } from '../../../../src/store/sync-billing.js';
import type { StoredPart } from '../../../../src/sync-objects/store.js';
import { partLength } from '../../../../src/sync-objects/geometry.js';
import type { SyncCaller } from './auth.js';

/** The caller's multipart session for this hash; undefined for another owner's, another blob's or a one-shot grant. */
export function ownSession(s: UploadSession | undefined, caller: SyncCaller, hash: string): UploadSession | undefined {
  if (!s || s.app_id !== caller.appId || s.user_id !== caller.userId || s.hash !== hash || s.state === 'single') return undefined;
  return s;
}

export type PartsWindow =
  | { kind: 'ok' }
  | { kind: 'not_open' }
  | { kind: 'size_differs' }
  | { kind: 'outside'; last: number }
  | { kind: 'checksum_count' };

/** Whether parts first_part .. first_part + count - 1 of an open session may be signed. */
export function partsWindow(s: UploadSession, w: { size_bytes: number; first_part: number; count: number; checksums?: string[] | null }): PartsWindow {
  if (s.state !== 'open') return { kind: 'not_open' };
  if (w.size_bytes !== s.size_bytes) return { kind: 'size_differs' };
  const last = w.first_part + w.count - 1;
  if (w.count > 0 && (w.first_part < 1 || last > s.part_count)) return { kind: 'outside', last };
  if (w.checksums && w.checksums.length !== w.count) return { kind: 'checksum_count' };
  return { kind: 'ok' };
}

/** An ETag as compared: stores and clients differ on the quotes around it. */
const unquote = (etag: string): string => etag.trim().replace(/^"|"$/g, '');

export type ListedParts = { kind: 'ok'; etags: Map<number, string> } | { kind: 'outside'; part: number } | { kind: 'twice'; part: number };

/** The ETag a complete request lists for each part number; each part at most once, none past part_count. */
export function listedParts(s: UploadSession, parts: readonly { part_number: number; etag: string }[]): ListedParts {
  const etags = new Map<number, string>();
  for (const p of parts) {
    if (p.part_number > s.part_count) return { kind: 'outside', part: p.part_number };
    if (etags.has(p.part_number)) return { kind: 'twice', part: p.part_number };
    etags.set(p.part_number, unquote(p.etag));
  }
  return { kind: 'ok', etags };
}

export type Completion =
  | { kind: 'ok'; order: { partNumber: number; etag: string; checksum?: string }[] }
  | { kind: 'missing'; parts: number[] }
  | { kind: 'mismatched'; parts: number[] };

/**
 * Every part 1..part_count must be listed with the ETag the store holds for it and be stored at
 * its exact length: then the order to assemble; else the parts missing (not stored or not
 * listed), which win over those whose ETag or size differ.
 */
export function completion(s: UploadSession, listed: ReadonlyMap<number, string>, stored: ReadonlyMap<number, StoredPart>): Completion {
  const missing: number[] = [];
  const mismatched: number[] = [];
  const geometry = { part_size: s.part_size, part_count: s.part_count };
  for (let n = 1; n <= s.part_count; n++) {
    const have = stored.get(n);
    const etag = listed.get(n);
    if (!have || etag === undefined) missing.push(n);
    else if (unquote(have.etag) !== etag || have.size !== partLength(s.size_bytes, geometry, n)) mismatched.push(n);
  }
  if (missing.length > 0) return { kind: 'missing', parts: missing };
  if (mismatched.length > 0) return { kind: 'mismatched', parts: mismatched };
  return { kind: 'ok', order: [...Array(s.part_count).keys()].map((i) => ({ partNumber: i + 1, etag: stored.get(i + 1)!.etag, checksum: stored.get(i + 1)!.checksum })) };
}
