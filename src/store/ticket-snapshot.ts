// Checking and preparing a ticket database that a peer sent as a snapshot, before an empty
// node adopts it (SqliteTicketStore.adopt). The peer is trusted no further than with a pull
// page: the file's schema must be this node's object for object (a foreign trigger or view
// would run inside our database), every row must be a ticket this node would store from a
// pull (the caller's `screen`), its key must match its stamp, and every derived structure
// (indexes, the FTS5 index, running counts) is rebuilt here from the rows, not taken on trust.
import Database from 'better-sqlite3';
import type { HistoryEntry, PeerComment, Ticket, Tombstone } from '../schemas/tickets.js';
import { runInWorker, WorkerSqlError, type RunningJob, type WorkerStep } from './sqlite-worker.js';
import { COLUMNS, COUNTS_FILL, ORDER_KEY, TICKETS_SCHEMA_VERSION, fromRow, schemaOf, toParams, type Row, type SchemaObject } from './tickets.js';

export interface SnapshotExpectations {
  /** This node's schema objects (SqliteTicketStore.schema()). */
  schema: SchemaObject[];
  /** This node's id, written into the snapshot in place of the sender's. */
  nodeId: string;
  /** The ticket as this node would store it from a pull, or undefined to refuse the snapshot. */
  screen: (t: Ticket) => Ticket | undefined;
  /** The same for a tombstone; without it a snapshot holding tombstones is refused. */
  screenTombstone?: (t: Tombstone) => Tombstone | undefined;
  /** Rows screened between two turns of the event loop. */
  chunk?: number;
  /** Stops the work at once (the node stopping): the workers end and the call rejects. */
  signal?: AbortSignal;
}

export interface PreparedSnapshot {
  tickets: number;
  /** The greatest `updated_at` in the snapshot: where pulling from its sender resumes. */
  newest: string | undefined;
  /** How long each part took, ms (they overlap: see prepareSnapshot). */
  ms: { screen: number; check: number; rebuild: number };
}

/** Why a snapshot was refused; the node then pulls page by page instead. */
export class SnapshotRefused extends Error {
  override readonly name = 'SnapshotRefused';
}

const yieldTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Deep equality of JSON values, object keys in any order. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/**
 * Tags are a set: a node stores them in the order they came, a pull's screening sorts them. The
 * screened tags hold no repeat, so a stored array of another length repeats one (or lacks one).
 */
function sameSet(screened: string[], stored: unknown): boolean {
  if (!Array.isArray(stored) || stored.length !== screened.length) return false;
  const a = new Set(screened);
  const b = new Set(stored as unknown[]);
  return a.size === b.size && [...b].every((t) => typeof t === 'string' && a.has(t));
}

/** The columns a screened page reads, in order: the key's two parts, COLUMNS, then got_from. */
const STORED = COLUMNS.split(', ') as (keyof Row)[];
const FIRST = 2;
const UPDATED_AT = FIRST + STORED.indexOf('updated_at');

/** The row of a raw page as the store's Row (an object literal: cheaper than the driver's rows). */
function rowOf(a: unknown[]): Row {
  const r = {} as Record<string, unknown>;
  for (let i = 0; i < STORED.length; i++) r[STORED[i]!] = a[FIRST + i];
  return r as unknown as Row;
}

/**
 * Whether a raw row ([ms, seq, ...COLUMNS, got_from]) is a ticket this node would store as it
 * stands; else the reason it is not. Values compare as stored strings first: tags and field
 * stamps are parsed again only when their text differs (another tag order, another key order).
 */
function checkRow(a: unknown[], screen: SnapshotExpectations['screen'], sets: (id: string) => { comments: PeerComment[]; history: HistoryEntry[] }): string | undefined {
  const r = rowOf(a);
  let t: Ticket;
  try {
    t = fromRow(r);
  } catch {
    return 'a row whose tags or field stamps are not JSON';
  }
  // The comments and history count in the ticket's stamp: screened with it (their counts are checked apart).
  const { comments, history } = sets(r.id);
  if (comments.length > 0) t.comments = comments;
  if (history.length > 0) t.history = history;
  if (Date.parse(r.updated_at) !== a[0]) return 'a row stored under another stamp than its updated_at';
  const gotFrom = a[FIRST + STORED.length];
  if (gotFrom !== null && (typeof gotFrom !== 'string' || gotFrom.length > 100)) return 'a row with a malformed sender';
  const screened = screen(t);
  if (screened === undefined) return `ticket ${JSON.stringify(String(r.id).slice(0, 40))}, which this node would refuse from a pull`;
  const as = toParams(screened);
  for (const k of STORED) {
    const v = as[k];
    const stored = r[k];
    if (v === stored) continue;
    const same = k === 'tags' ? sameSet(JSON.parse(v as string) as string[], JSON.parse(stored as string) as unknown) : k === 'field_stamps' && sameJson(JSON.parse(v as string), JSON.parse(stored as string));
    if (!same) return `ticket ${JSON.stringify(String(r.id).slice(0, 40))}, whose ${k} is not as this node would store it`;
  }
  // The screening drops what a pull would not store (two rows under one key, derived entries,
  // more than the limits) and puts ids in their one form: then the rows are not as stored here.
  const ids = (list: { id: string }[] | undefined): string => (list ?? []).map((c) => c.id).join();
  if ((screened.history?.length ?? 0) !== history.length || ids(screened.comments) !== ids(comments)) return `ticket ${JSON.stringify(String(r.id).slice(0, 40))}, whose comments or history are not as this node would store them`;
  return undefined;
}

