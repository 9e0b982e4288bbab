// Merging a peer's copy when either side may be a tombstone (a deleted ticket). A delete is
// final: a live copy of any stamp loses to a tombstone (remove wins), a tombstone replaces a
// live ticket, and two tombstones join (the later delete stamp, histories united). Live against
// live is the field merge (field-merge.ts). Like it, a join: every node ends with the same item.
import { isTombstone, type FieldStamp, type SyncItem, type Ticket, type Tombstone } from '../../../src/schemas/tickets.js';
import { compareFieldStamps, mergeCopy } from './field-merge.js';
import { unionHistory } from '../../../src/store/ticket-sets.js';

export type ItemOutcome = { kind: 'keep' } | { kind: 'same' } | { kind: 'store'; ticket: SyncItem; asSent: boolean };

/** A tombstone in stored form: history normalized, `updated_at` the newest of its stamps. */
export function normalTombstone(t: Tombstone): Tombstone {
  const history = unionHistory(t.history, undefined);
  let newest: FieldStamp = [t.deleted.at, t.deleted.by];
  for (const h of history) if (compareFieldStamps([h.at, h.by], newest) > 0) newest = [h.at, h.by];
  return { id: t.id, updated_at: newest[0], updated_by: newest[1], deleted: { at: t.deleted.at, by: t.deleted.by }, history };
}

/** The tombstone a delete at `stamp` leaves of `t` (its history kept until the purge). */
export function tombstoneOf(t: Ticket, stamp: FieldStamp): Tombstone {
  return normalTombstone({ id: t.id, updated_at: stamp[0], updated_by: stamp[1], deleted: { at: stamp[0], by: stamp[1] }, history: t.history ?? [] });
}

function joinTombstones(a: Tombstone, b: Tombstone): Tombstone {
  const later = compareFieldStamps([b.deleted.at, b.deleted.by], [a.deleted.at, a.deleted.by]) > 0 ? b.deleted : a.deleted;
  return normalTombstone({ ...a, deleted: later, history: unionHistory(a.history, b.history) });
}

function sameTombstone(a: Tombstone, b: Tombstone): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** What to do with a peer's copy (ticket or tombstone) given the stored item. */
export function mergeItem(incoming: SyncItem, stored: SyncItem | undefined, ceilingMs?: number): ItemOutcome {
  if (!isTombstone(incoming)) {
    if (stored !== undefined && isTombstone(stored)) return { kind: 'keep' };
    return mergeCopy(incoming, stored, ceilingMs);
  }
  if (stored === undefined) return { kind: 'store', ticket: incoming, asSent: true };
  // A tombstone carries the history its deleting node had; a live copy's adds nothing to it either
  // way (a live copy meeting a stored tombstone is dropped whole), so the merge stays a join.
  const joined = isTombstone(stored) ? joinTombstones(stored, incoming) : incoming;
  if (isTombstone(stored) && sameTombstone(joined, stored)) return sameTombstone(joined, incoming) ? { kind: 'same' } : { kind: 'keep' };
  return { kind: 'store', ticket: joined, asSent: sameTombstone(joined, incoming) };
}
