// Field-by-field merging of ticket copies. Every editable field carries the hybrid-clock stamp
// of its last change and a peer's copy is merged field by field, the later stamp winning, so
// concurrent edits of different fields both survive. Tags are a set of last adds and removes
// per tag. The merge is a join (commutative, associative, idempotent), so every node reaches
// the same ticket whatever order copies arrive in. A copy without stamps (a peer that only
// follows the spec) is settled by whole-ticket last-writer-wins, as the spec says.
import { STAMPED_FIELDS, type FieldStamp, type FieldStamps, type HistoryEntry, type PeerComment, type StampedField, type TagStamp, type Ticket } from '../../../src/schemas/tickets.js';
import { historyValue, sameSets, unionComments, unionHistory } from '../../../src/store/ticket-sets.js';
import { decide } from './lww.js';
import { parseStamp } from './stamp.js';

/**
 * Tag entries kept per ticket, removals included. Beyond it the oldest removals are dropped
 * (a copy older than all of them could bring such a tag back); present tags are never dropped.
 */
export const MAX_TAG_ENTRIES = 400;

interface Expanded {
  base: FieldStamp;
  fields: Record<StampedField, FieldStamp>;
  tags: Map<string, TagStamp>;
  /** The grow-only sets (ticket-sets.ts); absent when empty. */
  comments?: PeerComment[];
  history?: HistoryEntry[];
}

/** Orders stamps by instant (canonical text), then node id; stamps beyond `ceiling` sort first. */
export function compareFieldStamps(a: FieldStamp | TagStamp, b: FieldStamp | TagStamp): number {
  if (a[0] !== b[0]) return a[0] < b[0] ? -1 : 1;
  if (a[1] !== b[1]) return a[1] < b[1] ? -1 : 1;
  return 0;
}

/** A ticket's stamps with the defaults filled in; a copy without stamps is all at its `updated_at`. */
export function expand(t: Ticket): Expanded {
  const fs = t.field_stamps;
  const base: FieldStamp = fs ? fs.base : [t.updated_at, t.updated_by];
  const fields = {} as Record<StampedField, FieldStamp>;
  for (const f of STAMPED_FIELDS) fields[f] = fs?.[f] ?? base;
  const tags = new Map<string, TagStamp>();
  const entries = fs?.tags;
  if (entries) for (const [tag, st] of Object.entries(entries)) tags.set(tag, st);
  // The tags array is authoritative about presence: an entry that disagrees keeps its stamp.
  for (const tag of t.tags) {
    const st = tags.get(tag);
    tags.set(tag, st ? [st[0], st[1], true] : [base[0], base[1], true]);
  }
  // Without tag entries every tag came from the array just read, so none can be absent from it.
  if (entries) for (const [tag, st] of tags) if (st[2] && !t.tags.includes(tag)) tags.set(tag, [st[0], st[1], false]);
  const e: Expanded = { base, fields, tags };
  if (t.comments && t.comments.length > 0) e.comments = t.comments;
  if (t.history && t.history.length > 0) e.history = t.history;
  return e;
}

/** Whether stamp `s` orders after `[at, by]` (as compareFieldStamps). */
function after(s: FieldStamp | TagStamp, at: string, by: string): boolean {
  return s[0] !== at ? s[0] > at : s[1] > by;
}

/**
 * The tag entries kept: all of them up to MAX_TAG_ENTRIES, else without the oldest removals
 * (a copy older than all of them could bring such a tag back; present tags are never dropped).
 */
function keptTags(tags: Map<string, TagStamp>): Map<string, TagStamp> {
  if (tags.size <= MAX_TAG_ENTRIES) return tags;
  const entries = [...tags.entries()];
  const removals = entries.filter(([, st]) => !st[2]).sort(([, x], [, y]) => compareFieldStamps(x, y));
  const drop = new Set(removals.slice(0, entries.length - MAX_TAG_ENTRIES).map(([tag]) => tag));
  return new Map(entries.filter(([tag]) => !drop.has(tag)));
}

/**
 * Writes `values` (undefined: the template's own) and their expanded stamps back as a Ticket:
 * fields stamped with `base` are left out of `field_stamps`, `updated_at`/`updated_by` become
 * the latest stamp of all, tags are ordered by add stamp, then name, so that equal sets print
 * alike on every node. One pass over the stamps: this runs for every copy replicated.
 */
