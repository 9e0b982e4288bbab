// Checks one ticket copy received from a peer (push body element or pull result) and brings
// it to canonical form; anything that would not round-trip is refused, not half-stored.
import { STAMPED_FIELDS, parseChannel, parsePriority, parseStatus, type FieldStamp, type FieldStamps, type TagStamp, type Ticket } from '../../../src/schemas/tickets.js';
import { MAX_TAG_ENTRIES, normalize } from './field-merge.js';
import { aheadOf, normalizeStamp } from './stamp.js';

/**
 * Tags a peer copy may carry: more than a create or update may set (50), because a merge of
 * concurrent adds on several nodes can pass that; still bounded.
 */
export const MAX_PEER_TAGS = 200;

function parseFieldStamp(v: unknown): FieldStamp | undefined {
  if (!Array.isArray(v) || v.length !== 2) return undefined;
  const at = normalizeStamp(v[0]);
  const by = v[1];
  return at !== undefined && typeof by === 'string' && by.length <= 100 ? [at, by] : undefined;
}

function parseTagStamp(v: unknown): TagStamp | undefined {
  if (!Array.isArray(v) || v.length !== 3 || typeof v[2] !== 'boolean') return undefined;
  const st = parseFieldStamp(v.slice(0, 2));
  return st ? [st[0], st[1], v[2]] : undefined;
}

/** The `field_stamps` property in canonical form; undefined when absent, a reason when invalid. */
function parseFieldStamps(raw: unknown): FieldStamps | undefined | string {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'object' || Array.isArray(raw)) return 'field_stamps is not an object';
  const r = raw as Record<string, unknown>;
  const base = parseFieldStamp(r.base);
  if (!base) return 'field_stamps.base invalid';
  const out: FieldStamps = { base };
  for (const [key, v] of Object.entries(r)) {
    if (key === 'base') continue;
    if (key === 'tags') {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'field_stamps.tags invalid';
      const entries = Object.entries(v as Record<string, unknown>);
      if (entries.length > MAX_TAG_ENTRIES) return 'field_stamps.tags has too many entries';
      const tags: Record<string, TagStamp> = {};
      for (const [tag, st] of entries) {
        const parsed = parseTagStamp(st);
        if (!parsed || tag.length === 0 || tag.length > 100) return 'field_stamps.tags invalid';
        tags[tag] = parsed;
      }
      out.tags = tags;
      continue;
    }
    if (!(STAMPED_FIELDS as readonly string[]).includes(key)) return `field_stamps.${key.slice(0, 40)} is not a stamped field`;
    const st = parseFieldStamp(v);
    if (!st) return `field_stamps.${key} invalid`;
    out[key as (typeof STAMPED_FIELDS)[number]] = st;
  }
  return out;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function optString(v: unknown, max: number): string | null | undefined {
  if (v === undefined || v === null) return null;
  return typeof v === 'string' && v.length <= max ? v : undefined;
}

/** The canonical ticket, or a reason it cannot be stored. */
export function parsePeerTicket(raw: unknown): Ticket | string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'not an object';
  const r = raw as Record<string, unknown>;
  const id = typeof r.id === 'string' ? r.id.toLowerCase() : '';
  if (!UUID.test(id)) return 'id is not a UUID';
  if (typeof r.title !== 'string' || r.title.trim() === '' || r.title.length > 500) return 'title missing or invalid';
  const status = parseStatus(r.status);
  const priority = parsePriority(r.priority);
  const channel = parseChannel(r.channel);
  if (!status || !priority || !channel) return 'status, priority or channel invalid';
  const updated = typeof r.updated_at === 'string' ? normalizeStamp(r.updated_at) : undefined;
  if (!updated) return 'updated_at is not an RFC 3339 timestamp';
  const created = typeof r.created_at === 'string' ? normalizeStamp(r.created_at) : updated;
  if (!created) return 'created_at is not an RFC 3339 timestamp';
  const description = r.description === undefined ? '' : r.description;
  if (typeof description !== 'string' || description.length > 100_000) return 'description invalid';
  const source = r.source === undefined ? 'manual' : r.source;
  if (typeof source !== 'string' || source.length > 200) return 'source invalid';
  const requester = optString(r.requester, 500);
  const assignee = optString(r.assignee, 500);
  if (requester === undefined || assignee === undefined) return 'requester or assignee invalid';
  const tags = r.tags === undefined ? [] : r.tags;
  if (!Array.isArray(tags) || tags.length > MAX_PEER_TAGS || !tags.every((t) => typeof t === 'string' && t.length > 0 && t.length <= 100)) return 'tags invalid';
  const updatedBy = r.updated_by === undefined ? '' : r.updated_by;
  if (typeof updatedBy !== 'string' || updatedBy.length > 100) return 'updated_by invalid';
  const stamps = parseFieldStamps(r.field_stamps);
  if (typeof stamps === 'string') return stamps;
  const ticket: Ticket = {
    id,
    short_id: id.slice(0, 8),
    title: r.title,
    description,
    status,
    priority,
    channel,
    source,
    requester,
    assignee,
    tags: [...new Set(tags as string[])],
    created_at: created,
    updated_at: updated,
    updated_by: updatedBy,
  };
  if (!stamps) return ticket;
  // A stamped copy's updated_at is its latest field stamp, whatever the peer wrote there.
  // (Set on the fresh object rather than copied into another: this runs for every copy replicated.)
  ticket.field_stamps = stamps;
  return normalize(ticket);
}

export interface Screened {
  /** Copies fit to offer to last-writer-wins. */
  copies: Ticket[];
  /** How many did not parse, and the first reason (one bad peer must not fill the log). */
  malformed: number;
  reason?: string;
  /** Copies refused for a stamp too far ahead of this node's clock, with how far ahead. */
  tooFarAhead: { ticket: string; skewMs: number }[];
}

/**
 * Checks every copy a peer offers (push body or pull result). A copy stamped more than
 * `maxSkewMs` ahead of `now` is refused: it would win every conflict until the wall clock
 * caught up (year 9999: never) and drag this node's hybrid clock along with it.
 */
export function screenPeerCopies(raws: unknown[], now: number, maxSkewMs: number): Screened {
  const out: Screened = { copies: [], malformed: 0, tooFarAhead: [] };
  for (const raw of raws) {
    const t = parsePeerTicket(raw);
    if (typeof t === 'string') {
      out.malformed++;
      out.reason ??= t;
      continue;
    }
    const ahead = aheadOf(t.updated_at, now);
    if (ahead > maxSkewMs) out.tooFarAhead.push({ ticket: t.short_id, skewMs: ahead });
    else out.copies.push(t);
  }
  return out;
}

/**
 * One warning per kind of refusal, naming the peer and how far ahead its clock is: the skew
 * is what an operator must fix (NTP), and one line per copy would let a peer flood the log.
 */
export function logRefusals(log: { warn(obj: object, msg: string): void }, peer: string, s: Screened, maxSkewMs: number): void {
  if (s.malformed > 0) log.warn({ peer, malformed: s.malformed, reason: s.reason }, 'sync: refused malformed ticket copies');
  if (s.tooFarAhead.length > 0) {
    const skewMs = Math.max(...s.tooFarAhead.map((f) => f.skewMs));
    const tickets = s.tooFarAhead.slice(0, 10).map((f) => f.ticket);
    log.warn({ peer, refused: s.tooFarAhead.length, skew_ms: skewMs, max_skew_ms: maxSkewMs, tickets }, 'sync: refused ticket copies stamped too far ahead of this clock');
  }
}