/** The FTS5 settings a rebuild runs under, removed after it (see rebuildSteps). */
const FTS_BUILD_SETTINGS = { hashsize: 64 * 1024 * 1024, automerge: 0 };

/**
 * The statements that make the file this node's: indexes and FTS5 rebuilt from the rows, the
 * counts recounted, the node id ours, no cursor of the sender's, our schema version. FTS5 is
 * rebuilt with 64 MiB of pending terms between flushes and no merging during the build (10 s
 * against 19 s for a million tickets: the default 1 MiB flushes hundreds of small segments
 * and merges them again and again); the sender's own FTS5 settings are dropped first and ours
 * after, so the node runs on the defaults, as one that pulled every ticket would.
 */
function rebuildSteps(nodeId: string): WorkerStep[] {
  const setting = (k: keyof typeof FTS_BUILD_SETTINGS): WorkerStep => ({ sql: `INSERT INTO tickets_fts (tickets_fts, rank) VALUES ('${k}', ${FTS_BUILD_SETTINGS[k]})` });
  return [
    { sql: 'REINDEX' },
    { sql: "DELETE FROM tickets_fts_config WHERE k <> 'version'", unsafe: true },
    setting('hashsize'),
    setting('automerge'),
    { sql: "INSERT INTO tickets_fts (tickets_fts) VALUES ('rebuild')" },
    { sql: "DELETE FROM tickets_fts_config WHERE k <> 'version'", unsafe: true },
    { sql: `DELETE FROM ticket_counts;\n${COUNTS_FILL}\nDELETE FROM peer_cursors;\nDELETE FROM tombstone_seen;\nDELETE FROM node;\nDELETE FROM schema_migrations;` },
    { sql: "INSERT INTO node (key, value) VALUES ('node_id', ?)", params: [nodeId] },
    { sql: `INSERT INTO schema_migrations (component, version) VALUES ('tickets', ${TICKETS_SCHEMA_VERSION})` },
  ];
}

/**
 * Every row screened (see checkRow), a chunk between two turns of the event loop. The pages
 * cover the whole 64-bit rowid range, not only the keys a stamp makes: a forged file may put
 * rows anywhere (at -2^40 they were once adopted unscreened), and every row it holds is kept.
 */
async function screenRows(db: Database.Database, expect: SnapshotExpectations, stopped: () => boolean): Promise<Omit<PreparedSnapshot, 'ms'>> {
  const chunk = expect.chunk ?? 2_000;
  const columns = `rowid >> 15, rowid & ${ORDER_KEY - 1}, ${COLUMNS}, got_from, comment_count, history_count FROM tickets`;
  const commentsOf = db.prepare('SELECT id, body, author, created_at, by FROM ticket_comments WHERE ticket_id = ? ORDER BY created_at, id');
  const historyOf = db.prepare('SELECT field, "from", "to", at, by FROM ticket_history WHERE ticket_id = ? ORDER BY at, by, field, tag');
  let counts: [unknown, unknown] = [0, 0];
  const sets = (id: string): { comments: PeerComment[]; history: HistoryEntry[] } => ({
    comments: counts[0] ? (commentsOf.all(id) as PeerComment[]) : [],
    history: counts[1] ? (historyOf.all(id) as HistoryEntry[]) : [],
  });
  // The first page has no lower bound; the next ones start past the last key read, rebuilt in
  // SQL from its two parts (exact for any rowid: a JavaScript number holds neither 2^63 nor -2^63).
  const first = db.prepare(`SELECT ${columns} ORDER BY rowid LIMIT ?`).raw(true);
  const after = db.prepare(`SELECT ${columns} WHERE rowid > CAST(? AS INTEGER) * ${ORDER_KEY} + CAST(? AS INTEGER) ORDER BY rowid LIMIT ?`).raw(true);
  let at: { ms: number; seq: number } | undefined;
  let tickets = 0;
  let newest: string | undefined;
  while (!stopped()) {
    let rows: unknown[][];
    try {
      rows = (at === undefined ? first.all(chunk) : after.all(at.ms, at.seq, chunk)) as typeof rows;
    } catch (err) {
      // Damaged pages, met here before quick_check (running meanwhile) reports them.
      throw new SnapshotRefused(`the snapshot is damaged: ${(err as Error).message}`);
    }
    for (const r of rows) {
      counts = [r[r.length - 2], r[r.length - 1]];
      const why = checkRow(r, expect.screen, sets);
      if (why !== undefined) throw new SnapshotRefused(`the snapshot holds ${why}`);
    }
    tickets += rows.length;
    const last = rows[rows.length - 1];
    if (last === undefined) break;
    newest = last[UPDATED_AT] as string;
    at = { ms: last[0] as number, seq: last[1] as number };
    await yieldTurn();
  }
  if (!stopped()) {
    const why = checkSets(db, expect);
    if (why !== undefined) throw new SnapshotRefused(`the snapshot holds ${why}`);
  }
  return { tickets, newest };
}