function compact(template: Ticket, values: Pick<Ticket, StampedField> | undefined, e: Expanded): Ticket {
  const [at, by] = e.base;
  let newestAt = at;
  let newestBy = by;
  const fs: FieldStamps = { base: e.base };
  for (const f of STAMPED_FIELDS) {
    const s = e.fields[f];
    if (s[0] !== at || s[1] !== by) fs[f] = s;
    if (after(s, newestAt, newestBy)) [newestAt, newestBy] = s;
  }
  const kept = keptTags(e.tags);
  // Default sort order is UTF-16 code unit order, as `<` on strings.
  const names = [...kept.keys()].sort();
  const present: string[] = [];
  let tagStamps: Record<string, TagStamp> | undefined;
  for (const tag of names) {
    const st = kept.get(tag)!;
    if (st[2]) present.push(tag);
    if (!(st[2] && st[0] === at && st[1] === by)) (tagStamps ??= {})[tag] = st;
    if (after(st, newestAt, newestBy)) [newestAt, newestBy] = st;
  }
  if (tagStamps !== undefined) fs.tags = tagStamps;
  // `present` is in name order and the sort is stable: add stamp, then name.
  if (present.length > 1) present.sort((a, b) => compareFieldStamps(kept.get(a)!, kept.get(b)!));
  const out: Ticket = { ...template, ...values, tags: present, updated_at: newestAt, updated_by: newestBy, field_stamps: fs };
  // Comments and history advance the change stamp too, so that a copy carrying a new one syncs.
  delete out.comments;
  delete out.history;
  if (e.comments) {
    const comments = unionComments(e.comments, undefined);
    for (const c of comments) if (after([c.created_at, c.by], newestAt, newestBy)) [newestAt, newestBy] = [c.created_at, c.by];
    out.comments = comments;
  }
  if (e.history) {
    const history = unionHistory(e.history, undefined);
    for (const h of history) if (after([h.at, h.by], newestAt, newestBy)) [newestAt, newestBy] = [h.at, h.by];
    if (history.length > 0) out.history = history;
  }
  out.updated_at = newestAt;
  out.updated_by = newestBy;
  return out;
}

/**
 * Tickets `normalize` returned. Normalizing is idempotent, so such a ticket is already in its
 * stored form, and a peer's copy (parsePeerTicket normalizes every stamped one) need not be
 * normalized and fingerprinted again when merged: that was a quarter of a replication round's JavaScript.
 * A WeakSet rather than a property, so that nothing of it reaches JSON or the store. It relies
 * on tickets being values: nothing here changes a ticket once built, every step makes a new one.
 */
const normalForms = new WeakSet<Ticket>();

/** A ticket in its stored form: defaults folded, tags ordered, `updated_at` the latest stamp. */
export function normalize(t: Ticket): Ticket {
  const n = compact(t, undefined, expand(t));
  normalForms.add(n);
  return n;
}

function pickValues(t: Ticket): Pick<Ticket, StampedField> {
  return { title: t.title, description: t.description, status: t.status, priority: t.priority, channel: t.channel, source: t.source, requester: t.requester, assignee: t.assignee };
}

/** Whether a stamp lies beyond `ceilingMs` (left by a version that accepted such copies). */
function stale(s: FieldStamp | TagStamp, ceilingMs: number | undefined): boolean {
  if (ceilingMs === undefined) return false;
  const ms = parseStamp(s[0]);
  return ms === undefined || ms > ceilingMs;
}

/**
 * The join of two stamped copies of one ticket. `ceilingMs` is the latest stamp this node
 * accepts: a stored stamp beyond it ranks below every other, so an honest copy replaces it.
 */
