// The field merge as it was before the sync speed-ups (field-merge.ts at 5eef94c), kept
// unchanged as the reference of field-merge-differential.test.ts. Not a test itself.
// Field-by-field merging of ticket copies. Every editable field carries the hybrid-clock stamp
// of its last change and a peer's copy is merged field by field, the later stamp winning, so
// concurrent edits of different fields both survive. Tags are a set of last adds and removes
// per tag. The merge is a join (commutative, associative, idempotent), so every node reaches
// the same ticket whatever order copies arrive in. A copy without stamps (a peer that only
// follows the spec) is settled by whole-ticket last-writer-wins, as the spec says.
import { STAMPED_FIELDS, type FieldStamp, type FieldStamps, type StampedField, type TagStamp, type Ticket } from '../../../../src/schemas/tickets.js';
import { decide } from '../../../../daemon/services/tickets/lww.js';
import { parseStamp } from '../../../../daemon/services/tickets/stamp.js';

/**
 * Tag entries kept per ticket, removals included. Beyond it the oldest removals are dropped
 * (a copy older than all of them could bring such a tag back); present tags are never dropped.
 */
export const MAX_TAG_ENTRIES = 400;

interface Expanded {
  base: FieldStamp;
  fields: Record<StampedField, FieldStamp>;
  tags: Map<string, TagStamp>;
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
  for (const [tag, st] of Object.entries(fs?.tags ?? {})) tags.set(tag, st);
  // The tags array is authoritative about presence: an entry that disagrees keeps its stamp.
  for (const tag of t.tags) {
    const st = tags.get(tag);
    tags.set(tag, st ? [st[0], st[1], true] : [base[0], base[1], true]);
  }
  for (const [tag, st] of tags) if (st[2] && !t.tags.includes(tag)) tags.set(tag, [st[0], st[1], false]);
  return { base, fields, tags };
}

function maxStamp(stamps: Iterable<FieldStamp | TagStamp>): FieldStamp {
  let best: FieldStamp | undefined;
  for (const s of stamps) if (best === undefined || compareFieldStamps(s, best) > 0) best = [s[0], s[1]];
  return best!;
}

/** Tags in a fixed order (add stamp, then name), so that equal sets print alike on every node. */
function orderedTags(tags: Map<string, TagStamp>): string[] {
  return [...tags.entries()]
    .filter(([, st]) => st[2])
    .sort(([a, x], [b, y]) => compareFieldStamps(x, y) || (a < b ? -1 : a > b ? 1 : 0))
    .map(([tag]) => tag);
}

/**
 * Writes `values` and their expanded stamps back as a Ticket: fields stamped with `base` are
 * left out of `field_stamps`, `updated_at`/`updated_by` become the latest stamp of all.
 */
function compact(template: Ticket, values: Pick<Ticket, StampedField>, e: Expanded): Ticket {
  const fs: FieldStamps = { base: e.base };
  const same = (s: FieldStamp | TagStamp): boolean => s[0] === e.base[0] && s[1] === e.base[1];
  for (const f of STAMPED_FIELDS) if (!same(e.fields[f])) fs[f] = e.fields[f];
  let entries = [...e.tags.entries()];
  if (entries.length > MAX_TAG_ENTRIES) {
    const removals = entries.filter(([, st]) => !st[2]).sort(([, x], [, y]) => compareFieldStamps(x, y));
    const drop = new Set(removals.slice(0, entries.length - MAX_TAG_ENTRIES).map(([tag]) => tag));
    entries = entries.filter(([tag]) => !drop.has(tag));
  }
  const kept = new Map(entries);
  const tagStamps: Record<string, TagStamp> = {};
  for (const [tag, st] of [...kept.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) if (!(st[2] && same(st))) tagStamps[tag] = st;
  if (Object.keys(tagStamps).length > 0) fs.tags = tagStamps;
  const newest = maxStamp([e.base, ...Object.values(e.fields), ...kept.values()]);
  return { ...template, ...values, tags: orderedTags(kept), updated_at: newest[0], updated_by: newest[1], field_stamps: fs };
}

/** A ticket in its stored form: defaults folded, tags ordered, `updated_at` the latest stamp. */
export function normalize(t: Ticket): Ticket {
  return compact(t, pickValues(t), expand(t));
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
  return compact({ ...stored, created_at: created }, values, { base, fields, tags });
}

/** Every stored property of a copy, field stamps included, in a fixed order. */
export function fingerprint(t: Ticket): string {
  return JSON.stringify([t.id, t.created_at, t.updated_at, t.updated_by, pickValues(t), t.tags, t.field_stamps ?? null]);
}

export type MergeOutcome = { kind: 'keep' } | { kind: 'same' } | { kind: 'store'; ticket: Ticket; asSent: boolean };

/**
 * What to do with a peer's copy, given the stored one (if any). `keep`: the copy lost and
 * nothing of it is stored; `same`: the stored ticket already holds it; `store`: write `ticket`
 * (`asSent` when it equals the copy, so it need not be pushed back to its sender).
 */
export function mergeCopy(incoming: Ticket, stored: Ticket | undefined, ceilingMs?: number): MergeOutcome {
  if (stored === undefined) {
    const ticket = normalize(incoming);
    // A peer without stamps sees only the spec's fields, and those are what it sent.
    return { kind: 'store', ticket, asSent: incoming.field_stamps === undefined || fingerprint(ticket) === fingerprint(incoming) };
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
    const ticket = normalize({ ...incoming, field_stamps: { base: stamp, ...(Object.keys(removed).length > 0 ? { tags: removed } : {}) } });
    return { kind: 'store', ticket, asSent: true };
  }
  const joined = joinCopies(stored, incoming, ceilingMs);
  const now = fingerprint(joined);
  if (now === fingerprint(stored)) return fingerprint(normalize(incoming)) === now ? { kind: 'same' } : { kind: 'keep' };
  return { kind: 'store', ticket: joined, asSent: now === fingerprint(incoming) };
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
