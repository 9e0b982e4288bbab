// Checks one ticket copy received from a peer (push body element or pull result) and brings
// it to canonical form; anything that would not round-trip is refused, not half-stored.
import {
  AUTHOR_MAX,
  COMMENT_CONTROL,
  COMMENT_MAX_BYTES,
  HISTORY_VALUE_MAX,
  MAX_HISTORY,
  MAX_PEER_COMMENTS,
  STAMPED_FIELDS,
  parseChannel,
  parsePriority,
  parseStatus,
  type FieldStamp,
  type FieldStamps,
  type HistoryEntry,
  type PeerComment,
  type SyncItem,
  type TagStamp,
  type Ticket,
  type Tombstone,
  isTombstone,
} from '../../../src/schemas/tickets.js';
import { MAX_TAG_ENTRIES, normalize } from './field-merge.js';
import { normalHistory, unionComments } from '../../../src/store/ticket-sets.js';
import { normalTombstone } from './item-merge.js';
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

const HISTORY_FIELDS = new Set<string>([...STAMPED_FIELDS, 'tags', 'created', 'comment', 'deleted']);

/** The `comments` property: undefined when absent, a reason when invalid. */
function parseComments(raw: unknown): PeerComment[] | undefined | string {
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) return 'comments is not an array';
  if (raw.length > MAX_PEER_COMMENTS) return `more than ${MAX_PEER_COMMENTS} comments`;
  const out: PeerComment[] = [];
  for (const c of raw as unknown[]) {
    if (typeof c !== 'object' || c === null || Array.isArray(c)) return 'a comment is not an object';
    const x = c as Record<string, unknown>;
    const id = typeof x.id === 'string' ? x.id.toLowerCase() : '';
    if (!UUID.test(id)) return 'a comment id is not a UUID';
    if (typeof x.body !== 'string' || x.body.trim() === '' || Buffer.byteLength(x.body) > COMMENT_MAX_BYTES) return 'a comment body is empty or too long';
    if (COMMENT_CONTROL.test(x.body)) return 'a comment body holds control characters';
    if (typeof x.author !== 'string' || x.author.length > AUTHOR_MAX) return 'a comment author is invalid';
    const at = normalizeStamp(x.created_at);
    if (at === undefined) return 'a comment created_at is not an RFC 3339 timestamp';
    if (typeof x.by !== 'string' || x.by.length > 100) return 'a comment by is invalid';
    out.push({ id, body: x.body, author: x.author, created_at: at, by: x.by });
  }
  return out;
}

function historyString(v: unknown): string | null | undefined {
  if (v === null) return null;
  return typeof v === 'string' && v.length <= HISTORY_VALUE_MAX ? v : undefined;
}

/** The `history` property: undefined when absent, a reason when invalid. */
function parseHistory(raw: unknown): HistoryEntry[] | undefined | string {
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) return 'history is not an array';
  // Twice the kept number: a merge of two full histories is cut back to MAX_HISTORY anyway.
  if (raw.length > 2 * MAX_HISTORY) return `more than ${2 * MAX_HISTORY} history entries`;
  const out: HistoryEntry[] = [];
  for (const h of raw as unknown[]) {
    if (typeof h !== 'object' || h === null || Array.isArray(h)) return 'a history entry is not an object';
    const x = h as Record<string, unknown>;
    if (typeof x.field !== 'string' || !HISTORY_FIELDS.has(x.field)) return 'a history entry names no field';
    // Derived entries (created, comment, deleted) are made by the reader, never carried.
    if (x.field === 'created' || x.field === 'comment' || x.field === 'deleted') continue;
    const from = historyString(x.from);
    const to = historyString(x.to);
    if (from === undefined || to === undefined) return 'a history entry value is invalid';
    if (x.field === 'tags' && (from === null) === (to === null)) return 'a tags history entry must add or remove one tag';
    const at = normalizeStamp(x.at);
    if (at === undefined) return 'a history entry at is not an RFC 3339 timestamp';
    if (typeof x.by !== 'string' || x.by.length > 100) return 'a history entry by is invalid';
    out.push({ field: x.field, from, to, at, by: x.by });
  }
  return normalHistory(out);
}

/** A tombstone (`deleted` present) in canonical form, or a reason it cannot be stored. */
function parseTombstone(r: Record<string, unknown>, id: string): Tombstone | string {
  const d = r.deleted;
  if (typeof d !== 'object' || d === null || Array.isArray(d)) return 'deleted is not an object';
  const st = parseFieldStamp([(d as Record<string, unknown>).at, (d as Record<string, unknown>).by]);
  if (!st) return 'deleted invalid';
  const history = parseHistory(r.history);
  if (typeof history === 'string') return history;
  return normalTombstone({ id, updated_at: st[0], updated_by: st[1], deleted: { at: st[0], by: st[1] }, history: history ?? [] });
}

/** The canonical ticket or tombstone, or a reason it cannot be stored. */
export function parsePeerItem(raw: unknown): SyncItem | string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'not an object';
  const r = raw as Record<string, unknown>;
  if (r.deleted !== undefined) {
    const id = typeof r.id === 'string' ? r.id.toLowerCase() : '';
    if (!UUID.test(id)) return 'id is not a UUID';
    return parseTombstone(r, id);
  }
  return parsePeerTicket(raw);
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
  const comments = parseComments(r.comments);
  if (typeof comments === 'string') return comments;
  const history = parseHistory(r.history);
  if (typeof history === 'string') return history;
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
  // A copy without stamps comes from a peer that follows only the spec, which knows no comments.
  if (!stamps) return ticket;
  if (comments && comments.length > 0) ticket.comments = unionComments(comments, undefined);
  if (history && history.length > 0) ticket.history = history;
  // A stamped copy's updated_at is its latest field stamp, whatever the peer wrote there.
  // (Set on the fresh object rather than copied into another: this runs for every copy replicated.)
  ticket.field_stamps = stamps;
  return normalize(ticket);
}

export interface Screened {
  /** Ticket copies fit to offer to the merge. */
  copies: Ticket[];
  /** Tombstones fit to offer to the merge (deleted tickets). */
  tombstones: Tombstone[];
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
  const out: Screened = { copies: [], tombstones: [], malformed: 0, tooFarAhead: [] };
  for (const raw of raws) {
    const t = parsePeerItem(raw);
    if (typeof t === 'string') {
      out.malformed++;
      out.reason ??= t;
      continue;
    }
    const ahead = aheadOf(t.updated_at, now);
    if (ahead > maxSkewMs) out.tooFarAhead.push({ ticket: t.id.slice(0, 8), skewMs: ahead });
    else if (isTombstone(t)) out.tombstones.push(t);
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