export function joinCopies(stored: Ticket, incoming: Ticket, ceilingMs?: number): Ticket {
  const a = expand(stored);
  const b = expand(incoming);
  const values = pickValues(stored);
  const fields = { ...a.fields };
  const sa = (s: FieldStamp | TagStamp): boolean => stale(s, ceilingMs);
  for (const f of STAMPED_FIELDS) {
    const x = a.fields[f];
    const y = b.fields[f];
    const order = sa(x) ? 1 : compareFieldStamps(y, x);
    // Equal stamps with different values come only from a forged copy: the larger JSON wins.
    if (order > 0 || (order === 0 && JSON.stringify(incoming[f]) > JSON.stringify(stored[f]))) {
      (values as Record<StampedField, unknown>)[f] = incoming[f];
      fields[f] = y;
    }
  }
  const tags = new Map<string, TagStamp>();
  for (const [tag, st] of a.tags) if (!sa(st)) tags.set(tag, st);
  for (const [tag, st] of b.tags) {
    const cur = tags.get(tag);
    const order = cur === undefined ? 1 : compareFieldStamps(st, cur);
    // On equal stamps an add wins over a remove (the observed-remove set's choice).
    if (order > 0 || (order === 0 && st[2] && !cur![2])) tags.set(tag, st);
  }
  const base = sa(a.base) || compareFieldStamps(b.base, a.base) < 0 ? b.base : a.base;
  const created = stored.created_at <= incoming.created_at ? stored.created_at : incoming.created_at;
  const joined: Expanded = { base, fields, tags };
  if (a.comments || b.comments) joined.comments = unionComments(a.comments, b.comments);
  if (a.history || b.history) joined.history = unionHistory(a.history, b.history);
  return compact({ ...stored, created_at: created }, values, joined);
}

/** Every stored property of a copy, field stamps included, in a fixed order. */
export function fingerprint(t: Ticket): string {
  const parts: unknown[] = [t.id, t.created_at, t.updated_at, t.updated_by, pickValues(t), t.tags, t.field_stamps ?? null];
  // Only when present, so that a ticket without them prints as it did before comments existed.
  if ((t.comments && t.comments.length > 0) || (t.history && t.history.length > 0)) parts.push(t.comments ?? [], t.history ?? []);
  return JSON.stringify(parts);
}

function sameItems(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a === b) return true;
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Same keys in the same order (JSON writes them so), and the same stamps under them. */
function sameFieldStamps(a: FieldStamps | undefined, b: FieldStamps | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i] as keyof FieldStamps;
    if (k !== kb[i]) return false;
    if (k !== 'tags') {
      if (!sameItems(a[k]!, b[k]!)) return false;
      continue;
    }
    const ta = a.tags;
    const tb = b.tags;
    if (typeof ta !== 'object' || typeof tb !== 'object' || ta === null || tb === null) return false;
    const na = Object.keys(ta);
    const nb = Object.keys(tb);
    if (na.length !== nb.length) return false;
    for (let j = 0; j < na.length; j++) if (na[j] !== nb[j] || !sameItems(ta[na[j]!]!, tb[nb[j]!]!)) return false;
  }
  return true;
}

/** The properties of a copy besides its tags and field stamps: strings, or null. */
const SCALARS = ['updated_at', 'id', 'updated_by', 'created_at', ...STAMPED_FIELDS] as const;

/**
 * fingerprint(a) === fingerprint(b), mostly without writing either. Parts equal (===) and in
 * the same shape print alike, and two different strings (or a string and null) never do, so
 * either finding is certain; anything else is settled by the fingerprints.
 */
export function sameCopy(a: Ticket, b: Ticket): boolean {
  if (!sameSets(a, b)) return false;
  for (const k of SCALARS) {
    const x = a[k];
    const y = b[k];
    if (x === y) continue;
    if ((typeof x === 'string' || x === null) && (typeof y === 'string' || y === null)) return false;
    return fingerprint(a) === fingerprint(b);
  }
  return (sameItems(a.tags, b.tags) && sameFieldStamps(a.field_stamps, b.field_stamps)) || fingerprint(a) === fingerprint(b);
}

export type MergeOutcome = { kind: 'keep' } | { kind: 'same' } | { kind: 'store'; ticket: Ticket; asSent: boolean };

/**
 * What to do with a peer's copy, given the stored one (if any). `keep`: the copy lost and
 * nothing of it is stored; `same`: the stored ticket already holds it; `store`: write `ticket`
 * (`asSent` when it equals the copy, so it need not be pushed back to its sender).
 */