/**
 * The comment and history tables, and the tombstones: the counts on every ticket row are the
 * rows it owns (the screening read the sets by them), no comment or history row belongs to
 * nothing, and every tombstone is one this node would store from a pull, at the key of its stamp.
 */
function checkSets(db: Database.Database, expect: SnapshotExpectations): string | undefined {
  const bad = db
    .prepare(
      `SELECT (SELECT count(*) FROM tickets t WHERE comment_count <> (SELECT count(*) FROM ticket_comments c WHERE c.ticket_id = t.id)
          OR history_count <> (SELECT count(*) FROM ticket_history h WHERE h.ticket_id = t.id)) AS counts,
        (SELECT count(*) FROM ticket_comments WHERE ticket_id NOT IN (SELECT id FROM tickets)) AS comments,
        (SELECT count(*) FROM ticket_history WHERE ticket_id NOT IN (SELECT id FROM tickets UNION ALL SELECT id FROM ticket_tombstones)) AS history,
        (SELECT count(*) FROM ticket_history WHERE tag IS NOT (CASE WHEN field = 'tags' THEN coalesce("to", "from", '') ELSE '' END)) AS tags,
        (SELECT count(*) FROM ticket_tombstones WHERE id IN (SELECT id FROM tickets)) AS both,
        (SELECT count(*) FROM ticket_tombstones WHERE got_from IS NOT NULL AND (typeof(got_from) <> 'text' OR length(got_from) > 100)) AS senders`,
    )
    .get() as { counts: number; comments: number; history: number; tags: number; both: number; senders: number };
  if (bad.counts > 0) return 'tickets whose comment or history counts are not their rows';
  if (bad.comments > 0 || bad.history > 0) return 'comments or history of no ticket';
  // The tag column is part of a history row's key: one of another value would be a second entry under one key.
  if (bad.tags > 0) return 'history rows whose tag is not their entry\'s';
  // A ticket both live and deleted: the node would serve two items under one id.
  if (bad.both > 0) return 'a ticket that is also a tombstone';
  if (bad.senders > 0) return 'a tombstone with a malformed sender';
  const historyOf = db.prepare('SELECT field, "from", "to", at, by FROM ticket_history WHERE ticket_id = ? ORDER BY at, by, field, tag');
  const tombs = db.prepare(`SELECT key >> 15 AS ms, id, updated_at, updated_by, deleted_at, deleted_by, history_count FROM ticket_tombstones`).all() as {
    ms: number;
    id: string;
    updated_at: string;
    updated_by: string;
    deleted_at: string;
    deleted_by: string;
    history_count: number;
  }[];
  for (const t of tombs) {
    const history = historyOf.all(t.id) as HistoryEntry[];
    if (history.length !== t.history_count) return 'a tombstone whose history count is not its rows';
    const tomb: Tombstone = { id: t.id, updated_at: t.updated_at, updated_by: t.updated_by, deleted: { at: t.deleted_at, by: t.deleted_by }, history };
    const screened = expect.screenTombstone?.(tomb);
    if (screened === undefined || JSON.stringify(screened) !== JSON.stringify(tomb) || Date.parse(t.updated_at) !== t.ms) return `tombstone ${JSON.stringify(String(t.id).slice(0, 40))}, which this node would not store as it stands`;
  }
  return undefined;
}

/** The worker's failure as a refusal of the snapshot, when it is the file's fault. */
function refusal(what: string, err: unknown): Error {
  if (err instanceof WorkerSqlError) return new SnapshotRefused(`${what}: ${err.message}`);
  return err as Error;
}

