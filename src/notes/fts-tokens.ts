// Tokenizes text exactly as the SQLite notes index does (FTS5 `unicode61 remove_diacritics 2`),
// by asking FTS5 itself: an in-memory FTS5 table and its fts5vocab `instance` view give each
// token, folded, in order. The PostgreSQL index stores and queries these tokens, so both engines
// split `parse_config`, `foo.bar`, `v2.1`, hyphens and non-ASCII text the same way by
// construction rather than by a re-implementation of unicode61's Unicode 6.1 tables in JS.
import Database from 'better-sqlite3';

/** The tokenizer the SQLite index declares (src/store/notes-sql.ts); change both together. */
export const FTS5_TOKENIZER = 'unicode61 remove_diacritics 2';

let db: Database.Database | undefined;
let insert: Database.Statement<unknown[]>;
let read: Database.Statement<unknown[]>;
let clear: Database.Statement<unknown[]>;

function open(): void {
  db = new Database(':memory:');
  db.exec(`CREATE VIRTUAL TABLE t USING fts5(x, tokenize='${FTS5_TOKENIZER}');
    CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');`);
  insert = db.prepare('INSERT INTO t (rowid, x) VALUES (?, ?)');
  read = db.prepare('SELECT doc, "offset" AS pos, term FROM v');
  clear = db.prepare('DELETE FROM t');
}

/** The tokens of each text, in order (one array per text). */
export function ftsTokens(texts: readonly string[]): string[][] {
  if (!db) open();
  const out: string[][] = texts.map(() => []);
  const run = db!.transaction(() => {
    texts.forEach((t, i) => insert.run(i + 1, t));
    const rows = read.all() as { doc: number; pos: number; term: string }[];
    clear.run();
    return rows;
  });
  for (const r of run()) out[r.doc - 1]![r.pos] = r.term;
  return out;
}

/**
 * FTS5's own snippet of each text for a MATCH expression (the SQLite index's `snippet(…, 16)`),
 * so search hits read the same on both engines. A text the expression does not match (never, for
 * a hit) gets its beginning.
 */
export function ftsSnippets(texts: readonly string[], match: string): string[] {
  if (!db) open();
  const out = texts.map((t) => (t.length > 80 ? `${t.slice(0, 80)}…` : t));
  const run = db!.transaction(() => {
    texts.forEach((t, i) => insert.run(i + 1, t));
    const rows = db!.prepare("SELECT rowid AS id, snippet(t, 0, '[', ']', '…', 16) AS s FROM t WHERE t MATCH ?").all(match) as { id: number; s: string }[];
    clear.run();
    return rows;
  });
  for (const r of run()) out[r.id - 1] = r.s;
  return out;
}
