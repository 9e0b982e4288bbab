// TicketStore: the ticket tracker's storage — tickets with an FTS5 index over title and
// description, the node identity, and per-peer sync cursors. Interface first, SQLite below.
import { randomUUID } from 'node:crypto';
import type { Ticket, Status, Priority, Channel, FieldStamps } from '../schemas/tickets.js';
import type { Statement } from 'better-sqlite3';
import { migrate, openDatabase, type Db } from './sqlite.js';

export interface TicketFilter {
  status?: Status;
  priority?: Priority;
  channel?: Channel;
  source?: string;
  /** Words that must all occur in the title or description (prefix match). */
  search?: string;
}

export type Lookup = { kind: 'found'; ticket: Ticket } | { kind: 'none' } | { kind: 'ambiguous'; matches: number };

/** Where a list page starts: after this ticket in newest-change-first order. */
export interface ListPosition {
  updated_at: string;
  id: string;
}

export interface Page {
  tickets: Ticket[];
  /** True when more tickets follow the last one on this page. */
  more: boolean;
}

/**
 * What to do with a peer's copy given the stored one: `keep` (it lost), `same` (already
 * held), or `store` this ticket; `asSent` marks a stored ticket equal to the copy received.
 */
export type Combine = (incoming: Ticket, stored: Ticket | undefined) => { kind: 'keep' } | { kind: 'same' } | { kind: 'store'; ticket: Ticket; asSent: boolean };

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
}

export interface TicketStore {
  /** Generated on first open, then the same for the life of the database. */
  nodeId(): Promise<string>;
  insert(ticket: Ticket): Promise<Ticket>;
  /** A full id, or a prefix of at least 8 characters that matches one ticket. */
  lookup(idOrPrefix: string): Promise<Lookup>;
  /** One page, newest change first (`updated_at`, then `id`, both descending). */
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
   * then `id`). A page never ends inside a group of tickets sharing one `updated_at`, so a
   * reader whose next `since` is the greatest stamp seen skips nothing. Every stamp stored
   * and `since` itself are canonical (`YYYY-MM-DDTHH:MM:SS.sssZ`, years 1970-9999): fixed
   * width and UTC, so text order is instant order; writes of any other form are refused.
   */
  changedSince(since: string, opts: ChangesOptions): Promise<Page>;
  /**
   * Offers peer copies in one transaction; `combine` settles each against the stored ticket.
   * `from` is the sending node's id, remembered on tickets stored exactly as it sent them.
   */
  merge(incoming: Ticket[], combine: Combine, from?: string): Promise<MergeResult>;
  /** The greatest `updated_at` stored no later than `atMost` (canonical), for the hybrid clock. */
  newestUpdate(atMost: string): Promise<string | undefined>;
  getCursor(peer: string): Promise<string | undefined>;
  setCursor(peer: string, cursor: string): Promise<void>;
  close(): Promise<void>;
}

/** A canonical stamp, `YYYY-MM-DDTHH:MM:SS.sssZ`, as an SQLite GLOB. */
const STAMP_GLOB = '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z';

/** The columns whose values ticket_counts counts (besides the total, dim ''). */
const COUNTED = ['status', 'priority', 'channel', 'source'] as const;
const COUNTS_MIGRATION = `CREATE TABLE ticket_counts (dim TEXT NOT NULL, value TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (dim, value)) WITHOUT ROWID;
   INSERT INTO ticket_counts SELECT '', '', count(*) FROM tickets;
${COUNTED.map((d) => `   INSERT INTO ticket_counts SELECT '${d}', ${d}, count(*) FROM tickets GROUP BY ${d};`).join('\n')}
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
];

/** The only stamp form stored (see `changedSince`). */
const CANONICAL_STAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function checkStamps(t: Ticket): void {
  if (!CANONICAL_STAMP.test(t.updated_at) || !CANONICAL_STAMP.test(t.created_at)) throw new Error(`ticket ${t.id}: stamps must be canonical RFC 3339 UTC`);
}

interface Row {
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
}

function fromRow(r: Row): Ticket {
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
  };
}

function toParams(t: Ticket, gotFrom: string | null = null): Row {
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

/**
 * Turns user words into an FTS5 query: every word must match, as a prefix, quoted literally.
 * Control characters split words as whitespace does: the tokenizer treats them as separators
 * anyway, and FTS5's query parser reads a NUL as the end of the query ("unterminated string").
 */
export function ftsQuery(search: string): string | undefined {
  const words = search.split(/[\s\p{Cc}]+/u).filter((w) => w.length > 0);
  if (words.length === 0) return undefined;
  return words.map((w) => `"${w.replace(/"/g, '""')}"*`).join(' ');
}