/**
 * Checks `file` and prepares it for adoption: its node id becomes ours, its peer cursors are
 * dropped, its indexes, FTS5 index and counts are rebuilt. Throws SnapshotRefused (the file
 * is then of no use).
 *
 * Three things run at once, so that a million tickets take the longest of them, not the sum:
 * this thread screens the rows, a chunk at a time (the node keeps serving meanwhile); a worker
 * runs quick_check; once it passed, a second worker rebuilds (rebuildSteps). quick_check comes
 * before any write, because SQLite trusts the file's free-page list when it allocates: a page
 * listed as free but still in use by a table would be overwritten by the rebuild. The file is
 * in WAL mode throughout, so the screening reads the rows (which nothing writes) while the
 * rebuild writes indexes, and is switched back to a rollback journal at the end (one file to
 * move; adopt opens it in WAL mode again).
 */
export async function prepareSnapshot(file: string, expect: SnapshotExpectations): Promise<PreparedSnapshot> {
  let db: Database.Database;
  try {
    db = new Database(file, { fileMustExist: true });
  } catch (err) {
    throw new SnapshotRefused(`the snapshot is not an SQLite database: ${(err as Error).message}`);
  }
  const pragmas = ['trusted_schema = OFF'];
  const jobs: RunningJob[] = [];
  const ms = { screen: 0, check: 0, rebuild: 0 };
  let failed = false;
  // The statement a worker is in runs to its end (SQLite has no way in from another thread
  // here), so a stop waits for it: seconds, not the minutes of the whole preparation.
  const stop = (): void => {
    failed = true;
    for (const j of jobs) void j.stop();
  };
  expect.signal?.addEventListener('abort', stop, { once: true });
  try {
    if (expect.signal?.aborted) throw new Error('the snapshot was not prepared: the node is stopping');
    // Nothing in the file runs before its schema is known to be ours.
    db.pragma('trusted_schema = OFF');
    let schema: SchemaObject[];
    try {
      schema = schemaOf(db);
      db.pragma('journal_mode = WAL');
    } catch (err) {
      throw new SnapshotRefused(`the snapshot is not an SQLite database: ${(err as Error).message}`);
    }
    if (JSON.stringify(schema) !== JSON.stringify(expect.schema)) throw new SnapshotRefused("the snapshot's schema differs from this node's (another version of mkt?)");

    let counted = Number.NaN;
    const rebuilt = (async () => {
      // The rows counted here, off the event loop, must be the rows screened: one the
      // screening's pages missed would be adopted unchecked.
      const check = runInWorker({ file, pragmas: [...pragmas, 'query_only = ON'], steps: [{ sql: 'PRAGMA quick_check', rows: true }, { sql: 'SELECT count(*) FROM tickets', rows: true }] });
      jobs.push(check);
      let t = performance.now();
      const found = await check.done.catch((err: unknown) => {
        throw refusal('the snapshot is damaged', err);
      });
      const verdict = (found.rows[0] ?? []).map((r) => String(r[0]));
      if (verdict.length !== 1 || verdict[0] !== 'ok') throw new SnapshotRefused(`the snapshot is damaged: ${verdict.join('; ').slice(0, 200)}`);
      counted = Number(found.rows[1]?.[0]?.[0]);
      ms.check = performance.now() - t;
      if (failed) return;
      t = performance.now();
      const rebuild = runInWorker({ file, pragmas: [...pragmas, 'synchronous = OFF', 'cache_size = -65536'], transaction: true, steps: rebuildSteps(expect.nodeId) });
      jobs.push(rebuild);
      // Two rows with one id, say: the rebuilt unique index refuses them.
      await rebuild.done.catch((err: unknown) => {
        throw refusal("the snapshot's rows do not index", err);
      });
      ms.rebuild = performance.now() - t;
    })();
    const started = performance.now();
    const screened = screenRows(db, expect, () => failed).then((r) => {
      ms.screen = performance.now() - started;
      return r;
    });
    const [prepared] = await Promise.all([screened, rebuilt]).catch(async (err: unknown) => {
      failed = true;
      await Promise.allSettled([screened, rebuilt, ...jobs.map((j) => j.stop())]);
      throw err;
    });
    // Stopped with nothing failing: the rebuild may not have run, so the file is of no use.
    if (failed) throw new Error('the snapshot was not prepared: the node is stopping');
    if (prepared.tickets !== counted) throw new SnapshotRefused(`the snapshot holds ${counted} rows, of which ${prepared.tickets} were screened`);
    db.pragma('journal_mode = DELETE');
    return { ...prepared, ms };
  } finally {
    expect.signal?.removeEventListener('abort', stop);
    db.close();
  }
}
