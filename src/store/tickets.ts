// TicketStore: the ticket tracker's storage — tickets with an FTS5 index over title and
// description, the node identity, and per-peer sync cursors. Interface first, SQLite below.
import { randomUUID } from 'node:crypto';
import { renameSync, rmSync } from 'node:fs';
import {
  MAX_COMMENTS,
  SHORT_ID_MIN,
  isTombstone,
  type Ticket,
  type Status,
  type Priority,
  type Channel,
  type FieldStamp,
  type FieldStamps,
  type HistoryEntry,
  type PeerComment,
  type SyncItem,
  type Tombstone,
} from '../schemas/tickets.js';
import { historyTag, lostEntries } from './ticket-sets.js';
import { LateArrivals } from './late-arrivals.js';
import type { Statement } from 'better-sqlite3';
import { migrate, openDatabase, type Db } from './sqlite.js';
import { ftsTokens } from '../notes/fts-tokens.js';
import { quoteForError } from '../util/quote.js';
import { dropOldest } from '../util/bounded-map.js';

export interface TicketFilter {
  status?: Status;
  priority?: Priority;
  channel?: Channel;
  source?: string;
  assignee?: PersonMatch;
  requester?: PersonMatch;
  /** Words that must all occur in the title or description (whole words; `word*` a prefix). */
  search?: string;
}

/**
 * An assignee or requester filter: exactly this value, none, or any. An empty string (stored by
 * versions before unassigning gave null) counts as none.
 */
export type PersonMatch = { kind: 'is'; value: string } | { kind: 'none' } | { kind: 'any' };

export type Lookup = { kind: 'found'; ticket: Ticket } | { kind: 'none' } | { kind: 'ambiguous'; matches: number };

/**
 * Where a list page starts: after this position in newest-change-first order. `seq` orders
 * tickets that share one `updated_at` (0-32767; see ORDER_KEY).
 */
export interface ListPosition {
  updated_at: string;
  seq: number;
}

export interface Page {
  tickets: Ticket[];
  /** True when more tickets follow the last one on this page. */
  more: boolean;
  /** From `list`: the position of the page's last ticket, when more follow. */
  next?: ListPosition;
}

/**
 * What to do with a peer's copy given the stored one: `keep` (it lost), `same` (already
 * held), or `store` this ticket; `asSent` marks a stored ticket equal to the copy received.
 */
// Declared as a method, whose parameters TypeScript checks both ways: a combine written for
// tickets alone (tests, a store without tombstones) still fits.
export type Combine = {
  combine(incoming: SyncItem, stored: SyncItem | undefined): { kind: 'keep' } | { kind: 'same' } | { kind: 'store'; ticket: SyncItem; asSent: boolean };
}['combine'];

/** A page of `changedSince`: live tickets (with their comments and history) and tombstones, in stamp order. */
export interface ChangesPage {
  tickets: SyncItem[];
  more: boolean;
  next?: ListPosition;
}

