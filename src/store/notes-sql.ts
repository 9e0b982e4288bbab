// The notes index on either engine (SqlNotesIndex). Rows, tips and the compare-and-swap of a
// ref's tip are shared SQL; full-text search differs. SQLite keeps an FTS5 table (unicode61,
// remove_diacritics 2) beside `notes`. PostgreSQL stores, per note, the tokens FTS5 would make of
// it (src/notes/fts-tokens.ts asks FTS5 itself), as padded text for exact phrase checks and as a
// tsvector of the distinct tokens under a GIN index, so both engines give the same hits; BM25 is
// computed in SQL with FTS5's formula. Why this and not a PostgreSQL text-search configuration:
// docs/notes-search.md.
import type { SqlDatabase, SqlExecutor, SqlMigration } from './sql.js';
import type { CountBy, IndexMatch, IndexRow, IndexedNote, IndexSearchHit, NoteFilter, NotesIndex, NoteUpsert, PageKey, PageRequest, SearchOptions, TipMove } from './notes.js';
import { ftsMatch, type NotesQuery } from '../notes/query.js';
import { FTS5_TOKENIZER, ftsQueryTokens, ftsSnippets, ftsTokens } from '../notes/fts-tokens.js';
import { parseFields } from '../notes/fields.js';
import { and, countGroups, filterCond, idPage, matchCond, missingTargets, noteContents, pageRows, type Cond } from './notes-sql-page.js';

// Append only: SQLite databases in the field are at some version of this list.
const SQLITE: SqlMigration[] = [
  `CREATE TABLE notes (
     id INTEGER PRIMARY KEY,
     repo_id TEXT NOT NULL,
     namespace TEXT NOT NULL,
     target TEXT NOT NULL,
     object_type TEXT NOT NULL,
     blob TEXT NOT NULL,
     content TEXT NOT NULL,
     UNIQUE (repo_id, namespace, target)
   );
   CREATE VIRTUAL TABLE notes_fts USING fts5(content, content='notes', content_rowid='id', tokenize='${FTS5_TOKENIZER}');
   CREATE TRIGGER notes_ai AFTER INSERT ON notes BEGIN
     INSERT INTO notes_fts (rowid, content) VALUES (new.id, new.content);
   END;
   CREATE TRIGGER notes_ad AFTER DELETE ON notes BEGIN
     INSERT INTO notes_fts (notes_fts, rowid, content) VALUES ('delete', old.id, old.content);
   END;
   CREATE TRIGGER notes_au AFTER UPDATE OF content ON notes BEGIN
     INSERT INTO notes_fts (notes_fts, rowid, content) VALUES ('delete', old.id, old.content);
     INSERT INTO notes_fts (rowid, content) VALUES (new.id, new.content);
   END;
   CREATE TABLE notes_refs (
     repo_id TEXT NOT NULL,
     namespace TEXT NOT NULL,
     tip TEXT NOT NULL,
     PRIMARY KEY (repo_id, namespace)
   ) WITHOUT ROWID;
   CREATE TABLE notes_indexed_repos (repo_id TEXT PRIMARY KEY, indexed_at TEXT NOT NULL) WITHOUT ROWID;`,
  // Issue 36: note metadata, fields and the literal (trigram) index. The tips are forgotten, so
  // every repository is read again in full on its next catch-up (the server's start-up one),
  // which fills metadata and fields; until then its rows are searchable as before.
  `ALTER TABLE notes ADD COLUMN note_author TEXT;
   ALTER TABLE notes ADD COLUMN note_email TEXT;
   ALTER TABLE notes ADD COLUMN note_author_lc TEXT;
   ALTER TABLE notes ADD COLUMN note_email_lc TEXT;
   ALTER TABLE notes ADD COLUMN note_at INTEGER;
   ALTER TABLE notes ADD COLUMN commit_subject TEXT;
   ALTER TABLE notes ADD COLUMN commit_author TEXT;
   CREATE INDEX notes_repo_order ON notes (repo_id, id);
   CREATE TABLE note_fields (
     note_id INTEGER NOT NULL,
     ord INTEGER NOT NULL,
     key TEXT NOT NULL,
     key_lc TEXT NOT NULL,
     value TEXT NOT NULL,
     value_lc TEXT NOT NULL,
     PRIMARY KEY (note_id, ord)
   ) WITHOUT ROWID;
   CREATE INDEX note_fields_key_value ON note_fields (key_lc, value);
   CREATE TRIGGER notes_fields_ad AFTER DELETE ON notes BEGIN
     DELETE FROM note_fields WHERE note_id = old.id;
   END;
   CREATE VIRTUAL TABLE notes_tri USING fts5(content, content='notes', content_rowid='id', tokenize='trigram');
   CREATE TRIGGER notes_tri_ai AFTER INSERT ON notes BEGIN
     INSERT INTO notes_tri (rowid, content) VALUES (new.id, new.content);
   END;
   CREATE TRIGGER notes_tri_ad AFTER DELETE ON notes BEGIN
     INSERT INTO notes_tri (notes_tri, rowid, content) VALUES ('delete', old.id, old.content);
   END;
   CREATE TRIGGER notes_tri_au AFTER UPDATE OF content ON notes BEGIN
     INSERT INTO notes_tri (notes_tri, rowid, content) VALUES ('delete', old.id, old.content);
     INSERT INTO notes_tri (rowid, content) VALUES (new.id, new.content);
   END;
   INSERT INTO notes_tri (notes_tri) VALUES ('rebuild');
   DELETE FROM notes_refs;`,
];

