// Tokenizes text exactly as the SQLite notes index does (FTS5 `unicode61 remove_diacritics 2`),
// by asking FTS5 itself: an in-memory FTS5 table and its fts5vocab `instance` view give each
// token, folded, in order. The PostgreSQL index stores and queries these tokens, so both engines
// split `parse_config`, `foo.bar`, `v2.1`, hyphens and non-ASCII text the same way by
// construction rather than by a re-implementation of unicode61's Unicode 6.1 tables in JS.
import Database from 'better-sqlite3';

/** The tokenizer the SQLite index declares (src/store/notes-sql.ts); change both together. */
export const FTS5_TOKENIZER = 'unicode61 remove_diacritics 2';

/** Query phrases whose tokens are remembered (a query's phrases are a few words each). */
const PHRASES_KEPT = 2_000;
/** Snippets remembered, and the characters of note text and match expression they may key on in all. */
const SNIPPETS_KEPT = 5_000;
const SNIPPET_KEY_CHARS = 4_000_000;
/** Longer notes are snippeted every time rather than held as a key. */
const SNIPPET_KEY_MAX_CHARS = 4096;

let db: Database.Database | undefined;
let insert: Database.Statement<unknown[]>;
let read: Database.Statement<unknown[]>;
let clear: Database.Statement<unknown[]>;
let insertText: Database.Statement<unknown[]>;
let indexText: Database.Statement<unknown[]>;
let snippet: Database.Statement<unknown[]>;
let clearTexts: Database.Statement<unknown[]>;
let clearContent: Database.Statement<unknown[]>;

// Both tables are emptied with FTS5's 'delete-all', which drops the whole index at once: a DELETE
// of each row would tokenize every text a second time to remove its entries.
function open(): void {
  db = new Database(':memory:');
  db.exec(`CREATE VIRTUAL TABLE t USING fts5(x, content='', tokenize='${FTS5_TOKENIZER}');
    CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');
    CREATE TABLE c (id INTEGER PRIMARY KEY, x TEXT);
    CREATE VIRTUAL TABLE s USING fts5(x, content='c', content_rowid='id', tokenize='${FTS5_TOKENIZER}');`);
  insert = db.prepare('INSERT INTO t (rowid, x) VALUES (?, ?)');
  read = db.prepare('SELECT doc, "offset" AS pos, term FROM v');
  clear = db.prepare("INSERT INTO t (t) VALUES ('delete-all')");
  insertText = db.prepare('INSERT INTO c (id, x) VALUES (?, ?)');
  indexText = db.prepare('INSERT INTO s (rowid, x) VALUES (?, ?)');
  snippet = db.prepare("SELECT rowid AS id, snippet(s, 0, '[', ']', '…', 16) AS s FROM s WHERE s MATCH ?");
  clearTexts = db.prepare("INSERT INTO s (s) VALUES ('delete-all')");
  clearContent = db.prepare('DELETE FROM c');
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
 * A map that forgets its least recently used entries past `entries` or past `chars` characters
 * of keys and values.
 */
class Lru<V extends string | readonly string[]> {
  private readonly map = new Map<string, V>();
  private chars = 0;
  constructor(
    private readonly entries: number,
    private readonly maxChars: number,
  ) {}

  private static size(key: string, v: string | readonly string[]): number {
    return key.length + (typeof v === 'string' ? v.length : v.reduce((n, t) => n + t.length, 0));
  }

  get(key: string): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }

  set(key: string, v: V): void {
    const had = this.map.get(key);
    if (had !== undefined) {
      this.map.delete(key);
      this.chars -= Lru.size(key, had);
    }
    this.map.set(key, v);
    this.chars += Lru.size(key, v);
    for (const [k, old] of this.map) {
      if (this.map.size <= this.entries && this.chars <= this.maxChars) break;
      this.map.delete(k);
      this.chars -= Lru.size(k, old);
    }
  }
}

const phraseTokens = new Lru<readonly string[]>(PHRASES_KEPT, PHRASES_KEPT * 64);

/**
 * ftsTokens for a search's phrases: a query is tokenized on every search, and the same few
 * phrases come again and again, so their tokens are remembered.
 */
export function ftsQueryTokens(phrases: readonly string[]): string[][] {
  const known = new Map<string, readonly string[]>();
  for (const p of phrases) {
    const t = phraseTokens.get(p);
    if (t) known.set(p, t);
  }
  const missing = [...new Set(phrases.filter((p) => !known.has(p)))];
  if (missing.length) {
    ftsTokens(missing).forEach((t, i) => {
      known.set(missing[i]!, t);
      phraseTokens.set(missing[i]!, t);
    });
  }
  return phrases.map((p) => [...known.get(p)!]);
}

const snippets = new Lru<string>(SNIPPETS_KEPT, SNIPPET_KEY_CHARS);

/**
 * FTS5's own snippet of each text for a MATCH expression (the SQLite index's `snippet(…, 16)`),
 * so search hits read the same on both engines. A text the expression does not match (never, for
 * a hit) gets its beginning. A snippet depends on the text and the expression alone, so those of
 * short notes are remembered: a repeated search does not index its hits again.
 */
export function ftsSnippets(texts: readonly string[], match: string): string[] {
  const key = (t: string) => (t.length <= SNIPPET_KEY_MAX_CHARS ? `${match}\0${t}` : undefined);
  const out = texts.map((t) => {
    const k = key(t);
    return k === undefined ? undefined : snippets.get(k);
  });
  const todo = texts.map((t, i) => ({ t, i })).filter(({ i }) => out[i] === undefined);
  if (todo.length) {
    if (!db) open();
    const run = db!.transaction(() => {
      todo.forEach(({ t }, j) => {
        insertText.run(j + 1, t);
        indexText.run(j + 1, t);
      });
      const rows = snippet.all(match) as { id: number; s: string }[];
      clearTexts.run();
      clearContent.run();
      return rows;
    });
    const made = new Map(run().map((r) => [r.id, r.s]));
    todo.forEach(({ t, i }, j) => {
      const s = made.get(j + 1) ?? (t.length > 80 ? `${t.slice(0, 80)}…` : t);
      out[i] = s;
      const k = key(t);
      if (k !== undefined) snippets.set(k, s);
    });
  }
  return out as string[];
}