export function mergeCopy(incoming: Ticket, stored: Ticket | undefined, ceilingMs?: number): MergeOutcome {
  // A copy in stored form (every stamped copy parsePeerTicket passes) is what normalizing it
  // gives, so it is stored as it is, and compared as it is below.
  const normal = normalForms.has(incoming);
  if (stored === undefined) {
    if (normal) return { kind: 'store', ticket: incoming, asSent: true };
    const ticket = normalize(incoming);
    // A peer without stamps sees only the spec's fields, and those are what it sent.
    return { kind: 'store', ticket, asSent: incoming.field_stamps === undefined || sameCopy(ticket, incoming) };
  }
  if (incoming.field_stamps === undefined) {
    // The spec's rule for a peer without stamps: whole-ticket last-writer-wins. Tags the
    // winning copy lacks are removed at its stamp, so an older add cannot bring them back.
    const verdict = decide(incoming, stored, ceilingMs);
    if (verdict !== 'take') return { kind: verdict };
    const stamp: FieldStamp = [incoming.updated_at, incoming.updated_by];
    const removed: Record<string, TagStamp> = {};
    // Every tag the stored copy knows, removed ones included: dropping a removal would let an
    // older add elsewhere bring the tag back.
    for (const tag of expand(stored).tags.keys()) if (!incoming.tags.includes(tag)) removed[tag] = [stamp[0], stamp[1], false];
    // Comments and history are grow-only: a copy that knows none of them removes none.
    const kept = { ...(stored.comments ? { comments: stored.comments } : {}), ...(stored.history ? { history: stored.history } : {}) };
    const ticket = normalize({ ...incoming, ...kept, field_stamps: { base: stamp, ...(Object.keys(removed).length > 0 ? { tags: removed } : {}) } });
    return { kind: 'store', ticket, asSent: true };
  }
  // The join is idempotent: a stored ticket equal to a copy in stored form joins to itself,
  // whatever the ceiling (a stale stored stamp gives way to the very same incoming one). The
  // usual case of a pull re-reading its overlap window.
  if (normal && sameCopy(stored, incoming)) return { kind: 'same' };
  const joined = joinCopies(stored, incoming, ceilingMs);
  if (sameCopy(joined, stored)) return sameCopy(normal ? incoming : normalize(incoming), joined) ? { kind: 'same' } : { kind: 'keep' };
  return { kind: 'store', ticket: joined, asSent: sameCopy(joined, incoming) };
}

/**
 * Applies a local edit: every field that changes, and every tag added or removed, takes one
 * new stamp. Returns undefined when nothing changes.
 */
export function applyEdit(current: Ticket, changes: Partial<Pick<Ticket, StampedField | 'tags'>>, nextStamp: () => FieldStamp): Ticket | undefined {
  const e = expand(current);
  let drawn: FieldStamp | undefined;
  // Drawn on the first change only: a no-op edit must not advance the hybrid clock.
  const stampNow = (): FieldStamp => (drawn ??= nextStamp());
  const values = pickValues(current);
  let changed = false;
  for (const f of STAMPED_FIELDS) {
    const v = changes[f];
    if (v === undefined || JSON.stringify(v) === JSON.stringify(current[f])) continue;
    (values as Record<StampedField, unknown>)[f] = v;
    e.fields[f] = stampNow();
    changed = true;
  }
  if (changes.tags !== undefined) {
    const want = new Set(changes.tags);
    for (const tag of want) {
      if (!current.tags.includes(tag)) {
        const st = stampNow();
        e.tags.set(tag, [st[0], st[1], true]);
        changed = true;
      }
    }
    for (const tag of current.tags) {
      if (!want.has(tag)) {
        const st = stampNow();
        e.tags.set(tag, [st[0], st[1], false]);
        changed = true;
      }
    }
  }
  return changed ? compact(current, values, e) : undefined;
}

/**
 * The history entries of a local edit or creation: `next` is `current` after applyEdit, both
 * stored forms; every field that changed, and every tag added or removed, makes one entry at its
 * new stamp. Returns `next` with them added (a new ticket), or `next` itself when nothing changed.
 */
export function withHistory(current: Ticket, next: Ticket): Ticket {
  const entries: HistoryEntry[] = [];
  const was = expand(current);
  const now = expand(next);
  for (const f of STAMPED_FIELDS) {
    const st = now.fields[f];
    if (st[0] === was.fields[f][0] && st[1] === was.fields[f][1]) continue;
    entries.push({ field: f, from: historyValue(current[f]), to: historyValue(next[f]), at: st[0], by: st[1] });
  }
  for (const [tag, st] of now.tags) {
    const old = was.tags.get(tag);
    if (old !== undefined && old[0] === st[0] && old[1] === st[1] && old[2] === st[2]) continue;
    const had = current.tags.includes(tag);
    if (had === st[2]) continue;
    entries.push({ field: 'tags', from: st[2] ? null : tag, to: st[2] ? tag : null, at: st[0], by: st[1] });
  }
  if (entries.length === 0) return next;
  return normalize({ ...next, history: [...(next.history ?? []), ...entries] });
}