// The final schema in one step. Content is bytes: a note may hold NUL, which PostgreSQL text
// cannot. `tokens` is ' t1 t2 … ' (FTS5's tokens, one space apart and padded) for exact phrase
// and frequency checks; `lexemes` the distinct tokens (cut to LEXEME_CHARS) for the GIN index.
const POSTGRES: SqlMigration[] = [
  `CREATE TABLE notes (
     id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     repo_id TEXT NOT NULL,
     namespace TEXT NOT NULL,
     target TEXT NOT NULL,
     object_type TEXT NOT NULL,
     blob TEXT NOT NULL,
     content BYTEA NOT NULL,
     tokens TEXT NOT NULL,
     token_count INTEGER NOT NULL,
     lexemes TSVECTOR NOT NULL,
     UNIQUE (repo_id, namespace, target)
   );
   CREATE INDEX notes_lexemes ON notes USING GIN (lexemes);
   CREATE TABLE notes_refs (
     repo_id TEXT NOT NULL,
     namespace TEXT NOT NULL,
     tip TEXT NOT NULL,
     PRIMARY KEY (repo_id, namespace)
   );
   CREATE TABLE notes_indexed_repos (repo_id TEXT PRIMARY KEY, indexed_at TEXT NOT NULL);`,
  // Issue 36, as on SQLite. `content_text` is the content as text without NUL, for pg_trgm; rows
  // holding NUL keep '' until the re-index this step asks for (the tips are forgotten). A server
  // that refuses CREATE EXTENSION gets no trigram index: literal search then scans (one warning).
  async (x) => {
    await x.run(`ALTER TABLE notes ADD COLUMN note_author TEXT, ADD COLUMN note_email TEXT, ADD COLUMN note_author_lc TEXT, ADD COLUMN note_email_lc TEXT,
      ADD COLUMN note_at BIGINT, ADD COLUMN commit_subject TEXT, ADD COLUMN commit_author TEXT, ADD COLUMN content_text TEXT NOT NULL DEFAULT ''`);
    await x.run("UPDATE notes SET content_text = convert_from(content, 'UTF8') WHERE position('\\x00'::bytea IN content) = 0");
    await x.run('CREATE INDEX notes_repo_order ON notes (repo_id, id)');
    await x.run(`CREATE TABLE note_fields (
       note_id BIGINT NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
       ord INTEGER NOT NULL,
       key TEXT NOT NULL,
       key_lc TEXT NOT NULL,
       value TEXT NOT NULL,
       value_lc TEXT NOT NULL,
       PRIMARY KEY (note_id, ord)
     )`);
    await x.run('CREATE INDEX note_fields_key_value ON note_fields (key_lc, value)');
    await x.run('DELETE FROM notes_refs');
    await x.run('SAVEPOINT trgm');
    try {
      await x.run('CREATE EXTENSION IF NOT EXISTS pg_trgm');
      await x.run(`CREATE INDEX ${TRGM_INDEX} ON notes USING GIN (content_text gin_trgm_ops)`);
      await x.run('RELEASE SAVEPOINT trgm');
    } catch {
      await x.run('ROLLBACK TO SAVEPOINT trgm');
    }
  },
];

/** The migration steps of each engine (tests build an index at an older version from them). */
export const NOTES_MIGRATIONS = { sqlite: SQLITE, postgres: POSTGRES } as const;

/** The pg_trgm index of literal search; SqlNotesIndex.open warns when it is missing. */
const TRGM_INDEX = 'notes_content_trgm';

/** Every instance's index caches hear of changes to a repository's part on this channel. */
const CHANGED = 'mkt_notes_index';
/** Lexemes are cut to this many characters (a tsvector lexeme holds < 2 KiB); `tokens` stays exact. */
const LEXEME_CHARS = 200;
/** A tsvector's lexemes hold < 1 MiB in all; past this a note's further distinct tokens go unindexed on PostgreSQL. */
const LEXEME_BUDGET_BYTES = 1_000_000;
/** Notes tokenized per FTS5 round trip. */
const TOKENIZE_BATCH = 500;
/**
 * Ref locks one instance holds at once: each pins a pooled connection for a whole git write, and
 * the index updates inside need connections of their own, so the pool must never fill with holders.
 */
const MAX_HELD_REF_LOCKS = 4;
/** Repositories whose BM25 statistics one instance keeps (PostgreSQL), and phrases per repository. */
const STATS_REPOS = 1_000;
const STATS_PHRASES = 1_000;
/** Field rows per insert statement. */
const FIELD_BATCH = 5_000;
/** The metadata columns of `notes` an upsert carries (the lower-cased copies serve the author filter). */
const META_COLUMNS = ['note_author', 'note_email', 'note_author_lc', 'note_email_lc', 'note_at', 'commit_subject', 'commit_author'];
/** FTS5's bm25() constants. */
const K1 = 1.2;
const B = 0.75;