const CACHE_SIZE = 10_000;
const COLUMNS = 'id, title, description, status, priority, channel, source, requester, assignee, tags, created_at, updated_at, updated_by, field_stamps';
const UPSERT = `INSERT INTO tickets (${COLUMNS}, got_from) VALUES (@id, @title, @description, @status, @priority, @channel, @source, @requester, @assignee, @tags, @created_at, @updated_at, @updated_by, @field_stamps, @got_from)
  ON CONFLICT(id) DO UPDATE SET title = excluded.title, description = excluded.description, status = excluded.status,
    priority = excluded.priority, channel = excluded.channel, source = excluded.source, requester = excluded.requester,
    assignee = excluded.assignee, tags = excluded.tags, created_at = excluded.created_at, updated_at = excluded.updated_at,
    updated_by = excluded.updated_by, field_stamps = excluded.field_stamps, got_from = excluded.got_from`;
/** Searches matching more tickets than this walk the newest-change index instead of sorting. */
const SEARCH_SORT_MAX = 20_000;
/**
 * A search counts its matches up to this many (GitLab caps its counts the same way): counting
 * every match of a word found in half of a million tickets would cost more than the page.
 */
export const SEARCH_COUNT_MAX = 10_000;
/** Text bytes a page counts per ticket besides its title and description (fields, stamps, JSON). */
const ROW_OVERHEAD_BYTES = 400;

export class SqliteTicketStore implements TicketStore {
  private readonly db: Db;
  private readonly stmts;
  private readonly node: string;
  private pending: { ticket: Ticket; resolve: (t: Ticket) => void; reject: (e: Error) => void }[] = [];
  /**
   * Recently read or written tickets by full id. Every write goes through this object (one
   * process owns the database), so the cache is updated in the same step as the row.
   */
  private readonly cache = new Map<string, Ticket>();