/** One entry of `history`, with `lost` when it lost a per-field merge. */
export type HistoryView = HistoryEntry & { lost?: true };
/** Where a history page starts: after this entry key (see historyKey), newest first. */
export type HistoryPosition = [string, string, string, string];
/** The paging key of an entry: at, by, field, then the tag or comment id. */
export function historyKey(e: HistoryEntry): HistoryPosition {
  return [e.at, e.by, e.field, e.field === 'comment' ? (e.to ?? '') : historyTag(e)];
}
function compareKeys(a: HistoryPosition, b: HistoryPosition): number {
  for (let i = 0; i < 4; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return 0;
}

export interface Count {
  n: number;
  capped: boolean;
}

export interface MergeResult {
  accepted: number;
  rejected: number;
}

export interface ChangesOptions {
  /** Tickets per page; the page grows past it to finish the group sharing its last stamp. */
  limit: number;
  /** About this many bytes of text per page, checked at group ends like `limit`. */
  maxBytes?: number;
  /** Leaves out tickets stored exactly as this node sent them (no need to push them back). */
  notFrom?: string;
  /**
   * The page may end inside a group sharing one stamp (ours peers' pulls): then `next` says where
   * the next page starts, so no page passes `maxBytes` by more than a ticket however large a group.
   */
  split?: boolean;
  /** With `split`: start after this position (a `next` of an earlier page) instead of after `since`. */
  after?: ListPosition;
}

export interface TicketStore {
  /** Generated on first open, then the same for the life of the database. */
  nodeId(): Promise<string>;
  insert(ticket: Ticket): Promise<Ticket>;
  /** A full id, or a prefix of at least SHORT_ID_MIN (8) characters that matches one ticket. */
  lookup(idOrPrefix: string): Promise<Lookup>;
  /** One page, newest change first (`updated_at` descending, ties in a fixed order). */
  list(filter: TicketFilter, page: { limit: number; after?: ListPosition }): Promise<Page>;
  /**
   * How many tickets match the filter, on all pages together; a search counts at most
   * SEARCH_COUNT_MAX (`capped` then says there are more).
   */
  count(filter: TicketFilter): Promise<Count>;
  /**
   * Applies `edit` to the stored ticket in one transaction and stores what it returns
   * (undefined: no change); returns the ticket as stored, or undefined when there is no such id.
   */
  update(id: string, edit: (current: Ticket) => Ticket | undefined): Promise<Ticket | undefined>;
  /**
   * One page of tickets with `updated_at` strictly after `since`, oldest first (`updated_at`,
   * ties in a fixed order). A page never ends inside a group of tickets sharing one `updated_at`, so a
   * reader whose next `since` is the greatest stamp seen skips nothing. Every stamp stored
   * and `since` itself are canonical (`YYYY-MM-DDTHH:MM:SS.sssZ`, years 1970-9999): fixed
   * width and UTC, so text order is instant order; writes of any other form are refused.
   */
  changedSince(since: string, opts: ChangesOptions): Promise<ChangesPage>;
  /**
   * Offers peer copies in one transaction; `combine` settles each against the stored ticket or
   * tombstone (with its comments and history). `from` is the sending node's id, remembered on
   * items stored exactly as it sent them.
   */
  merge(incoming: SyncItem[], combine: Combine, from?: string): Promise<MergeResult>;
  /** The stamps merge() stored, by the second they arrived: how far back a peer's next round re-reads. */
  readonly arrivals: LateArrivals;
  /** Adds a local comment: 'missing' without a live ticket, 'full' at MAX_COMMENTS. Advances the ticket's stamp. */
  addComment(ticketId: string, c: PeerComment): Promise<'added' | 'missing' | 'full'>;
  /** The comments of a live ticket, oldest first (created_at, then id). */
  comments(ticketId: string): Promise<PeerComment[]>;
  /** Deletes a live ticket at `stamp`, leaving a tombstone; false when there is no live ticket of this full id. */
  delete(id: string, stamp: FieldStamp): Promise<boolean>;
  /**
   * One page of a ticket's history (stored changes plus the derived created, comment and deleted
   * entries), newest first, after `before`; undefined when no ticket or tombstone has this full id.
   */
  history(id: string, page: { limit: number; before?: HistoryPosition }): Promise<{ entries: HistoryView[]; next?: HistoryPosition; deleted: boolean } | undefined>;
  /** Deletes tombstones whose delete stamp is at or before `through`, with their history; how many. */
  purgeTombstones(through: string): Promise<number>;
  /** Records that `peer` holds these tombstones (pushed to it, or pulled from it). */
  markReceived(peer: string, ids: string[]): Promise<void>;
  /** Deletes the tombstones every one of `peers` holds (none when the list is empty); how many. */
  purgeReceived(peers: string[]): Promise<number>;
  /** Of the tombstones deleted at or before `through`: how many, and which of `peers` lack one of them. */
  unseen(through: string, peers: string[]): Promise<{ n: number; peers: string[] }>;
  /** The greatest `updated_at` stored no later than `atMost` (canonical), for the hybrid clock. */
  newestUpdate(atMost: string): Promise<string | undefined>;
  getCursor(peer: string): Promise<string | undefined>;
  setCursor(peer: string, cursor: string): Promise<void>;
  /** A consistent copy of the whole database in the file `dest` (a snapshot for a new peer). */
  backupTo(dest: string): Promise<void>;
  /** The schema objects, to check a peer's snapshot against. */
  schema(): SchemaObject[];
  /** Takes a checked snapshot file as the database, only while no ticket is stored; false otherwise. */
  adopt(snapshot: string): boolean;
  close(): Promise<void>;
}

/** A canonical stamp, `YYYY-MM-DDTHH:MM:SS.sssZ`, as an SQLite GLOB. */
const STAMP_GLOB = '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z';

/**
 * A ticket's rowid is ms(updated_at) * ORDER_KEY + seq, its place in newest-change-first
 * order: tickets sharing a millisecond get distinct seqs (starting from a hash of the id, the
 * next free one). Stamps are 1970-9999, so keys fit SQLite's 64-bit integers; they pass
 * JavaScript's 2^53, so keys are only ever computed in SQL, from ms and seq, both cast to
 * integers first: better-sqlite3 binds a JavaScript number as a REAL, and REAL arithmetic
 * rounds a key to a multiple of 8, even into the next millisecond.
 */
export const ORDER_KEY = 32768;

/** The columns whose values ticket_counts counts (besides the total, dim ''). */
const COUNTED = ['status', 'priority', 'channel', 'source'] as const;
/** Fills an empty ticket_counts from the rows (migration 4, and a snapshot being adopted). */
export const COUNTS_FILL = `   INSERT INTO ticket_counts SELECT '', '', count(*) FROM tickets;
${COUNTED.map((d) => `   INSERT INTO ticket_counts SELECT '${d}', ${d}, count(*) FROM tickets GROUP BY ${d};`).join('\n')}`;

const COUNTS_MIGRATION = `CREATE TABLE ticket_counts (dim TEXT NOT NULL, value TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (dim, value)) WITHOUT ROWID;
${COUNTS_FILL}
   CREATE TRIGGER tickets_count_ai AFTER INSERT ON tickets BEGIN
     INSERT INTO ticket_counts VALUES ('', '', 1) ON CONFLICT DO UPDATE SET n = n + 1;
${COUNTED.map((d) => `     INSERT INTO ticket_counts VALUES ('${d}', new.${d}, 1) ON CONFLICT DO UPDATE SET n = n + 1;`).join('\n')}
   END;
   CREATE TRIGGER tickets_count_ad AFTER DELETE ON tickets BEGIN
     UPDATE ticket_counts SET n = n - 1 WHERE dim = '' AND value = '';
${COUNTED.map((d) => `     UPDATE ticket_counts SET n = n - 1 WHERE dim = '${d}' AND value = old.${d};`).join('\n')}
   END;
${COUNTED.map(
  (d) => `   CREATE TRIGGER tickets_count_au_${d} AFTER UPDATE OF ${d} ON tickets WHEN old.${d} IS NOT new.${d} BEGIN
     UPDATE ticket_counts SET n = n - 1 WHERE dim = '${d}' AND value = old.${d};
     INSERT INTO ticket_counts VALUES ('${d}', new.${d}, 1) ON CONFLICT DO UPDATE SET n = n + 1;
   END;`,
).join('\n')}`;

const MIGRATIONS = [
  `CREATE TABLE tickets (
     id TEXT PRIMARY KEY,
     title TEXT NOT NULL,
     description TEXT NOT NULL DEFAULT '',
     status TEXT NOT NULL,
     priority TEXT NOT NULL,
     channel TEXT NOT NULL,
     source TEXT NOT NULL,
     requester TEXT,
     assignee TEXT,
     tags TEXT NOT NULL DEFAULT '[]',
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL,
     updated_by TEXT NOT NULL DEFAULT ''
   );
   CREATE INDEX tickets_updated_at ON tickets(updated_at);
   CREATE VIRTUAL TABLE tickets_fts USING fts5(title, description, content='tickets', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2');
   CREATE TRIGGER tickets_ai AFTER INSERT ON tickets BEGIN
     INSERT INTO tickets_fts(rowid, title, description) VALUES (new.rowid, new.title, new.description);
   END;
   CREATE TRIGGER tickets_ad AFTER DELETE ON tickets BEGIN
     INSERT INTO tickets_fts(tickets_fts, rowid, title, description) VALUES ('delete', old.rowid, old.title, old.description);
   END;
   CREATE TRIGGER tickets_au AFTER UPDATE OF title, description ON tickets BEGIN
     INSERT INTO tickets_fts(tickets_fts, rowid, title, description) VALUES ('delete', old.rowid, old.title, old.description);
     INSERT INTO tickets_fts(rowid, title, description) VALUES (new.rowid, new.title, new.description);
   END;
   CREATE TABLE node (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   CREATE TABLE peer_cursors (peer TEXT PRIMARY KEY, cursor TEXT NOT NULL);`,
  // Earlier versions let the hybrid clock run past year 9999 and stored stamps such as
  // +010000-01-01T00:00:00.000Z, which sort below every real one: the edit is re-stamped now
  // (so it syncs out again, and wins over older copies as it did), cursors restart from the epoch.
  `UPDATE tickets SET updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE updated_at NOT GLOB '${STAMP_GLOB}';
   UPDATE tickets SET created_at = updated_at WHERE created_at NOT GLOB '${STAMP_GLOB}';
   DELETE FROM peer_cursors WHERE cursor NOT GLOB '${STAMP_GLOB}';`,
  // Per-field stamps: every field of an existing ticket dates from its last whole-ticket
  // stamp. got_from: the node whose copy is stored unchanged (not pushed back to it). Indexes
  // for newest-change-first pages, whole and filtered by status or source.
  `ALTER TABLE tickets ADD COLUMN field_stamps TEXT NOT NULL DEFAULT '{}';
   ALTER TABLE tickets ADD COLUMN got_from TEXT;
   UPDATE tickets SET field_stamps = json_object('base', json_array(updated_at, updated_by));
   DROP INDEX tickets_updated_at;
   CREATE INDEX tickets_updated ON tickets(updated_at, id);
   CREATE INDEX tickets_status_updated ON tickets(status, updated_at, id);
   CREATE INDEX tickets_source_updated ON tickets(source, updated_at, id);`,
  // Running counts of tickets, in all and per status, priority, channel and source, kept by
  // triggers in the same transaction as the rows: count(*) over a million rows costs ~50 ms,
  // a lookup here microseconds. Rows are never deleted (n may reach 0).
  COUNTS_MIGRATION,
  // The order key (ORDER_KEY) becomes the rowid, which FTS5 shares: a search's newest matches
  // are the first entries of its doclists, read lazily, instead of every match sorted. FTS5 is
  // then written by the store, not by row triggers (a trigger's statement savepoint flushed
  // FTS5's pending terms on every row: 99 µs a ticket against 37 µs). Rowids move to negative
  // first, so no new key meets an old one.
  (db: Db) => {
    db.function('mkt_stamp_ms', { deterministic: true }, (stamp: unknown) => Date.parse(String(stamp)));
    db.exec(`DROP TRIGGER tickets_ai;
      DROP TRIGGER tickets_au;
      DROP INDEX tickets_updated;
      DROP INDEX tickets_status_updated;
      DROP INDEX tickets_source_updated;
      UPDATE tickets SET rowid = -rowid;
      UPDATE tickets SET rowid = k.key FROM (
        SELECT rowid AS old, CAST(mkt_stamp_ms(updated_at) AS INTEGER) * ${ORDER_KEY} + row_number() OVER (PARTITION BY updated_at ORDER BY id) - 1 AS key FROM tickets
      ) AS k WHERE tickets.rowid = k.old;
      INSERT INTO tickets_fts(tickets_fts) VALUES ('rebuild');
      CREATE INDEX tickets_status ON tickets(status);
      CREATE INDEX tickets_source ON tickets(source);`);
  },
  // Comments (a grow-only set per ticket), history (field changes, a set per ticket kept to
  // MAX_HISTORY), tombstones of deleted tickets (keyed like tickets, in their own table so that
  // lists, counts, searches and lookups never meet them) and which peer holds which tombstone.
  // The counts on the row let lists show comment_count and pulls skip tickets without either.
  `ALTER TABLE tickets ADD COLUMN comment_count INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE tickets ADD COLUMN history_count INTEGER NOT NULL DEFAULT 0;
   CREATE TABLE ticket_comments (ticket_id TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL, author TEXT NOT NULL, created_at TEXT NOT NULL, by TEXT NOT NULL, PRIMARY KEY (ticket_id, id)) WITHOUT ROWID;
   CREATE TABLE ticket_history (ticket_id TEXT NOT NULL, at TEXT NOT NULL, by TEXT NOT NULL, field TEXT NOT NULL, tag TEXT NOT NULL, "from" TEXT, "to" TEXT, PRIMARY KEY (ticket_id, at, by, field, tag)) WITHOUT ROWID;
   CREATE TABLE ticket_tombstones (key INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, updated_at TEXT NOT NULL, updated_by TEXT NOT NULL, deleted_at TEXT NOT NULL, deleted_by TEXT NOT NULL, got_from TEXT, history_count INTEGER NOT NULL DEFAULT 0);
   CREATE TABLE tombstone_seen (id TEXT NOT NULL, peer TEXT NOT NULL, PRIMARY KEY (id, peer)) WITHOUT ROWID;`,
];

/** The schema version a database of this mkt is at (written into an adopted snapshot). */
export const TICKETS_SCHEMA_VERSION = MIGRATIONS.length;

/** The only stamp form stored (see `changedSince`). */
const CANONICAL_STAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function checkStamps(t: Ticket): void {
  if (!CANONICAL_STAMP.test(t.updated_at) || !CANONICAL_STAMP.test(t.created_at)) throw new Error(`ticket ${t.id}: stamps must be canonical RFC 3339 UTC`);
}

/** A tombstone's row (ticket_tombstones). */
interface TombRow {
  id: string;
  updated_at: string;
  updated_by: string;
  deleted_at: string;
  deleted_by: string;
  history_count: number;
  seq: number;
}

export interface Row {
  id: string;
  title: string;
  description: string;
  status: string;
  priority: string;
  channel: string;
  source: string;
  requester: string | null;
  assignee: string | null;
  tags: string;
  created_at: string;
  updated_at: string;
  updated_by: string;
  field_stamps: string;
  got_from?: string | null;
  /** Read by lookups and lists (not part of COLUMNS: a snapshot's rows are checked without them). */
  comment_count?: number;
  history_count?: number;
}

/**
 * `t` without its comments and history, with their count: what the lookup cache keeps, and what
 * the API answers (its serializer leaves out field_stamps). Field by field: an object rest and a
 * spread (`{ ...t, comment_count }`) made an object V8 copies through its runtime and reads
 * slowly after, in the cache and in every answer made from it (daemon/services/tickets/ticket-answer.ts).
 */
export function ticketView(t: Ticket, commentCount: number): Ticket {
  return {
    id: t.id,
    short_id: t.short_id,
    title: t.title,
    description: t.description,
    status: t.status,
    priority: t.priority,
    channel: t.channel,
    source: t.source,
    requester: t.requester,
    assignee: t.assignee,
    tags: t.tags,
    created_at: t.created_at,
    updated_at: t.updated_at,
    updated_by: t.updated_by,
    field_stamps: t.field_stamps,
    comment_count: commentCount,
  };
}

export function fromRow(r: Row): Ticket {
  return {
    id: r.id,
    short_id: r.id.slice(0, 8),
    title: r.title,
    description: r.description,
    status: r.status,
    priority: r.priority,
    channel: r.channel,
    source: r.source,
    requester: r.requester,
    assignee: r.assignee,
    tags: JSON.parse(r.tags) as string[],
    created_at: r.created_at,
    updated_at: r.updated_at,
    updated_by: r.updated_by,
    field_stamps: JSON.parse(r.field_stamps) as FieldStamps,
    ...(r.comment_count !== undefined ? { comment_count: r.comment_count } : {}),
  };
}

export function toParams(t: Ticket, gotFrom: string | null = null): Row {
  checkStamps(t);
  return {
    id: t.id,
    title: t.title,
    description: t.description,
    status: t.status,
    priority: t.priority,
    channel: t.channel,
    source: t.source,
    requester: t.requester,
    assignee: t.assignee,
    tags: JSON.stringify(t.tags),
    created_at: t.created_at,
    updated_at: t.updated_at,
    updated_by: t.updated_by,
    field_stamps: JSON.stringify(t.field_stamps ?? { base: [t.updated_at, t.updated_by] }),
    got_from: gotFrom,
  };
}

/** The fewest characters before a prefix's `*` (MySQL's and Sphinx's minimum prefix length). */
export const MIN_PREFIX_CHARS = 3;
/** The most prefix words in one search. */
export const MAX_PREFIXES = 3;

/** The words of a search, each once: whole words, and prefixes (`log*`, without the star). */
function searchWords(search: string): { word: string; prefix: boolean }[] {
  const seen = new Set<string>();
  const out: { word: string; prefix: boolean }[] = [];
  for (const w of search.split(/[\s\p{Cc}]+/u)) {
    const prefix = w.endsWith('*');
    const word = prefix ? w.replace(/\*+$/, '') : w;
    // A word given twice adds nothing (every word must occur), only work.
    const key = `${prefix ? '*' : ' '}${word}`;
    if (word.length > 0 && !seen.has(key)) {
      seen.add(key);
      out.push({ word, prefix });
    }
  }
  return out;
}

/** Whether a word of the search holds a token FTS5 indexes (letters and digits, as it splits them). */
function searchable(words: { word: string }[]): boolean {
  if (words.some((w) => /[\p{L}\p{N}]/u.test(w.word))) return true;
  return words.length > 0 && ftsTokens(words.map((w) => w.word)).some((t) => t.length > 0);
}

/**
 * Why a search is refused (400), or undefined. A prefix makes FTS5 merge the list of every word
 * it covers before the first answer, on the thread that serves every request: `l*` over a
 * million tickets took 830 ms and a search of a hundred such prefixes would hold the node for
 * a minute. Three letters or more (`log*`: 30-60 ms), and at most three prefixes a search.
 */
export function searchProblem(search: string): string | undefined {
  const words = searchWords(search);
  // Something typed that holds no word (`***`, `...`) would list every ticket, or none: refused,
  // as a notes search refuses it. A search of nothing but blanks is no search, like `source=`.
  if (/[^\s\p{Cc}]/u.test(search) && !searchable(words)) return `search has no words to search for: ${quoteForError(search)}`;
  const prefixes = words.filter((w) => w.prefix);
  // Measured as FTS5 will run it: the tokenizer drops punctuation and splits at it, and the star
  // applies to the last token, so `..l*` and `logs.l*` are the prefix `l*` (issue 28).
  const tokens = ftsTokens(prefixes.map((w) => w.word));
  const shortAt = tokens.findIndex((t) => t.length > 0 && [...t[t.length - 1]!].length < MIN_PREFIX_CHARS);
  const short = shortAt >= 0 ? prefixes[shortAt] : undefined;
  if (short) {
    const ran = `${tokens[shortAt]![tokens[shortAt]!.length - 1]!}*`;
    const given = `${short.word}*`;
    return `a prefix needs at least ${MIN_PREFIX_CHARS} characters before its *: ${JSON.stringify(given)}${ran === given ? '' : ` (searched as ${JSON.stringify(ran)}: punctuation separates words)`}`;
  }
  if (prefixes.length > MAX_PREFIXES) return `a search may hold at most ${MAX_PREFIXES} prefixes (words ending in *), not ${prefixes.length}`;
  return undefined;
}

/**
 * Turns user words into an FTS5 query: every word must occur as a whole word, quoted literally;
 * a word ending in `*` matches as a prefix (`log*`: login, logs). Whole words are read lazily
 * from FTS5's doclists, newest first; a prefix merges the doclists of every word it covers
 * (see searchProblem). Control characters split words as whitespace does: the tokenizer treats
 * them as separators anyway, and FTS5's query parser reads a NUL as the end of the query
 * ("unterminated string").
 */
export function ftsQuery(search: string): string | undefined {
  const terms = searchWords(search).map((w) => `"${w.word.replace(/"/g, '""')}"${w.prefix ? '*' : ''}`);
  return terms.length > 0 ? terms.join(' ') : undefined;
}

/** An FNV-1a hash of the id: where a ticket's seq search starts among those sharing its ms. */
function seqStart(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return (h >>> 0) % ORDER_KEY;
}

const CACHE_SIZE = 10_000;
export const COLUMNS = 'id, title, description, status, priority, channel, source, requester, assignee, tags, created_at, updated_at, updated_by, field_stamps';
const PARAMS = COLUMNS.split(', ').map((c) => `@${c}`).join(', ');
/** The order key of a statement's @ms and @seq (see ORDER_KEY). */
const KEY = `CAST(@ms AS INTEGER) * ${ORDER_KEY} + CAST(@seq AS INTEGER)`;
/**
 * A search counts its matches up to this many (GitLab caps its counts the same way): counting
 * every match of a word found in half of a million tickets would cost more than the page.
 */
export const SEARCH_COUNT_MAX = 10_000;
/** Text bytes a page counts per ticket besides its title and description (fields, stamps, JSON). */
const ROW_OVERHEAD_BYTES = 400;

/** An FTS5 write a transaction queued: a row's entry at its key (see inTransaction). */
interface FtsOp {
  op: 'insert' | 'delete';
  ms: number;
  seq: number;
  title: string;
  description: string;
}

/** Where a stored ticket sits, and the text its FTS5 entry was made from. */
interface Stored {
  row: Row;
  seq: number;
}

/**
 * A changedSince walk: tickets and tombstones whose key satisfies `key` (`>= ...` or `> ...`),
 * merged in key order by SQLite (a MERGE of two rowid walks, no sort). A ticket's comments and
 * history come along as JSON, read only for tickets that have any (the counts on the row).
 */
function changesSql(key: string, extra: string): string {
  const tomb = ['NULL AS title', 'NULL AS description', 'NULL AS status', 'NULL AS priority', 'NULL AS channel', 'NULL AS source', 'NULL AS requester', 'NULL AS assignee', 'NULL AS tags', 'NULL AS created_at'];
  const history = (owner: string): string =>
    `(SELECT json_group_array(json_array(h.field, h."from", h."to", h.at, h.by)) FROM (SELECT * FROM ticket_history h WHERE h.ticket_id = ${owner} ORDER BY at, by, field, tag) h)`;
  return `SELECT 0 AS dead, ${COLUMNS}, NULL AS deleted_at, NULL AS deleted_by,
      CASE WHEN comment_count > 0 THEN (SELECT json_group_array(json_array(c.id, c.body, c.author, c.created_at, c.by)) FROM (SELECT * FROM ticket_comments c WHERE c.ticket_id = t.id ORDER BY created_at, id) c) END AS comments_json,
      CASE WHEN history_count > 0 THEN ${history('t.id')} END AS history_json,
      rowid & ${ORDER_KEY - 1} AS seq, rowid AS k
    FROM tickets t WHERE rowid ${key}${extra}
    UNION ALL
    SELECT 1, id, ${tomb.join(', ')}, updated_at, updated_by, NULL, deleted_at, deleted_by, NULL,
      CASE WHEN history_count > 0 THEN ${history('d.id')} END,
      key & ${ORDER_KEY - 1}, key
    FROM ticket_tombstones d WHERE key ${key}${extra}
    ORDER BY k`;
}

/** A changedSince row: a ticket's columns, or a tombstone's (dead = 1), with the sets as JSON. */
type ChangeRow = Row & { dead: number; deleted_at: string | null; deleted_by: string | null; comments_json: string | null; history_json: string | null; seq: number };

function historyFromJson(text: string | null): HistoryEntry[] {
  if (text === null) return [];
  return (JSON.parse(text) as [string, string | null, string | null, string, string][]).map(([field, from, to, at, by]) => ({ field, from, to, at, by }));
}

function itemOf(r: ChangeRow): SyncItem {
  if (r.dead === 1) return { id: r.id, updated_at: r.updated_at, updated_by: r.updated_by, deleted: { at: r.deleted_at!, by: r.deleted_by! }, history: historyFromJson(r.history_json) };
  const t = fromRow(r);
  if (r.comments_json !== null) t.comments = (JSON.parse(r.comments_json) as [string, string, string, string, string][]).map(([id, body, author, created_at, by]) => ({ id, body, author, created_at, by }));
  if (r.history_json !== null) t.history = historyFromJson(r.history_json);
  return t;
}

/** A stored ticket or tombstone with its comments and history, as the merge sees it. */
type StoredItem = { dead: false; stored: Stored; item: Ticket } | { dead: true; seq: number; row: TombRow; item: Tombstone };

/** Every fixed statement of the store, prepared on `db`. */
function statements(db: Db) {
  return {
      insert: db.prepare(`INSERT INTO tickets (rowid, ${COLUMNS}, got_from) VALUES (${KEY}, ${PARAMS}, @got_from)`),
      update: db.prepare(`UPDATE tickets SET rowid = ${KEY}, title = @title, description = @description, status = @status, priority = @priority,
        channel = @channel, source = @source, requester = @requester, assignee = @assignee, tags = @tags, created_at = @created_at,
        updated_at = @updated_at, updated_by = @updated_by, field_stamps = @field_stamps, got_from = @got_from WHERE id = @id`),
      ftsInsert: db.prepare(`INSERT INTO tickets_fts (rowid, title, description) VALUES (${KEY}, @title, @description)`),
      ftsDelete: db.prepare(`INSERT INTO tickets_fts (tickets_fts, rowid, title, description) VALUES ('delete', ${KEY}, @title, @description)`),
      keyTaken: db.prepare(`SELECT 1 FROM tickets WHERE rowid = ${KEY} UNION ALL SELECT 1 FROM ticket_tombstones WHERE key = ${KEY}`),
      byId: db.prepare(`SELECT ${COLUMNS}, comment_count, history_count, rowid & ${ORDER_KEY - 1} AS seq FROM tickets WHERE id = ?`),
      byPrefix: db.prepare(`SELECT ${COLUMNS}, comment_count FROM tickets WHERE id >= ? AND id < ? ORDER BY id LIMIT 2`),
      tombById: db.prepare(`SELECT id, updated_at, updated_by, deleted_at, deleted_by, history_count, key & ${ORDER_KEY - 1} AS seq FROM ticket_tombstones WHERE id = ?`),
      tombInsert: db.prepare(`INSERT INTO ticket_tombstones (key, id, updated_at, updated_by, deleted_at, deleted_by, got_from, history_count) VALUES (${KEY}, @id, @updated_at, @updated_by, @deleted_at, @deleted_by, @got_from, @history_count)`),
      tombUpdate: db.prepare(`UPDATE ticket_tombstones SET key = ${KEY}, updated_at = @updated_at, updated_by = @updated_by, deleted_at = @deleted_at, deleted_by = @deleted_by, got_from = @got_from, history_count = @history_count WHERE id = @id`),
      tombDelete: db.prepare('DELETE FROM ticket_tombstones WHERE id = ?'),
      rowDelete: db.prepare('DELETE FROM tickets WHERE id = ?'),
      setCounts: db.prepare('UPDATE tickets SET comment_count = ?, history_count = ? WHERE id = ?'),
      commentsOf: db.prepare('SELECT id, body, author, created_at, by FROM ticket_comments WHERE ticket_id = ? ORDER BY created_at, id'),
      commentInsert: db.prepare('INSERT OR IGNORE INTO ticket_comments (ticket_id, id, body, author, created_at, by) VALUES (?, ?, ?, ?, ?, ?)'),
      commentsDelete: db.prepare('DELETE FROM ticket_comments WHERE ticket_id = ?'),
      historyOf: db.prepare('SELECT field, "from", "to", at, by FROM ticket_history WHERE ticket_id = ? ORDER BY at, by, field, tag'),
      historyInsert: db.prepare('INSERT OR REPLACE INTO ticket_history (ticket_id, at, by, field, tag, "from", "to") VALUES (?, ?, ?, ?, ?, ?, ?)'),
      historyDeleteOne: db.prepare('DELETE FROM ticket_history WHERE ticket_id = ? AND at = ? AND by = ? AND field = ? AND tag = ?'),
      historyDelete: db.prepare('DELETE FROM ticket_history WHERE ticket_id = ?'),
      seenInsert: db.prepare('INSERT OR IGNORE INTO tombstone_seen (id, peer) SELECT id, ? FROM ticket_tombstones WHERE id = ?'),
      seenDelete: db.prepare('DELETE FROM tombstone_seen WHERE id = ?'),
      tombsThrough: db.prepare('SELECT id FROM ticket_tombstones WHERE deleted_at <= ?'),
      seenBy: db.prepare('SELECT peer FROM tombstone_seen WHERE id = ?'),
      allTombs: db.prepare('SELECT id FROM ticket_tombstones'),
      countPrefix: db.prepare('SELECT count(*) AS n FROM tickets WHERE id >= ? AND id < ?'),
      // Every key of a stamp after `since` is at or past the first key of the next millisecond.
      since: db.prepare(changesSql('>= (CAST(@ms AS INTEGER) + 1) * ' + ORDER_KEY, '')),
      afterKey: db.prepare(changesSql(`> ${KEY}`, '')),
      sinceNotFrom: db.prepare(changesSql('>= (CAST(@ms AS INTEGER) + 1) * ' + ORDER_KEY, ' AND (got_from IS NULL OR got_from <> @from)')),
      newest: db.prepare(`SELECT max(u) AS updated_at FROM (SELECT * FROM (SELECT updated_at AS u FROM tickets WHERE rowid < (CAST(@ms AS INTEGER) + 1) * ${ORDER_KEY} ORDER BY rowid DESC LIMIT 1)
        UNION ALL SELECT * FROM (SELECT updated_at AS u FROM ticket_tombstones WHERE key < (CAST(@ms AS INTEGER) + 1) * ${ORDER_KEY} ORDER BY key DESC LIMIT 1))`),
      counted: db.prepare('SELECT n FROM ticket_counts WHERE dim = ? AND value = ?'),
      searchCount: db.prepare('SELECT count(*) AS n FROM (SELECT 1 FROM tickets_fts WHERE tickets_fts MATCH ? LIMIT ?)'),
      getNode: db.prepare("SELECT value FROM node WHERE key = 'node_id'"),
      setNode: db.prepare("INSERT OR IGNORE INTO node (key, value) VALUES ('node_id', ?)"),
      getCursor: db.prepare('SELECT cursor FROM peer_cursors WHERE peer = ?'),
      setCursor: db.prepare('INSERT INTO peer_cursors (peer, cursor) VALUES (?, ?) ON CONFLICT(peer) DO UPDATE SET cursor = excluded.cursor'),
  };
}

export interface SchemaObject {
  type: string;
  name: string;
  tbl_name: string;
  sql: string | null;
}

/** A database's schema objects in a fixed order. */
export function schemaOf(db: Db): SchemaObject[] {
  return db.prepare('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name').all() as SchemaObject[];
}

export class SqliteTicketStore implements TicketStore {
  private db: Db;
  private stmts: ReturnType<typeof statements>;
  private readonly node: string;
  private pending: { ticket: Ticket; resolve: (t: Ticket) => void; reject: (e: Error) => void }[] = [];
  /**
   * Recently read or written tickets by full id. Every write goes through this object (one
   * process owns the database), so the cache is updated in the same step as the row.
   */
  private readonly cache = new Map<string, Ticket>();
  private readonly ftsQueue: FtsOp[] = [];
  readonly arrivals = new LateArrivals();

  constructor(private readonly file: string) {
    this.db = openDatabase(file);
    migrate(this.db, 'tickets', MIGRATIONS);
    this.stmts = statements(this.db);
    this.makeTransaction();
    this.stmts.setNode.run(randomUUID());
    this.node = (this.stmts.getNode.get() as { value: string }).value;
  }

  /**
   * A consistent copy of the whole database in `dest`, through SQLite's online backup (pages
   * copied a batch at a time, so requests keep being served meanwhile).
   */
  async backupTo(dest: string): Promise<void> {
    await this.db.backup(dest);
  }

  /** The schema objects (sqlite_master), to compare a snapshot's with. */
  schema(): SchemaObject[] {
    return schemaOf(this.db);
  }

  /**
   * Replaces this store's database by `snapshot` (checked and prepared by ticket-snapshot.ts),
   * only while this store holds no ticket and has none pending: the check and the swap run in
   * one synchronous step, so no write can fall between them. False, and nothing changed, when
   * the store is not empty.
   */
  adopt(snapshot: string): boolean {
    if (this.pending.length > 0 || this.db.prepare('SELECT 1 FROM tickets LIMIT 1').get() !== undefined) return false;
    this.db.close();
    for (const suffix of ['-wal', '-shm']) rmSync(this.file + suffix, { force: true });
    renameSync(snapshot, this.file);
    this.db = openDatabase(this.file);
    migrate(this.db, 'tickets', MIGRATIONS);
    this.stmts = statements(this.db);
    this.makeTransaction();
    this.prepared.clear();
    this.cache.clear();
    this.arrivals.forget();
    return true;
  }

  /** The stored ticket or tombstone of `id` with its comments and history, in the caller's transaction. */
  private storedItem(id: string): StoredItem | undefined {
    const live = this.stored(id);
    if (live) {
      const item = fromRow(live.row);
      if ((live.row.comment_count ?? 0) > 0) item.comments = this.stmts.commentsOf.all(id) as PeerComment[];
      if ((live.row.history_count ?? 0) > 0) item.history = this.stmts.historyOf.all(id) as HistoryEntry[];
      return { dead: false, stored: live, item };
    }
    const row = this.stmts.tombById.get(id) as TombRow | undefined;
    if (!row) return undefined;
    const history = row.history_count > 0 ? (this.stmts.historyOf.all(id) as HistoryEntry[]) : [];
    return { dead: true, seq: row.seq, row, item: { id, updated_at: row.updated_at, updated_by: row.updated_by, deleted: { at: row.deleted_at, by: row.deleted_by }, history } };
  }

  /** Brings the history rows of `id` from `before` to `after` (both in stored order); the number kept. */
  private writeHistory(id: string, before: HistoryEntry[] | undefined, after: HistoryEntry[] | undefined): number {
    const had = new Map<string, HistoryEntry>();
    const key = (e: HistoryEntry): string => JSON.stringify([e.at, e.by, e.field, historyTag(e)]);
    for (const e of before ?? []) had.set(key(e), e);
    for (const e of after ?? []) {
      const k = key(e);
      const old = had.get(k);
      had.delete(k);
      if (old !== undefined && old.from === e.from && old.to === e.to) continue;
      this.stmts.historyInsert.run(id, e.at, e.by, e.field, historyTag(e), e.from, e.to);
    }
    // Entries cut by MAX_HISTORY (the oldest).
    for (const e of had.values()) this.stmts.historyDeleteOne.run(id, e.at, e.by, e.field, historyTag(e));
    return after?.length ?? 0;
  }

  /**
   * Writes a ticket or tombstone in the caller's transaction, replacing what `stored` holds: a
   * ticket's row (write), its new comments and its history; a tombstone takes the ticket's row
   * out of the tickets table (its counts and FTS5 entry follow by trigger) and drops
   * its comments, keeping its history until the purge.
   */
  private writeItem(item: SyncItem, gotFrom: string | null, stored: StoredItem | undefined): void {
    if (!isTombstone(item)) {
      if (stored?.dead) throw new Error(`ticket ${item.id} is deleted`);
      const live = stored?.dead === false ? stored : undefined;
      this.write(item, gotFrom, live?.stored);
      const had = new Set((live?.item.comments ?? []).map((c) => c.id));
      for (const c of item.comments ?? []) if (!had.has(c.id)) this.stmts.commentInsert.run(item.id, c.id, c.body, c.author, c.created_at, c.by);
      const comments = Math.max(item.comments?.length ?? 0, live?.item.comments?.length ?? 0);
      const history = this.writeHistory(item.id, live?.item.history, item.history);
      if (comments !== (live?.stored.row.comment_count ?? 0) || history !== (live?.stored.row.history_count ?? 0)) this.stmts.setCounts.run(comments, history, item.id);
      return;
    }
    const ms = Date.parse(item.updated_at);
    if (!CANONICAL_STAMP.test(item.updated_at) || !CANONICAL_STAMP.test(item.deleted.at)) throw new Error(`tombstone ${item.id}: stamps must be canonical RFC 3339 UTC`);
    let seq: number;
    if (stored?.dead === false) {
      const old = stored.stored;
      // Its FTS5 entry goes with it: the row's delete trigger (tickets_ad, migration 1) removes it.
      this.stmts.rowDelete.run(old.row.id);
      this.stmts.commentsDelete.run(item.id);
      this.cache.delete(item.id);
    }
    const params = { id: item.id, updated_at: item.updated_at, updated_by: item.updated_by, deleted_at: item.deleted.at, deleted_by: item.deleted.by, got_from: gotFrom, history_count: item.history.length, ms };
    if (stored?.dead === true) {
      seq = stored.row.updated_at === item.updated_at ? stored.seq : this.freeSeq(ms, item.id);
      this.stmts.tombUpdate.run({ ...params, seq });
    } else {
      seq = this.freeSeq(ms, item.id);
      this.stmts.tombInsert.run({ ...params, seq });
    }
    this.writeHistory(item.id, stored?.item.history, item.history);
  }

  /** The stored row of `id` and its seq, read inside the caller's transaction. */
  private stored(id: string): Stored | undefined {
    const r = this.stmts.byId.get(id) as (Row & { seq: number }) | undefined;
    return r ? { row: r, seq: r.seq } : undefined;
  }

  /**
   * Writes `t`'s row in the caller's transaction, at the key of its stamp: a ticket whose
   * millisecond did not change keeps its key; otherwise the first free seq from the id's hash.
   * Its FTS5 entry is queued for `inTransaction` to write after every row (see FtsOp).
   */
  private write(t: Ticket, gotFrom: string | null, stored: Stored | undefined): void {
    const p = toParams(t, gotFrom);
    const ms = Date.parse(t.updated_at);
    const sameMs = stored !== undefined && stored.row.updated_at === t.updated_at;
    const seq = sameMs ? stored.seq : this.freeSeq(ms, t.id);
    const keyed = { ...p, ms, seq };
    if (!stored) {
      this.stmts.insert.run(keyed);
      this.ftsQueue.push({ op: 'insert', ms, seq, title: t.title, description: t.description });
      return;
    }
    this.stmts.update.run(keyed);
    if (sameMs && stored.row.title === t.title && stored.row.description === t.description) return;
    const old = stored.row;
    this.ftsQueue.push({ op: 'delete', ms: Date.parse(old.updated_at), seq: stored.seq, title: old.title, description: old.description });
    this.ftsQueue.push({ op: 'insert', ms, seq, title: t.title, description: t.description });
  }

  /**
   * Runs `body` in one transaction and then writes the FTS5 entries its rows queued, in order.
   * FTS5 flushes its pending terms to a new segment whenever a statement opens a savepoint
   * after it joined the transaction, and a row write (with its count triggers) opens one: FTS5
   * written between rows cost 99-130 µs a ticket, written after them 37.
   */
  private inTransaction<T>(body: () => T): T {
    this.ftsQueue.length = 0;
    try {
      return this.transaction(body) as T;
    } finally {
      this.ftsQueue.length = 0;
    }
  }

  /**
   * inTransaction's better-sqlite3 transaction, made once per connection: `db.transaction(fn)`
   * builds its wrapper and variants at each call, 6-7 µs, once a batch of new tickets and once
   * every edit (bench/README.md, "One line at the answer, issue 37").
   */
  private transaction!: (body: () => unknown) => unknown;

  private makeTransaction(): void {
    this.transaction = this.db.transaction((body: () => unknown) => {
      const result = body();
      for (const e of this.ftsQueue) (e.op === 'insert' ? this.stmts.ftsInsert : this.stmts.ftsDelete).run(e);
      return result;
    });
  }

  private freeSeq(ms: number, id: string): number {
    const start = seqStart(id);
    for (let i = 0; i < ORDER_KEY; i++) {
      const seq = (start + i) % ORDER_KEY;
      if (this.stmts.keyTaken.get({ ms, seq }) === undefined) return seq;
    }
    throw new Error(`more than ${ORDER_KEY} tickets share the stamp of ticket ${id}`);
  }

  async nodeId(): Promise<string> {
    return this.node;
  }

  /**
   * Group commit: inserts made in the same turn of the event loop share one transaction
   * (one WAL commit, one FTS5 flush), which is what makes concurrent creates cheap. Each
   * caller still hears back only after its row is committed.
   */
  insert(ticket: Ticket): Promise<Ticket> {
    return new Promise((resolve, reject) => {
      this.pending.push({ ticket, resolve, reject });
      if (this.pending.length === 1) setImmediate(() => this.flushInserts());
    });
  }

  private flushInserts(): void {
    const batch = this.pending.splice(0);
    if (batch.length === 0 || !this.db.open) {
      for (const p of batch) p.reject(new Error('the ticket store is closed'));
      return;
    }
    try {
      this.inTransaction(() => {
        for (const p of batch) this.write(p.ticket, null, this.stored(p.ticket.id));
      });
      for (const p of batch) p.resolve(this.remember(p.ticket));
    } catch {
      // One bad row must not fail its neighbours: retry each on its own.
      for (const p of batch) {
        try {
          this.inTransaction(() => this.write(p.ticket, null, this.stored(p.ticket.id)));
          p.resolve(this.remember(p.ticket));
        } catch (err) {
          p.reject(err as Error);
        }
      }
    }
  }

  private remember(t: Ticket): Ticket {
    this.cache.delete(t.id);
    if (t.comments !== undefined || t.history !== undefined) {
      // The cache serves lookups, which show comment_count only: the sets stay in their tables.
      t = ticketView(t, t.comments?.length ?? t.comment_count ?? 0);
    }
    this.cache.set(t.id, t);
    dropOldest(this.cache, CACHE_SIZE);
    return t;
  }

  /** The ticket held in memory under this full id (lower case), if any: no statement, no promise. */
  cached(id: string): Ticket | undefined {
    return this.cache.get(id);
  }

  async lookup(idOrPrefix: string): Promise<Lookup> {
    const key = idOrPrefix.trim().toLowerCase();
    const cached = this.cache.get(key);
    if (cached) return { kind: 'found', ticket: cached };
    const exact = this.stmts.byId.get(key) as Row | undefined;
    if (exact) return { kind: 'found', ticket: this.remember(fromRow(exact)) };
    if (key.length < SHORT_ID_MIN || key.length >= 36) return { kind: 'none' };
    // Every id with this prefix sorts in [prefix, prefix + U+FFFF), so the primary key index answers.
    const range = [key, key + '\uffff'] as const;
    const rows = this.stmts.byPrefix.all(...range) as Row[];
    if (rows.length === 0) return { kind: 'none' };
    if (rows.length === 1) return { kind: 'found', ticket: fromRow(rows[0]!) };
    return { kind: 'ambiguous', matches: (this.stmts.countPrefix.get(...range) as { n: number }).n };
  }

  /** The WHERE clause and FROM of a filter, shared by pages and counts. */
  private filterSql(filter: TicketFilter): { from: string; where: string[]; params: unknown[] } {
    const where: string[] = [];
    const params: unknown[] = [];
    for (const col of ['status', 'priority', 'channel', 'source'] as const) {
      const v = filter[col];
      if (v !== undefined) {
        where.push(`t.${col} = ?`);
        params.push(v);
      }
    }
    for (const col of ['assignee', 'requester'] as const) {
      const m = filter[col];
      if (m === undefined) continue;
      if (m.kind === 'is') {
        where.push(`t.${col} = ?`);
        params.push(m.value);
      } else where.push(m.kind === 'none' ? `(t.${col} IS NULL OR t.${col} = '')` : `t.${col} <> ''`);
    }
    let from = 'tickets t';
    const q = filter.search !== undefined ? ftsQuery(filter.search) : undefined;
    if (q !== undefined) {
      from = 'tickets_fts f JOIN tickets t ON t.rowid = f.rowid';
      where.push('tickets_fts MATCH ?');
      params.push(q);
    }
    return { from, where, params };
  }

  /** Statements built from filters, by SQL text: a few dozen shapes at most. */
  private readonly prepared = new Map<string, Statement>();
  private prepare(sql: string): Statement {
    let st = this.prepared.get(sql);
    if (!st) {
      st = this.db.prepare(sql);
      this.prepared.set(sql, st);
    }
    return st;
  }

  async list(filter: TicketFilter, page: { limit: number; after?: ListPosition }): Promise<Page> {
    const { from, where, params } = this.filterSql(filter);
    // A search walks FTS5's doclists from the newest key (their rowid order is the list's);
    // other lists walk the table or the status and source indexes, which end in the rowid.
    const order = from.startsWith('tickets_fts') ? 'f.rowid' : 't.rowid';
    if (page.after) {
      // Keyset, not offset: a page starts after the last ticket shown, so tickets changing
      // meanwhile neither repeat nor push unchanged ones off the walk.
      where.push(`${order} < CAST(? AS INTEGER) * ${ORDER_KEY} + CAST(? AS INTEGER)`);
      params.push(Date.parse(page.after.updated_at), page.after.seq);
    }
    const cols = COLUMNS.split(', ').map((c) => `t.${c}`).join(', ');
    const sql = `SELECT ${cols}, t.comment_count, t.rowid & ${ORDER_KEY - 1} AS seq FROM ${from}${where.length ? ' WHERE ' + where.join(' AND ') : ''} ORDER BY ${order} DESC LIMIT ?`;
    const rows = this.prepare(sql).all(...params, page.limit + 1) as (Row & { seq: number })[];
    const more = rows.length > page.limit;
    const shown = rows.slice(0, page.limit);
    const last = shown[shown.length - 1];
    return { tickets: shown.map(fromRow), more, ...(more && last ? { next: { updated_at: last.updated_at, seq: last.seq } } : {}) };
  }

  async count(filter: TicketFilter): Promise<Count> {
    // No search and at most one equality filter: the running counts answer.
    const eq = COUNTED.filter((c) => filter[c] !== undefined);
    const q = filter.search !== undefined ? ftsQuery(filter.search) : undefined;
    if (q === undefined && eq.length <= 1 && filter.assignee === undefined && filter.requester === undefined) {
      const dim = eq[0];
      const row = this.stmts.counted.get(dim ?? '', dim === undefined ? '' : filter[dim]) as { n: number } | undefined;
      return { n: row?.n ?? 0, capped: false };
    }
    let n: number;
    if (q !== undefined && eq.length === 0) {
      // A search alone is counted in FTS5, without reading a ticket row.
      n = (this.stmts.searchCount.get(q, SEARCH_COUNT_MAX + 1) as { n: number }).n;
    } else {
      const { from, where, params } = this.filterSql(filter);
      const cap = q !== undefined ? ` LIMIT ${SEARCH_COUNT_MAX + 1}` : '';
      const inner = `SELECT 1 FROM ${from}${where.length ? ' WHERE ' + where.join(' AND ') : ''}${cap}`;
      n = (this.prepare(`SELECT count(*) AS n FROM (${inner})`).get(...params) as { n: number }).n;
    }
    return q !== undefined && n > SEARCH_COUNT_MAX ? { n: SEARCH_COUNT_MAX, capped: true } : { n, capped: false };
  }

  async update(id: string, edit: (current: Ticket) => Ticket | undefined): Promise<Ticket | undefined> {
    const result = this.inTransaction(() => {
      const stored = this.storedItem(id);
      if (!stored || stored.dead) return undefined;
      const current = stored.item;
      const next = edit(current);
      if (!next) return current;
      this.writeItem(next, null, stored);
      return next;
    });
    if (result) this.remember(result);
    return result;
  }

  async changedSince(since: string, opts: ChangesOptions): Promise<ChangesPage> {
    if (!CANONICAL_STAMP.test(since)) throw new Error('since must be a canonical RFC 3339 UTC stamp');
    const ms = Date.parse(since);
    const after = opts.split ? opts.after : undefined;
    const rows = (
      after !== undefined
        ? this.stmts.afterKey.iterate({ ms: Date.parse(after.updated_at), seq: after.seq })
        : opts.notFrom !== undefined
          ? this.stmts.sinceNotFrom.iterate({ ms, from: opts.notFrom })
          : this.stmts.since.iterate({ ms })
    ) as IterableIterator<ChangeRow>;
    const tickets: SyncItem[] = [];
    let bytes = 0;
    let full = false;
    let more = false;
    let last: ListPosition | undefined;
    for (const r of rows) {
      // Full: take the rest of the last stamp's group (unless split), then stop at the next stamp.
      if (full && (opts.split || r.updated_at !== tickets[tickets.length - 1]!.updated_at)) {
        more = true;
        break;
      }
      tickets.push(itemOf(r));
      last = { updated_at: r.updated_at, seq: r.seq };
      bytes += (r.title?.length ?? 0) + (r.description?.length ?? 0) + (r.tags?.length ?? 0) + (r.field_stamps?.length ?? 0) + (r.comments_json?.length ?? 0) + (r.history_json?.length ?? 0) + ROW_OVERHEAD_BYTES;
      if (tickets.length >= opts.limit || (opts.maxBytes !== undefined && bytes >= opts.maxBytes)) full = true;
    }
    // Leaving the loop early closes the statement's cursor (the iterator's return()).
    return { tickets, more, ...(opts.split && more && last ? { next: last } : {}) };
  }

  async merge(incoming: SyncItem[], combine: Combine, from?: string): Promise<MergeResult> {
    // Taken copies are dropped from the cache; a rolled-back transaction leaves it consistent.
    for (const t of incoming) this.cache.delete(t.id);
    return this.inTransaction(() => {
      const result: MergeResult = { accepted: 0, rejected: 0 };
      for (const t of incoming) {
        const stored = this.storedItem(t.id);
        const outcome = combine(t, stored?.item);
        if (outcome.kind === 'same') result.accepted++;
        else if (outcome.kind === 'keep') result.rejected++;
        else {
          try {
            this.writeItem(outcome.ticket, outcome.asSent ? (from ?? null) : null, stored);
            // Recorded even if the transaction then rolls back: a round re-reading too much loses nothing.
            this.arrivals.record(outcome.ticket.updated_at, outcome.asSent ? from : undefined);
            result.accepted++;
          } catch {
            result.rejected++;
          }
        }
      }
      return result;
    });
  }

  async addComment(ticketId: string, c: PeerComment): Promise<'added' | 'missing' | 'full'> {
    const result = this.inTransaction(() => {
      const stored = this.stored(ticketId);
      if (!stored) return 'missing' as const;
      const n = stored.row.comment_count ?? 0;
      if (n >= MAX_COMMENTS) return 'full' as const;
      this.stmts.commentInsert.run(ticketId, c.id, c.body, c.author, c.created_at, c.by);
      // The comment's stamp becomes the ticket's change stamp, so that it syncs.
      const t = fromRow(stored.row);
      if (c.created_at > t.updated_at || (c.created_at === t.updated_at && c.by > t.updated_by)) {
        t.updated_at = c.created_at;
        t.updated_by = c.by;
        this.write(t, null, stored);
      }
      this.stmts.setCounts.run(n + 1, stored.row.history_count ?? 0, ticketId);
      return 'added' as const;
    });
    this.cache.delete(ticketId);
    return result;
  }

  async comments(ticketId: string): Promise<PeerComment[]> {
    return this.stmts.commentsOf.all(ticketId) as PeerComment[];
  }

  async delete(id: string, stamp: FieldStamp): Promise<boolean> {
    const done = this.inTransaction(() => {
      const stored = this.storedItem(id);
      if (!stored || stored.dead) return false;
      const tomb: Tombstone = { id, updated_at: stamp[0], updated_by: stamp[1], deleted: { at: stamp[0], by: stamp[1] }, history: stored.item.history ?? [] };
      // The delete's stamp is the newest this node has issued; an older history entry's never passes it.
      for (const h of tomb.history) if (h.at > tomb.updated_at || (h.at === tomb.updated_at && h.by > tomb.updated_by)) [tomb.updated_at, tomb.updated_by] = [h.at, h.by];
      this.writeItem(tomb, null, stored);
      return true;
    });
    this.cache.delete(id);
    return done;
  }

  async history(id: string, page: { limit: number; before?: HistoryPosition }): Promise<{ entries: HistoryView[]; next?: HistoryPosition; deleted: boolean } | undefined> {
    const stored = this.storedItem(id);
    if (!stored) return undefined;
    const recorded = stored.item.history ?? [];
    const lost = lostEntries(recorded);
    const all: HistoryView[] = recorded.map((e) => (lost.has(e) ? { ...e, lost: true as const } : e));
    if (stored.dead) {
      all.push({ field: 'deleted', from: null, to: null, at: stored.item.deleted.at, by: stored.item.deleted.by });
    } else {
      const t = stored.item;
      const firstTitle = recorded.find((e) => e.field === 'title');
      const base = t.field_stamps?.base;
      all.push({ field: 'created', from: null, to: firstTitle ? firstTitle.from : t.title, at: t.created_at, by: base && base[0] === t.created_at ? base[1] : '' });
      for (const c of t.comments ?? []) all.push({ field: 'comment', from: null, to: c.id, at: c.created_at, by: c.by });
    }
    const keyed = all.map((e) => ({ e, k: historyKey(e) }));
    keyed.sort((a, b) => compareKeys(b.k, a.k));
    if (stored.dead) {
      // The delete first, as the docs say, even past a concurrent edit stamped later.
      const at = keyed.findIndex((x) => x.e.field === 'deleted');
      keyed.unshift(...keyed.splice(at, 1));
    }
    let start = 0;
    if (page.before !== undefined) {
      const before = page.before;
      const at = keyed.findIndex((x) => compareKeys(x.k, before) === 0);
      start = at >= 0 ? at + 1 : keyed.findIndex((x) => compareKeys(x.k, before) < 0);
      if (start < 0) start = keyed.length;
    }
    const shown = keyed.slice(start, start + page.limit);
    const more = start + page.limit < keyed.length;
    return { entries: shown.map((x) => x.e), deleted: stored.dead, ...(more && shown.length > 0 ? { next: shown[shown.length - 1]!.k } : {}) };
  }

  /** Deletes one tombstone with its history and receipts (inside the caller's transaction). */
  private purgeOne(id: string): void {
    this.stmts.tombDelete.run(id);
    this.stmts.historyDelete.run(id);
    this.stmts.seenDelete.run(id);
  }

  async purgeTombstones(through: string): Promise<number> {
    if (!CANONICAL_STAMP.test(through)) throw new Error('through must be a canonical RFC 3339 UTC stamp');
    return this.inTransaction(() => {
      const ids = (this.stmts.tombsThrough.all(through) as { id: string }[]).map((r) => r.id);
      for (const id of ids) this.purgeOne(id);
      return ids.length;
    });
  }

  async markReceived(peer: string, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    this.inTransaction(() => {
      for (const id of ids) this.stmts.seenInsert.run(peer, id);
    });
  }

  async purgeReceived(peers: string[]): Promise<number> {
    if (peers.length === 0) return 0;
    const want = [...new Set(peers)];
    return this.inTransaction(() => {
      const held = this.prepare(`SELECT id FROM tombstone_seen WHERE peer IN (${want.map(() => '?').join(', ')}) GROUP BY id HAVING count(*) = ?`).all(...want, want.length) as { id: string }[];
      for (const r of held) this.purgeOne(r.id);
      return held.length;
    });
  }

  async unseen(through: string, peers: string[]): Promise<{ n: number; peers: string[] }> {
    const ids = (this.stmts.tombsThrough.all(through) as { id: string }[]).map((r) => r.id);
    const lacking = new Set<string>();
    for (const id of ids) {
      const seen = new Set((this.stmts.seenBy.all(id) as { peer: string }[]).map((r) => r.peer));
      for (const p of peers) if (!seen.has(p)) lacking.add(p);
    }
    return { n: ids.length, peers: [...lacking] };
  }

  async newestUpdate(atMost: string): Promise<string | undefined> {
    if (!CANONICAL_STAMP.test(atMost)) throw new Error('atMost must be a canonical RFC 3339 UTC stamp');
    return (this.stmts.newest.get({ ms: Date.parse(atMost) }) as { updated_at: string | null } | undefined)?.updated_at ?? undefined;
  }

  async getCursor(peer: string): Promise<string | undefined> {
    return (this.stmts.getCursor.get(peer) as { cursor: string } | undefined)?.cursor;
  }

  async setCursor(peer: string, cursor: string): Promise<void> {
    if (!CANONICAL_STAMP.test(cursor)) throw new Error('a sync cursor must be a canonical RFC 3339 UTC stamp');
    this.stmts.setCursor.run(peer, cursor);
  }

  async close(): Promise<void> {
    this.flushInserts();
    if (this.db.open) this.db.close();
  }
}