/** A field's key or value as both engines can store it alike. */
const storable = (s: string) => s.replaceAll('\0', '').replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
const lexeme = (token: string) => (token.length > LEXEME_CHARS ? token.slice(0, LEXEME_CHARS) : token);
/** A tsquery operand taken literally (no parsing or normalisation). */
const tsOperand = (lex: string) => `'${lex.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
const likeEscape = (s: string) => s.replace(/[\\%_]/g, '\\$&');
const regexEscape = (s: string) => s.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');

/** One phrase's exact test on a note `n`: the lexeme for one short token, the token text for the rest. */
function phraseTest(tokens: string[]): { sql: string; params: unknown[] } {
  if (tokens.length === 0) return { sql: 'FALSE', params: [] };
  if (tokens.length === 1 && tokens[0]!.length <= LEXEME_CHARS) return { sql: 'n.lexemes @@ ?::tsquery', params: [tsOperand(tokens[0]!)] };
  return { sql: "n.tokens LIKE ? ESCAPE '\\'", params: [`% ${likeEscape(tokens.join(' '))} %`] };
}

/** What the GIN index can check of a phrase: all its lexemes (a superset of the phrase's notes). */
const phrasePrefilter = (tokens: string[]) => (tokens.length ? `(${[...new Set(tokens.map(lexeme))].map(tsOperand).join(' & ')})` : undefined);

/** Whether two occurrences of a phrase can share tokens: some proper prefix of it is also its suffix (`a a`, `a b a`). */
function selfOverlapping(tokens: string[]): boolean {
  for (let m = 1; m < tokens.length; m++) if (tokens.slice(0, m).every((t, i) => t === tokens[tokens.length - m + i])) return true;
  return false;
}

/** A PostgreSQL row's derived search columns. */
function searchColumns(tokens: string[]): { tokens: string; count: number; lexemes: string[] } {
  const distinct = [...new Set(tokens.map(lexeme))];
  let bytes = 0;
  const kept: string[] = [];
  for (const l of distinct) {
    bytes += Buffer.byteLength(l, 'utf8') + 1;
    if (bytes > LEXEME_BUDGET_BYTES) break;
    kept.push(l);
  }
  return { tokens: tokens.length ? ` ${tokens.join(' ')} ` : ' ', count: tokens.length, lexemes: kept };
}

/**
 * What BM25 needs of a repository besides each note's own counts (PostgreSQL): the note count,
 * the tokens in all, and each phrase's document frequency (key: its tokens, one space apart).
 */
interface CorpusStats {
  n: number;
  total: number;
  df: Map<string, number>;
}

export class SqlNotesIndex implements NotesIndex {
  private held = 0;
  private readonly waiting: (() => void)[] = [];
  /**
   * Per repository, the statistics of its part of the index, so a search is one statement. Only
   * a change of that part moves them: this instance's own (change() drops them on commit) or
   * another's (its notification drops them), so they are as current as the tips NotesIndexer
   * keeps. A read that raced a change is not kept (generations).
   */
  private readonly stats = new Map<string, CorpusStats>();
  private readonly generations = new Map<string, number>();
  /** Bumped when every repository's statistics are dropped at once (the listener reconnected). */
  private epoch = 0;
  /** Set once this instance hears the index's notifications: statistics are kept only from then on. */
  private watching: Promise<void> | undefined;
  private heard = false;

  /**
   * What the server should log once at start: on PostgreSQL without the pg_trgm index (the
   * extension could not be created), that literal search scans each repository's notes.
   */
  readonly warnings: string[] = [];

  private constructor(private readonly sql: SqlDatabase) {}

  static async open(sql: SqlDatabase): Promise<SqlNotesIndex> {
    await sql.migrate('notes', { sqlite: SQLITE, postgres: POSTGRES });
    const index = new SqlNotesIndex(sql);
    if (sql.engine === 'postgres' && (await sql.value<number>('SELECT 1 FROM pg_indexes WHERE indexname = ?', [TRGM_INDEX])) !== 1) {
      index.warnings.push(
        'the notes index has no trigram index (CREATE EXTENSION pg_trgm was refused): literal and regex note searches scan every note of a repository; ' +
          `to add it, run as a superuser: CREATE EXTENSION pg_trgm; CREATE INDEX ${TRGM_INDEX} ON notes USING GIN (content_text gin_trgm_ops);`,
      );
    }
    return index;
  }

  private get pg(): boolean {
    return this.sql.engine === 'postgres';
  }

  async get(repoId: string, namespace: string, target: string): Promise<IndexedNote | undefined> {
    // PostgreSQL keeps the content as bytes (it may hold NUL), SQLite as text.
    const row = await this.sql.get<Omit<IndexedNote, 'content'> & { content: string | Buffer }>(
      'SELECT namespace, target, object_type, blob, content FROM notes WHERE repo_id = ? AND namespace = ? AND target = ?',
      [repoId, namespace, target],
    );
    return row && { ...row, content: Buffer.isBuffer(row.content) ? row.content.toString('utf8') : row.content };
  }

  async tips(repoId: string): Promise<Map<string, string>> {
    const rows = await this.sql.all<{ namespace: string; tip: string }>('SELECT namespace, tip FROM notes_refs WHERE repo_id = ?', [repoId]);
    return new Map(rows.map((r) => [r.namespace, r.tip]));
  }

  async counts(repoId: string): Promise<Map<string, number>> {
    const rows = await this.sql.all<{ namespace: string; n: number }>('SELECT namespace, COUNT(*) AS n FROM notes WHERE repo_id = ? GROUP BY namespace', [repoId]);
    return new Map(rows.map((r) => [r.namespace, r.n]));
  }

  /** Runs one change of a repository's part: serialised per repository on every instance, then announced. */
  private async change<T>(repoId: string, fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    let out: T;
    try {
      out = await this.sql.transaction(async (tx) => {
        await tx.lock(`notes-index:${repoId}`);
        return fn(tx);
      });
    } finally {
      // Before the notification, which reaches this instance only later.
      this.forgetStats(repoId);
    }
    await this.sql.notify(CHANGED, repoId).catch(() => undefined);
    return out;
  }

  /** Drops one repository's statistics ('' for every repository: a notification may have been missed). */
  private forgetStats(repoId: string): void {
    if (repoId === '') {
      this.epoch++;
      this.stats.clear();
      this.generations.clear();
      return;
    }
    this.generations.set(repoId, (this.generations.get(repoId) ?? 0) + 1);
    this.stats.delete(repoId);
  }

  private statsGeneration(repoId: string): string {
    return `${this.epoch}:${this.generations.get(repoId) ?? 0}`;
  }

  /**
   * The repository's note count, total tokens and the document frequency of each phrase (by its
   * tokens): what is known from earlier searches, the rest in one statement.
   */
  private async corpusStats(repoId: string, phrases: string[][]): Promise<{ n: number; total: number; df: number[] }> {
    this.watching ??= this.sql.listen(CHANGED, (id) => this.forgetStats(id)).then(
      () => void (this.heard = true),
      () => undefined,
    );
    const gen = this.statsGeneration(repoId);
    const known = this.stats.get(repoId);
    const keys = phrases.map((tokens) => tokens.join(' '));
    const missing = [...new Set(keys.filter((k) => !known?.df.has(k)))];
    if (known && missing.length === 0) return { n: known.n, total: known.total, df: keys.map((k) => known.df.get(k)!) };
    // Each frequency is its own scalar subquery, so each can be planned on the GIN index.
    const columns: string[] = [];
    const params: unknown[] = [];
    missing.forEach((key, i) => {
      const tokens = key.split(' ');
      const t = phraseTest(tokens);
      columns.push(`(SELECT COUNT(*) FROM notes n WHERE n.repo_id = ? AND n.lexemes @@ ?::tsquery AND ${t.sql}) AS df${i}`);
      params.push(repoId, phrasePrefilter(tokens), ...t.params);
    });
    // Placeholders in text order: the frequencies' before the FROM clause's.
    const row = known
      ? (await this.sql.get<Record<string, number>>(`SELECT ${columns.join(', ')}`, params))!
      : (await this.sql.get<Record<string, number>>(
          `SELECT s.n, s.total${columns.map((c) => `, ${c}`).join('')}
           FROM (SELECT COUNT(*) AS n, COALESCE(SUM(token_count), 0) AS total FROM notes WHERE repo_id = ?) s`,
          [...params, repoId],
        ))!;
    const stats: CorpusStats = { n: known?.n ?? row.n!, total: known?.total ?? row.total!, df: new Map(known?.df) };
    missing.forEach((key, i) => stats.df.set(key, row[`df${i}`]!));
    if (this.heard && gen === this.statsGeneration(repoId)) {
      if (stats.df.size > STATS_PHRASES) stats.df.clear();
      if (this.stats.size >= STATS_REPOS && !this.stats.has(repoId)) this.stats.clear();
      this.stats.set(repoId, stats);
    }
    return { n: stats.n, total: stats.total, df: keys.map((k) => row[`df${missing.indexOf(k)}`] ?? known!.df.get(k)!) };
  }

  /** Whether the ref's recorded tip allows the move; 'done' when it is at the target already. */
  private async checkTip(tx: SqlExecutor, repoId: string, namespace: string, tip: TipMove): Promise<'go' | 'done' | 'moved'> {
    if (tip.from === undefined) return 'go';
    const current = (await tx.value<string>('SELECT tip FROM notes_refs WHERE repo_id = ? AND namespace = ?', [repoId, namespace])) ?? null;
    if (current === tip.from) return 'go';
    return current === tip.to ? 'done' : 'moved';
  }

  private async setTip(tx: SqlExecutor, repoId: string, namespace: string, tip: string): Promise<void> {
    await tx.run('INSERT INTO notes_refs (repo_id, namespace, tip) VALUES (?, ?, ?) ON CONFLICT (repo_id, namespace) DO UPDATE SET tip = excluded.tip', [repoId, namespace, tip]);
  }

  private async upsert(tx: SqlExecutor, repoId: string, namespace: string, notes: NoteUpsert[]): Promise<void> {
    // Metadata columns: an upsert without note_at keeps what is stored (a note moved between
    // fan-out paths); one with it replaces all five. A row changes (and its fields are parsed
    // again) only when its blob, type or metadata differ.
    const keep = (c: string) => `${c} = CASE WHEN excluded.note_at IS NULL THEN notes.${c} ELSE excluded.${c} END`;
    const metaSet = META_COLUMNS.map(keep).join(', ');
    const differs = this.pg ? 'IS DISTINCT FROM' : 'IS NOT';
    const metaDiffers = META_COLUMNS.map((c) => `notes.${c} ${differs} excluded.${c}`).join(' OR ');
    const where = `WHERE notes.blob ${differs} excluded.blob OR notes.object_type ${differs} excluded.object_type OR (excluded.note_at IS NOT NULL AND (${metaDiffers}))`;
    const meta = (n: NoteUpsert) => [
      n.note_author ?? null,
      n.note_email ?? null,
      n.note_author?.toLowerCase() ?? null,
      n.note_email?.toLowerCase() ?? null,
      n.note_at ?? null,
      n.commit_subject ?? null,
      n.commit_author ?? null,
    ];
    if (!this.pg) {
      const changed: { id: number; content: string }[] = [];
      for (const n of notes) {
        const row = await tx.get<{ id: number }>(
          `INSERT INTO notes (repo_id, namespace, target, object_type, blob, content, ${META_COLUMNS.join(', ')}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (repo_id, namespace, target) DO UPDATE SET object_type = excluded.object_type, blob = excluded.blob, content = excluded.content, ${metaSet}
           ${where} RETURNING id`,
          [repoId, namespace, n.target, n.object_type, n.blob, n.content, ...meta(n)],
        );
        if (row) changed.push({ id: row.id, content: n.content });
      }
      await this.writeFields(tx, changed);
      return;
    }
    for (let i = 0; i < notes.length; i += TOKENIZE_BATCH) {
      const slice = notes.slice(i, i + TOKENIZE_BATCH);
      const tokens = ftsTokens(slice.map((n) => n.content));
      const changed: { id: number; content: string }[] = [];
      for (const [j, n] of slice.entries()) {
        const s = searchColumns(tokens[j]!);
        const row = await tx.get<{ id: number }>(
          `INSERT INTO notes (repo_id, namespace, target, object_type, blob, content, tokens, token_count, lexemes, content_text, ${META_COLUMNS.join(', ')})
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, array_to_tsvector(?::text[]), ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (repo_id, namespace, target) DO UPDATE SET object_type = excluded.object_type, blob = excluded.blob, content = excluded.content,
             tokens = excluded.tokens, token_count = excluded.token_count, lexemes = excluded.lexemes, content_text = excluded.content_text, ${metaSet}
           ${where} RETURNING id`,
          [repoId, namespace, n.target, n.object_type, n.blob, Buffer.from(n.content, 'utf8'), s.tokens, s.count, s.lexemes, n.content.replaceAll('\0', ''), ...meta(n)],
        );
        if (row) changed.push({ id: row.id, content: n.content });
      }
      await this.writeFields(tx, changed);
    }
  }

  /**
   * The fields of notes just written, in place of what they had: one statement to delete and one
   * to insert for them all (the rows go as one JSON array on SQLite, as arrays on PostgreSQL).
   * NUL is dropped and a lone surrogate (a JSON line's `\ud800`) made U+FFFD, in keys and values:
   * PostgreSQL text cannot hold either, and SQLite does the same so both agree.
   */
  private async writeFields(tx: SqlExecutor, notes: { id: number; content: string }[]): Promise<void> {
    if (notes.length === 0) return;
    const ids = notes.map((n) => n.id);
    const rows: [number, number, string, string, string, string][] = [];
    for (const n of notes) {
      parseFields(n.content).forEach((f, ord) => {
        const key = storable(f.key);
        const value = storable(f.value);
        rows.push([n.id, ord, key, key.toLowerCase(), value, value.toLowerCase()]);
      });
    }
    if (!this.pg) {
      await tx.run('DELETE FROM note_fields WHERE note_id IN (SELECT value FROM json_each(?))', [JSON.stringify(ids)]);
      for (let i = 0; i < rows.length; i += FIELD_BATCH) {
        await tx.run(
          `INSERT INTO note_fields (note_id, ord, key, key_lc, value, value_lc)
           SELECT j.value ->> 0, j.value ->> 1, j.value ->> 2, j.value ->> 3, j.value ->> 4, j.value ->> 5 FROM json_each(?) j`,
          [JSON.stringify(rows.slice(i, i + FIELD_BATCH))],
        );
      }
      return;
    }
    await tx.run('DELETE FROM note_fields WHERE note_id = ANY(?::bigint[])', [ids]);
    for (let i = 0; i < rows.length; i += FIELD_BATCH) {
      const part = rows.slice(i, i + FIELD_BATCH);
      await tx.run(
        `INSERT INTO note_fields (note_id, ord, key, key_lc, value, value_lc)
         SELECT * FROM unnest(?::bigint[], ?::int[], ?::text[], ?::text[], ?::text[], ?::text[])`,
        [0, 1, 2, 3, 4, 5].map((c) => part.map((r) => r[c])),
      );
    }
  }

  async apply(repoId: string, namespace: string, tip: TipMove, upserts: NoteUpsert[], removals: string[]): Promise<boolean> {
    return this.change(repoId, async (tx) => {
      const state = await this.checkTip(tx, repoId, namespace, tip);
      if (state !== 'go') return state === 'done';
      for (const t of removals) await tx.run('DELETE FROM notes WHERE repo_id = ? AND namespace = ? AND target = ?', [repoId, namespace, t]);
      await this.upsert(tx, repoId, namespace, upserts);
      await this.setTip(tx, repoId, namespace, tip.to);
      return true;
    });
  }

  async replaceRef(repoId: string, namespace: string, tip: TipMove, notes: NoteUpsert[]): Promise<boolean> {
    return this.change(repoId, async (tx) => {
      const state = await this.checkTip(tx, repoId, namespace, tip);
      if (state !== 'go') return state === 'done';
      await tx.run('DELETE FROM notes WHERE repo_id = ? AND namespace = ?', [repoId, namespace]);
      await this.upsert(tx, repoId, namespace, notes);
      await this.setTip(tx, repoId, namespace, tip.to);
      return true;
    });
  }

  async dropRef(repoId: string, namespace: string, tip: string): Promise<boolean> {
    return this.change(repoId, async (tx) => {
      const current = await tx.value<string>('SELECT tip FROM notes_refs WHERE repo_id = ? AND namespace = ?', [repoId, namespace]);
      if (current === undefined) return true;
      if (current !== tip) return false;
      await tx.run('DELETE FROM notes WHERE repo_id = ? AND namespace = ?', [repoId, namespace]);
      await tx.run('DELETE FROM notes_refs WHERE repo_id = ? AND namespace = ?', [repoId, namespace]);
      return true;
    });
  }

  async dropRepo(repoId: string): Promise<void> {
    await this.change(repoId, async (tx) => {
      await tx.run('DELETE FROM notes WHERE repo_id = ?', [repoId]);
      await tx.run('DELETE FROM notes_refs WHERE repo_id = ?', [repoId]);
      await tx.run('DELETE FROM notes_indexed_repos WHERE repo_id = ?', [repoId]);
    });
  }

  async markIndexed(repoId: string): Promise<void> {
    await this.sql.run(
      'INSERT INTO notes_indexed_repos (repo_id, indexed_at) VALUES (?, ?) ON CONFLICT (repo_id) DO UPDATE SET indexed_at = excluded.indexed_at',
      [repoId, new Date().toISOString()],
    );
  }

  async isIndexed(repoId: string): Promise<boolean> {
    return (await this.sql.value<number>('SELECT 1 FROM notes_indexed_repos WHERE repo_id = ?', [repoId])) === 1;
  }

  async holdRef<T>(repoId: string, ref: string, fn: () => Promise<T>): Promise<T> {
    if (!this.pg) return fn();
    while (this.held >= MAX_HELD_REF_LOCKS) await new Promise<void>((r) => this.waiting.push(r));
    this.held++;
    try {
      // The transaction writes nothing: it only holds the advisory lock until fn ends. fn's
      // outcome is passed out as a value, so no error of fn's (one carrying a deadlock code, say)
      // makes the transaction rerun it: fn writes to git, which a rerun would repeat.
      const outcome = await this.sql.transaction(async (tx): Promise<{ ok: true; value: T } | { ok: false; err: unknown }> => {
        await tx.lock(`notes-ref:${repoId}:${ref}`);
        try {
          return { ok: true, value: await fn() };
        } catch (err) {
          return { ok: false, err };
        }
      });
      if (!outcome.ok) throw outcome.err;
      return outcome.value;
    } finally {
      this.held--;
      this.waiting.shift()?.();
    }
  }

  watch(fn: (repoId: string) => void): Promise<() => void> {
    return this.sql.listen(CHANGED, (repoId) => fn(repoId));
  }

  async search(repoId: string, query: NotesQuery, opts: SearchOptions): Promise<IndexSearchHit[]> {
    const cond = filterCond(this.sql.engine, { namespace: opts.namespace, commitsOnly: opts.commitsOnly });
    const rows = await this.ranked(repoId, query, cond, 'legacy', undefined, opts.limit);
    return rows.map((r) => ({ namespace: r.namespace, target: r.target, object_type: r.object_type, snippet: r.snippet, score: r.score }));
  }

  async searchPage(repoId: string, match: IndexMatch, filter: NoteFilter, page: PageRequest): Promise<IndexRow[]> {
    const cond = filterCond(this.sql.engine, filter);
    const found =
      match.kind === 'words'
        ? await this.ranked(repoId, match.query, cond, 'id', page.after, page.limit)
        : (await idPage(this.sql, repoId, and([cond, matchCond(this.sql.engine, match, page.caseInsensitive)]), page.after, page.limit)).map((id) => ({ id, score: 0, snippet: '' }));
    return pageRows(this.sql, found, page.withContent === true);
  }

  async countBy(repoId: string, match: IndexMatch, filter: NoteFilter, by: CountBy, max: number): Promise<{ key: string; count: number }[]> {
    let m: Cond | undefined;
    if (match.kind !== 'words') m = matchCond(this.sql.engine, match);
    else if (!this.pg) m = { sql: 'n.id IN (SELECT rowid FROM notes_fts WHERE notes_fts MATCH ?)', params: [ftsMatch(match.query)] };
    else m = this.pgWords(match.query)?.cond;
    if (m === undefined) return [];
    return countGroups(this.sql, repoId, and([filterCond(this.sql.engine, filter), m]), by, max);
  }

  missing(repoId: string, namespace: string, commits: string[]): Promise<string[]> {
    return missingTargets(this.sql, repoId, namespace, commits);
  }

  contents(repoId: string, ids: readonly number[]): Promise<Map<number, string>> {
    return noteContents(this.sql, repoId, ids);
  }

  /**
   * Notes matching a word query, best first: by score (higher better), ties by id (`id`, the
   * order pages follow) or by namespace and target (`legacy`, search()'s order). `after` is the
   * last row of the page before (id order only).
   */
  private ranked(repoId: string, query: NotesQuery, cond: Cond, order: 'id' | 'legacy', after: PageKey | undefined, limit: number): Promise<RankedRow[]> {
    return this.pg ? this.rankedPg(repoId, query, cond, order, after, limit) : this.rankedSqlite(repoId, query, cond, order, after, limit);
  }

  private async rankedSqlite(repoId: string, query: NotesQuery, cond: Cond, order: 'id' | 'legacy', after: PageKey | undefined, limit: number): Promise<RankedRow[]> {
    const keyset = after ? 'WHERE s.score < ? OR (s.score = ? AND s.id > ?)' : '';
    const afterScore = after?.score ?? Number.POSITIVE_INFINITY;
    const match = ftsMatch(query);
    // Only fixed text is spliced in (the filter's SQL is built of fixed pieces); every value is bound.
    const rows = await this.sql.all<Omit<RankedRow, 'snippet'>>(
      `SELECT s.* FROM (SELECT n.id, n.namespace, n.target, n.object_type, -bm25(notes_fts) AS score
         FROM notes_fts JOIN notes n ON n.id = notes_fts.rowid WHERE notes_fts MATCH ? AND n.repo_id = ? AND ${cond.sql}) s
       ${keyset}
       ORDER BY s.score DESC, ${order === 'id' ? 's.id' : 's.namespace, s.target'} LIMIT ?`,
      [match, repoId, ...cond.params, ...(after ? [afterScore, afterScore, after.id] : []), limit],
    );
    if (rows.length === 0) return [];
    // Snippets for the page's rows only: every page of a long walk ranks all the matches again,
    // and a snippet costs more than a score. A row's snippet depends on it and the query alone.
    const snippets = await this.sql.all<{ id: number; snippet: string }>(
      `SELECT rowid AS id, snippet(notes_fts, 0, '[', ']', '…', 16) AS snippet FROM notes_fts
       WHERE notes_fts MATCH ? AND rowid IN (SELECT value FROM json_each(?))`,
      [match, JSON.stringify(rows.map((r) => r.id))],
    );
    const byId = new Map(snippets.map((r) => [r.id, r.snippet]));
    return rows.map((r) => ({ ...r, snippet: byId.get(r.id) ?? '' }));
  }

  /**
   * A word query's condition on PostgreSQL (undefined: nothing can match): the GIN index narrows
   * to notes holding every lexeme a match needs, then each phrase is checked exactly on the token
   * text. A phrase FTS5 reads as no tokens matches nothing there, and here.
   */
  private pgWords(query: NotesQuery): { cond: Cond; tokensOf: (words: string[]) => string[] } | undefined {
    const phraseOf = (words: string[]) => words.join(' ');
    const texts = [...query.groups.flat(), ...query.excluded].map(phraseOf);
    const tokenized = new Map<string, string[]>();
    ftsQueryTokens(texts).forEach((t, i) => tokenized.set(texts[i]!, t));
    const tokensOf = (words: string[]) => tokenized.get(phraseOf(words))!;
    const groupsPre: string[] = [];
    const match: string[] = [];
    const matchParams: unknown[] = [];
    for (const group of query.groups) {
      const alternatives = group.map(tokensOf);
      const pre = alternatives.map(phrasePrefilter).filter((p): p is string => p !== undefined);
      if (pre.length === 0) return undefined;
      groupsPre.push(`(${pre.join(' | ')})`);
      const tests = alternatives.map(phraseTest);
      match.push(`(${tests.map((t) => t.sql).join(' OR ')})`);
      for (const t of tests) matchParams.push(...t.params);
    }
    for (const words of query.excluded) {
      const t = phraseTest(tokensOf(words));
      match.push(`NOT (${t.sql})`);
      matchParams.push(...t.params);
    }
    return { cond: { sql: ['n.lexemes @@ ?::tsquery', ...match].join(' AND '), params: [groupsPre.join(' & '), ...matchParams] }, tokensOf };
  }

  /**
   * The same hits as FTS5 (pgWords). BM25 takes N, the average length and each phrase's
   * document frequency over the repository's notes (FTS5 takes them over the whole table, so
   * the two orders agree when one repository is indexed, as in the conformance test).
   */
  private async rankedPg(repoId: string, query: NotesQuery, cond: Cond, order: 'id' | 'legacy', after: PageKey | undefined, limit: number): Promise<RankedRow[]> {
    const words = this.pgWords(query);
    if (!words) return [];
    const { tokensOf } = words;
    const where = ['n.repo_id = ?', cond.sql, words.cond.sql].join(' AND ');
    const whereParams = [repoId, ...cond.params, ...words.cond.params];

    // BM25 as FTS5's bm25() computes it: every phrase of the query counts, each occurrence of
    // it in the query separately. An excluded phrase occurs in no hit, so it adds exactly 0 there
    // and is left out. The statistics are remembered per repository (corpusStats), so a repeated
    // search is the ranked statement alone.
    const scored = query.groups.flat().map(tokensOf).filter((t) => t.length > 0);
    const stats = scored.length ? await this.corpusStats(repoId, scored) : { n: 0, total: 0, df: [] };
    const avgdl = stats.n > 0 ? stats.total / stats.n : 1;
    const terms: string[] = [];
    const termParams: unknown[] = [];
    for (const hits of stats.df) {
      let idf = Math.log((stats.n - hits + 0.5) / (hits + 0.5));
      if (idf <= 0) idf = 1e-6;
      const tf = `f.tf${terms.length}::float8`;
      // In double precision and FTS5's order of operations, so equal inputs rank alike.
      terms.push(`?::float8 * ((${tf} * ${K1 + 1}::float8) / (${tf} + ${K1}::float8 * (1::float8 - ${B}::float8 + ${B}::float8 * f.token_count::float8 / ?::float8)))`);
      termParams.push(idf, avgdl);
    }
    // A phrase's frequency in a note: its occurrences in the note's tokens with every space
    // doubled, counted by how much replacing them shortens the text. With the spaces doubled,
    // neighbouring occurrences share no character and every match starts and ends on token
    // boundaries, so this counts what FTS5 counts, at a fraction of a regular expression's cost.
    // A phrase whose occurrences can share tokens (`a a`, `a b a`) is counted by a lookahead
    // regular expression, which sees overlapping occurrences too.
    const tfColumns: string[] = [];
    const tfParams: unknown[] = [];
    scored.forEach((tokens, i) => {
      if (selfOverlapping(tokens)) {
        tfColumns.push(`regexp_count(m.tokens, ?) AS tf${i}`);
        tfParams.push(`(?= ${regexEscape(tokens.join(' '))} )`);
      } else {
        const spaced = ` ${tokens.join('  ')} `;
        tfColumns.push(`(octet_length(m.spaced) - octet_length(replace(m.spaced, ?, ''))) / ?::int AS tf${i}`);
        tfParams.push(spaced, Buffer.byteLength(spaced, 'utf8'));
      }
    });
    const score = terms.length ? terms.join(' + ') : '0';
    const tie = (t: string) => (order === 'id' ? `${t}.id` : `${t}.namespace COLLATE "C", ${t}.target COLLATE "C"`);
    const keyset = after ? 'WHERE s.score < ?::float8 OR (s.score = ?::float8 AND s.id > ?)' : '';
    const afterScore = after?.score ?? Number.POSITIVE_INFINITY;
    // Contents are read for the page of hits only, not for every match the ranking sorts. Each
    // OFFSET 0 keeps its subquery from being folded into the one above, which would compute the
    // doubled-space text once per phrase and each frequency once per use in the score.
    const rows = await this.sql.all<{ id: number; namespace: string; target: string; object_type: string; content: Buffer; score: number }>(
      `SELECT top.id, top.namespace, top.target, top.object_type, c.content, top.score
       FROM (SELECT s.* FROM (SELECT f.id, f.namespace, f.target, f.object_type, ${score} AS score
               FROM (SELECT m.id, m.namespace, m.target, m.object_type, m.token_count${tfColumns.map((c) => `, ${c}`).join('')}
                     FROM (SELECT n.id, n.namespace, n.target, n.object_type, n.token_count, n.tokens, replace(n.tokens, ' ', '  ') AS spaced
                           FROM notes n WHERE ${where} OFFSET 0) m
                     OFFSET 0) f
               OFFSET 0) s
             ${keyset}
             ORDER BY s.score DESC, ${tie('s')} LIMIT ?) top
       JOIN notes c ON c.id = top.id
       ORDER BY top.score DESC, ${tie('top')}`,
      [...termParams, ...tfParams, ...whereParams, ...(after ? [afterScore, afterScore, after.id] : []), limit],
    );
    const snippets = ftsSnippets(rows.map((r) => r.content.toString('utf8')), ftsMatch(query));
    return rows.map((r, i) => ({ id: r.id, namespace: r.namespace, target: r.target, object_type: r.object_type, snippet: snippets[i]!, score: r.score }));
  }
}

/** One hit of a ranked word search. */
interface RankedRow {
  id: number;
  namespace: string;
  target: string;
  object_type: string;
  snippet: string;
  score: number;
}