  constructor(file: string) {
    this.db = openDatabase(file);
    migrate(this.db, 'tickets', MIGRATIONS);
    const db = this.db;
    this.stmts = {
      upsert: db.prepare(UPSERT),
      byId: db.prepare(`SELECT ${COLUMNS} FROM tickets WHERE id = ?`),
      byPrefix: db.prepare(`SELECT ${COLUMNS} FROM tickets WHERE id >= ? AND id < ? ORDER BY id LIMIT 2`),
      countPrefix: db.prepare('SELECT count(*) AS n FROM tickets WHERE id >= ? AND id < ?'),
      since: db.prepare(`SELECT ${COLUMNS} FROM tickets WHERE updated_at > ? ORDER BY updated_at, id`),
      sinceNotFrom: db.prepare(`SELECT ${COLUMNS} FROM tickets WHERE updated_at > ? AND (got_from IS NULL OR got_from <> ?) ORDER BY updated_at, id`),
      newest: db.prepare('SELECT max(updated_at) AS m FROM tickets WHERE updated_at <= ?'),
      counted: db.prepare('SELECT n FROM ticket_counts WHERE dim = ? AND value = ?'),
      searchProbe: db.prepare('SELECT count(*) AS n FROM (SELECT rowid FROM tickets_fts WHERE tickets_fts MATCH ? LIMIT ?)'),
      getNode: db.prepare("SELECT value FROM node WHERE key = 'node_id'"),
      setNode: db.prepare("INSERT OR IGNORE INTO node (key, value) VALUES ('node_id', ?)"),
      getCursor: db.prepare('SELECT cursor FROM peer_cursors WHERE peer = ?'),
      setCursor: db.prepare('INSERT INTO peer_cursors (peer, cursor) VALUES (?, ?) ON CONFLICT(peer) DO UPDATE SET cursor = excluded.cursor'),
    };
    this.stmts.setNode.run(randomUUID());
    this.node = (this.stmts.getNode.get() as { value: string }).value;
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
      this.db.transaction(() => {
        for (const p of batch) this.stmts.upsert.run(toParams(p.ticket));
      })();
      for (const p of batch) p.resolve(this.remember(p.ticket));
    } catch {
      // One bad row must not fail its neighbours: retry each on its own.
      for (const p of batch) {
        try {
          this.stmts.upsert.run(toParams(p.ticket));
          p.resolve(this.remember(p.ticket));
        } catch (err) {
          p.reject(err as Error);
        }
      }
    }
  }

  private remember(t: Ticket): Ticket {
    this.cache.delete(t.id);
    this.cache.set(t.id, t);
    if (this.cache.size > CACHE_SIZE) this.cache.delete(this.cache.keys().next().value as string);
    return t;
  }

  async lookup(idOrPrefix: string): Promise<Lookup> {
    const key = idOrPrefix.trim().toLowerCase();
    const cached = this.cache.get(key);
    if (cached) return { kind: 'found', ticket: cached };
    const exact = this.stmts.byId.get(key) as Row | undefined;
    if (exact) return { kind: 'found', ticket: this.remember(fromRow(exact)) };
    if (key.length < 8 || key.length >= 36) return { kind: 'none' };
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
    const q = filter.search !== undefined ? ftsQuery(filter.search) : undefined;
    let source = from;
    if (q !== undefined && this.commonSearch(q)) {
      // A search matching many tickets: walk the newest-change index and keep the matches
      // (the match set is built once), rather than fetch and sort every match.
      source = 'tickets t INDEXED BY tickets_updated';
      where.splice(where.indexOf('tickets_fts MATCH ?'), 1, 't.rowid IN (SELECT rowid FROM tickets_fts WHERE tickets_fts MATCH ?)');
    }
    if (page.after) {
      // Keyset, not offset: a page starts after the last ticket shown, so tickets changing
      // meanwhile neither repeat nor push unchanged ones off the walk.
      where.push('(t.updated_at, t.id) < (?, ?)');
      params.push(page.after.updated_at, page.after.id);
    }
    const cols = COLUMNS.split(', ').map((c) => `t.${c}`).join(', ');
    const sql = `SELECT ${cols} FROM ${source}${where.length ? ' WHERE ' + where.join(' AND ') : ''} ORDER BY t.updated_at DESC, t.id DESC LIMIT ?`;
    const rows = this.prepare(sql).all(...params, page.limit + 1) as Row[];
    const more = rows.length > page.limit;
    return { tickets: rows.slice(0, page.limit).map(fromRow), more };
  }

  /** Whether an FTS5 query matches more than SEARCH_SORT_MAX tickets (reading no further). */
  private commonSearch(q: string): boolean {
    return (this.stmts.searchProbe.get(q, SEARCH_SORT_MAX + 1) as { n: number }).n > SEARCH_SORT_MAX;
  }

  async count(filter: TicketFilter): Promise<Count> {
    // No search and at most one equality filter: the running counts answer.
    const eq = COUNTED.filter((c) => filter[c] !== undefined);
    const q = filter.search !== undefined ? ftsQuery(filter.search) : undefined;
    if (q === undefined && eq.length <= 1) {
      const dim = eq[0];
      const row = this.stmts.counted.get(dim ?? '', dim === undefined ? '' : filter[dim]) as { n: number } | undefined;
      return { n: row?.n ?? 0, capped: false };
    }
    const { from, where, params } = this.filterSql(filter);
    const cap = q !== undefined ? SEARCH_COUNT_MAX : undefined;
    const inner = `SELECT 1 FROM ${from}${where.length ? ' WHERE ' + where.join(' AND ') : ''}${cap !== undefined ? ` LIMIT ${cap + 1}` : ''}`;
    const n = (this.prepare(`SELECT count(*) AS n FROM (${inner})`).get(...params) as { n: number }).n;
    return cap !== undefined && n > cap ? { n: cap, capped: true } : { n, capped: false };
  }

  async update(id: string, edit: (current: Ticket) => Ticket | undefined): Promise<Ticket | undefined> {
    const result = this.db.transaction(() => {
      const row = this.stmts.byId.get(id) as Row | undefined;
      if (!row) return undefined;
      const current = fromRow(row);
      const next = edit(current);
      if (!next) return current;
      this.stmts.upsert.run(toParams(next));
      return next;
    })();
    if (result) this.remember(result);
    return result;
  }

  async changedSince(since: string, opts: ChangesOptions): Promise<Page> {
    const rows = (opts.notFrom !== undefined ? this.stmts.sinceNotFrom.iterate(since, opts.notFrom) : this.stmts.since.iterate(since)) as IterableIterator<Row>;
    const tickets: Ticket[] = [];
    let bytes = 0;
    let full = false;
    let more = false;
    for (const r of rows) {
      // Full: take the rest of the last stamp's group, then stop at the next stamp.
      if (full && r.updated_at !== tickets[tickets.length - 1]!.updated_at) {
        more = true;
        break;
      }
      tickets.push(fromRow(r));
      bytes += r.title.length + r.description.length + r.tags.length + r.field_stamps.length + ROW_OVERHEAD_BYTES;
      if (tickets.length >= opts.limit || (opts.maxBytes !== undefined && bytes >= opts.maxBytes)) full = true;
    }
    // Leaving the loop early closes the statement's cursor (the iterator's return()).
    return { tickets, more };
  }

  async merge(incoming: Ticket[], combine: Combine, from?: string): Promise<MergeResult> {
    // Taken copies are dropped from the cache; a rolled-back transaction leaves it consistent.
    for (const t of incoming) this.cache.delete(t.id);
    return this.db.transaction(() => {
      const result: MergeResult = { accepted: 0, rejected: 0 };
      for (const t of incoming) {
        const row = this.stmts.byId.get(t.id) as Row | undefined;
        const outcome = combine(t, row ? fromRow(row) : undefined);
        if (outcome.kind === 'same') result.accepted++;
        else if (outcome.kind === 'keep') result.rejected++;
        else {
          try {
            this.stmts.upsert.run(toParams(outcome.ticket, outcome.asSent ? (from ?? null) : null));
            result.accepted++;
          } catch {
            result.rejected++;
          }
        }
      }
      return result;
    })();
  }

  async newestUpdate(atMost: string): Promise<string | undefined> {
    return (this.stmts.newest.get(atMost) as { m: string | null }).m ?? undefined;
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
