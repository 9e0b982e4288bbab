// Checking and preparing a ticket database that a peer sent as a snapshot, before an empty
// node adopts it (SqliteTicketStore.adopt). The peer is trusted no further than with a pull
// page: the file's schema must be this node's object for object (a foreign trigger or view
// would run inside our database), every row must be a ticket this node would store from a
// pull (the caller's `screen`), its key must match its stamp, and every derived structure
// (indexes, the FTS5 index, running counts) is rebuilt here from the rows, not taken on trust.
import Database from 'better-sqlite3';
import type { Ticket } from '../schemas/tickets.js';
import { COLUMNS, COUNTS_FILL, ORDER_KEY, fromRow, schemaOf, toParams, type Row, type SchemaObject } from './tickets.js';

export interface SnapshotExpectations {
  /** This node's schema objects (SqliteTicketStore.schema()). */
  schema: SchemaObject[];
  /** This node's id, written into the snapshot in place of the sender's. */
  nodeId: string;
  /** The ticket as this node would store it from a pull, or undefined to refuse the snapshot. */
  screen: (t: Ticket) => Ticket | undefined;
  /** Rows checked (and FTS5 entries built) between two turns of the event loop. */
  chunk?: number;
}

export interface PreparedSnapshot {
  tickets: number;
  /** The greatest `updated_at` in the snapshot: where pulling from its sender resumes. */
  newest: string | undefined;
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

/** Tags are a set: a node stores them in the order they came, a pull's screening sorts them. */
function sameSet(screened: string[], stored: unknown): boolean {
  if (!Array.isArray(stored)) return false;
  const a = new Set(screened);
  const b = new Set(stored as unknown[]);
  return a.size === b.size && [...b].every((t) => typeof t === 'string' && a.has(t));
}

/** Whether the row is a ticket this node would store as it stands; else the reason it is not. */
function checkRow(r: Row & { ms: number; got_from: string | null }, screen: SnapshotExpectations['screen']): string | undefined {
  let t: Ticket;
  try {
    t = fromRow(r);
  } catch {
    return 'a row whose tags or field stamps are not JSON';
  }
  if (Date.parse(r.updated_at) !== r.ms) return 'a row stored under another stamp than its updated_at';
  if (r.got_from !== null && (typeof r.got_from !== 'string' || r.got_from.length > 100)) return 'a row with a malformed sender';
  const screened = screen(t);
  if (screened === undefined) return `ticket ${JSON.stringify(String(r.id).slice(0, 40))}, which this node would refuse from a pull`;
  const as = toParams(screened);
  for (const [k, v] of Object.entries(as)) {
    if (k === 'got_from') continue;
    const stored = (r as unknown as Record<string, unknown>)[k];
    const same = k === 'tags' ? sameSet(JSON.parse(v as string) as string[], JSON.parse(stored as string) as unknown) : k === 'field_stamps' ? sameJson(JSON.parse(v as string), JSON.parse(stored as string)) : v === stored;
    if (!same) return `ticket ${JSON.stringify(String(r.id).slice(0, 40))}, whose ${k} is not as this node would store it`;
  }
  return undefined;
}

/**
 * Checks `file` and prepares it for adoption: its node id becomes ours, its peer cursors are
 * dropped, its indexes, FTS5 index and counts are rebuilt. Throws SnapshotRefused (the file
 * is then of no use). Rows are read a chunk at a time, so the node keeps serving meanwhile;
 * REINDEX is one statement (about 3 s for a million tickets).
 */
export async function prepareSnapshot(file: string, expect: SnapshotExpectations): Promise<PreparedSnapshot> {
  const chunk = expect.chunk ?? 20_000;
  let db: Database.Database;
  try {
    db = new Database(file, { fileMustExist: true });
  } catch (err) {
    throw new SnapshotRefused(`the snapshot is not an SQLite database: ${(err as Error).message}`);
  }
  try {
    // Nothing in the file runs before its schema is known to be ours.
    db.pragma('trusted_schema = OFF');
    let check: unknown;
    try {
      check = db.pragma('quick_check', { simple: true });
    } catch (err) {
      throw new SnapshotRefused(`the snapshot is not an SQLite database: ${(err as Error).message}`);
    }
    if (check !== 'ok') throw new SnapshotRefused(`the snapshot is damaged: ${String(check).slice(0, 200)}`);
    if (JSON.stringify(schemaOf(db)) !== JSON.stringify(expect.schema)) throw new SnapshotRefused("the snapshot's schema differs from this node's (another version of mkt?)");

    const page = db.prepare(
      `SELECT rowid >> 15 AS ms, rowid & ${ORDER_KEY - 1} AS seq, ${COLUMNS}, got_from FROM tickets
       WHERE rowid > CAST(? AS INTEGER) * ${ORDER_KEY} + CAST(? AS INTEGER) ORDER BY rowid LIMIT ?`,
    );
    // Keyset pages from below the least key (stamps are 1970 or later: ms >= 0).
    let at = { ms: -1, seq: 0 };
    let tickets = 0;
    let newest: string | undefined;
    for (;;) {
      const rows = page.all(at.ms, at.seq, chunk) as (Row & { ms: number; seq: number; got_from: string | null })[];
      for (const r of rows) {
        const why = checkRow(r, expect.screen);
        if (why !== undefined) throw new SnapshotRefused(`the snapshot holds ${why}`);
      }
      tickets += rows.length;
      const last = rows[rows.length - 1];
      if (last === undefined) break;
      newest = last.updated_at;
      at = { ms: last.ms, seq: last.seq };
      await yieldTurn();
    }

    try {
      db.transaction(() => {
        db.exec(`REINDEX;
          INSERT INTO tickets_fts (tickets_fts) VALUES ('delete-all');
          DELETE FROM ticket_counts;
          ${COUNTS_FILL}
          DELETE FROM peer_cursors;
          DELETE FROM node;`);
        db.prepare("INSERT INTO node (key, value) VALUES ('node_id', ?)").run(expect.nodeId);
      })();
    } catch (err) {
      // Two rows with one id, say: the rebuilt unique index refuses them.
      throw new SnapshotRefused(`the snapshot's rows do not index: ${(err as Error).message}`);
    }
    // FTS5 entries for every row, a chunk per transaction, oldest key first.
    const fts = db.prepare(`INSERT INTO tickets_fts (rowid, title, description)
      SELECT rowid, title, description FROM tickets
      WHERE rowid > coalesce((SELECT max(id) FROM tickets_fts_docsize), -1) ORDER BY rowid LIMIT ?`);
    while (fts.run(chunk).changes > 0) await yieldTurn();
    // One file to move: the log folded in and switched off (adopt opens it in WAL mode again).
    db.pragma('journal_mode = DELETE');
    return { tickets, newest };
  } finally {
    db.close();
  }
}
