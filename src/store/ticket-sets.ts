// The grow-only parts of a ticket: its comments (a set keyed by id) and its history (a set of
// field changes keyed by at, by, field and, for tags, the tag), each in one normal form so that
// equal sets print alike on every node, and their unions. Every function here is a join or
// feeds one: commutative, associative, idempotent, so copies may meet in any order.
import { HISTORY_VALUE_MAX, MAX_HISTORY, type HistoryEntry, type PeerComment } from '../schemas/tickets.js';

/** Orders comments oldest first: created_at, then id. */
export function compareComments(a: PeerComment, b: PeerComment): number {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The tag a `tags` entry is about ('' for every other field): part of the entry's key. */
export function historyTag(e: HistoryEntry): string {
  return e.field === 'tags' ? (e.to ?? e.from ?? '') : '';
}

/** Orders entries by at, by, field, tag: the stamp order, ties in a fixed order. */
export function compareHistory(a: HistoryEntry, b: HistoryEntry): number {
  if (a.at !== b.at) return a.at < b.at ? -1 : 1;
  if (a.by !== b.by) return a.by < b.by ? -1 : 1;
  if (a.field !== b.field) return a.field < b.field ? -1 : 1;
  const x = historyTag(a);
  const y = historyTag(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

function pick<T>(a: T, b: T): T {
  // Two different items under one key come only from a forged copy: the larger JSON wins, everywhere alike.
  return JSON.stringify(b) > JSON.stringify(a) ? b : a;
}

/** Comments deduplicated by id and ordered (compareComments); the input is not changed. */
export function normalComments(list: readonly PeerComment[]): PeerComment[] {
  const byId = new Map<string, PeerComment>();
  for (const c of list) {
    const seen = byId.get(c.id);
    byId.set(c.id, seen === undefined ? c : pick(seen, c));
  }
  return [...byId.values()].sort(compareComments);
}

/** Whether a list is already in normal form (ordered, no id twice): the common case, checked in one pass. */
function commentsNormal(list: readonly PeerComment[]): boolean {
  const ids = new Set<string>();
  for (let i = 0; i < list.length; i++) {
    if (i > 0 && compareComments(list[i - 1]!, list[i]!) >= 0) return false;
    if (ids.has(list[i]!.id)) return false;
    ids.add(list[i]!.id);
  }
  return true;
}

export function unionComments(a: readonly PeerComment[] | undefined, b: readonly PeerComment[] | undefined): PeerComment[] {
  if (!b || b.length === 0) return a ? (commentsNormal(a) ? [...a] : normalComments(a)) : [];
  if (!a || a.length === 0) return commentsNormal(b) ? [...b] : normalComments(b);
  return normalComments([...a, ...b]);
}

/** A value as history keeps it: cut to HISTORY_VALUE_MAX characters. */
export function historyValue(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > HISTORY_VALUE_MAX ? s.slice(0, HISTORY_VALUE_MAX) : s;
}

/** Entries deduplicated by key, ordered (compareHistory), the newest MAX_HISTORY kept. */
export function normalHistory(list: readonly HistoryEntry[]): HistoryEntry[] {
  const sorted = [...list].sort(compareHistory);
  const out: HistoryEntry[] = [];
  for (const e of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && compareHistory(last, e) === 0) out[out.length - 1] = pick(last, e);
    else out.push(e);
  }
  return out.length > MAX_HISTORY ? out.slice(out.length - MAX_HISTORY) : out;
}

function historyNormal(list: readonly HistoryEntry[]): boolean {
  if (list.length > MAX_HISTORY) return false;
  for (let i = 1; i < list.length; i++) if (compareHistory(list[i - 1]!, list[i]!) >= 0) return false;
  return true;
}

export function unionHistory(a: readonly HistoryEntry[] | undefined, b: readonly HistoryEntry[] | undefined): HistoryEntry[] {
  if (!b || b.length === 0) return a ? (historyNormal(a) ? [...a] : normalHistory(a)) : [];
  if (!a || a.length === 0) return historyNormal(b) ? [...b] : normalHistory(b);
  return normalHistory([...a, ...b]);
}

function sameJsonList(a: readonly object[] | undefined, b: readonly object[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  if (x === y) return true;
  if (x.length !== y.length) return false;
  return JSON.stringify(x) === JSON.stringify(y);
}

/** Equal comment sets and histories (both in normal form). */
export function sameSets(a: { comments?: PeerComment[]; history?: HistoryEntry[] }, b: { comments?: PeerComment[]; history?: HistoryEntry[] }): boolean {
  return sameJsonList(a.comments, b.comments) && sameJsonList(a.history, b.history);
}

/**
 * Marks the entries that lost a per-field merge. A field's (or a tag's) entries are walked in
 * stamp order: an entry is lost when the next one neither started from the value it set (it
 * had not seen it) nor set that value again. Deterministic: it reads only the set.
 */
export function lostEntries(history: readonly HistoryEntry[]): Set<HistoryEntry> {
  const lost = new Set<HistoryEntry>();
  const lastOf = new Map<string, HistoryEntry>();
  for (const e of [...history].sort(compareHistory)) {
    if (e.field === 'created' || e.field === 'comment' || e.field === 'deleted') continue;
    const key = `${e.field}\u0000${historyTag(e)}`;
    const prev = lastOf.get(key);
    if (prev !== undefined && e.from !== prev.to && e.to !== prev.to) lost.add(prev);
    lastOf.set(key, e);
  }
  return lost;
}
