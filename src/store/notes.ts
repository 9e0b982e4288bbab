// The notes search index: every note of every hosted repository (repository, namespace,
// target, object type, blob, content) in SQLite with an FTS5 table over the content, plus the
// notes-ref tips it reflects, so a moved ref is noticed and caught up incrementally.
import { migrate, type Db } from './sqlite.js';

export interface IndexedNote {
  namespace: string;
  target: string;
  object_type: string;
  blob: string;
  content: string;
}

export interface NoteUpsert {
  target: string;
  object_type: string;
  blob: string;
  content: string;
}

export interface IndexSearchHit {
  namespace: string;
  target: string;
  object_type: string;
  snippet: string;
  score: number;
}

export interface NotesIndex {
  get(repoId: string, namespace: string, target: string): IndexedNote | undefined;
  /** Namespace → tip the index reflects. */
  tips(repoId: string): Map<string, string>;
  counts(repoId: string): Map<string, number>;
  /** Applies one ref's changes and records its new tip, atomically. */
  apply(repoId: string, namespace: string, tip: string, upserts: NoteUpsert[], removals: string[]): void;
  /** Replaces everything known of one ref (full rebuild). */
  replaceRef(repoId: string, namespace: string, tip: string, notes: NoteUpsert[]): void;
  dropRef(repoId: string, namespace: string): void;
  dropRepo(repoId: string): void;
  markIndexed(repoId: string): void;
  isIndexed(repoId: string): boolean;
  /** `match` is an FTS5 expression built by src/notes/query.ts, never raw user input. */
  search(repoId: string, match: string, opts: { namespace?: string; commitsOnly?: boolean; limit: number }): IndexSearchHit[];
}

const MIGRATIONS = [
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
   CREATE VIRTUAL TABLE notes_fts USING fts5(content, content='notes', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
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
];

export class SqliteNotesIndex implements NotesIndex {
  private readonly q;
  constructor(private readonly db: Db) {
    migrate(db, 'notes', MIGRATIONS);
    this.q = {
      get: db.prepare('SELECT namespace, target, object_type, blob, content FROM notes WHERE repo_id = ? AND namespace = ? AND target = ?'),
      tips: db.prepare('SELECT namespace, tip FROM notes_refs WHERE repo_id = ?'),
      counts: db.prepare('SELECT namespace, count(*) AS n FROM notes WHERE repo_id = ? GROUP BY namespace'),
      upsert: db.prepare(
        `INSERT INTO notes (repo_id, namespace, target, object_type, blob, content) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (repo_id, namespace, target) DO UPDATE SET object_type = excluded.object_type, blob = excluded.blob, content = excluded.content
         WHERE notes.blob IS NOT excluded.blob OR notes.object_type IS NOT excluded.object_type`,
      ),
      remove: db.prepare('DELETE FROM notes WHERE repo_id = ? AND namespace = ? AND target = ?'),
      setTip: db.prepare('INSERT INTO notes_refs (repo_id, namespace, tip) VALUES (?, ?, ?) ON CONFLICT (repo_id, namespace) DO UPDATE SET tip = excluded.tip'),
      dropRefNotes: db.prepare('DELETE FROM notes WHERE repo_id = ? AND namespace = ?'),
      dropRef: db.prepare('DELETE FROM notes_refs WHERE repo_id = ? AND namespace = ?'),
      dropRepoNotes: db.prepare('DELETE FROM notes WHERE repo_id = ?'),
      dropRepoRefs: db.prepare('DELETE FROM notes_refs WHERE repo_id = ?'),
      dropRepoMark: db.prepare('DELETE FROM notes_indexed_repos WHERE repo_id = ?'),
      mark: db.prepare('INSERT OR REPLACE INTO notes_indexed_repos (repo_id, indexed_at) VALUES (?, ?)'),
      isIndexed: db.prepare('SELECT 1 FROM notes_indexed_repos WHERE repo_id = ?').pluck(),
    };
  }

  get(repoId: string, namespace: string, target: string): IndexedNote | undefined {
    return this.q.get.get(repoId, namespace, target) as IndexedNote | undefined;
  }
  tips(repoId: string): Map<string, string> {
    const rows = this.q.tips.all(repoId) as { namespace: string; tip: string }[];
    return new Map(rows.map((r) => [r.namespace, r.tip]));
  }
  counts(repoId: string): Map<string, number> {
    const rows = this.q.counts.all(repoId) as { namespace: string; n: number }[];
    return new Map(rows.map((r) => [r.namespace, r.n]));
  }
  apply(repoId: string, namespace: string, tip: string, upserts: NoteUpsert[], removals: string[]): void {
    this.db.transaction(() => {
      for (const t of removals) this.q.remove.run(repoId, namespace, t);
      for (const n of upserts) this.q.upsert.run(repoId, namespace, n.target, n.object_type, n.blob, n.content);
      this.q.setTip.run(repoId, namespace, tip);
    })();
  }
  replaceRef(repoId: string, namespace: string, tip: string, notes: NoteUpsert[]): void {
    this.db.transaction(() => {
      this.q.dropRefNotes.run(repoId, namespace);
      for (const n of notes) this.q.upsert.run(repoId, namespace, n.target, n.object_type, n.blob, n.content);
      this.q.setTip.run(repoId, namespace, tip);
    })();
  }
  dropRef(repoId: string, namespace: string): void {
    this.db.transaction(() => {
      this.q.dropRefNotes.run(repoId, namespace);
      this.q.dropRef.run(repoId, namespace);
    })();
  }
  dropRepo(repoId: string): void {
    this.db.transaction(() => {
      this.q.dropRepoNotes.run(repoId);
      this.q.dropRepoRefs.run(repoId);
      this.q.dropRepoMark.run(repoId);
    })();
  }
  markIndexed(repoId: string): void {
    this.q.mark.run(repoId, new Date().toISOString());
  }
  isIndexed(repoId: string): boolean {
    return this.q.isIndexed.get(repoId) === 1;
  }
  search(repoId: string, match: string, opts: { namespace?: string; commitsOnly?: boolean; limit: number }): IndexSearchHit[] {
    const where = ['notes_fts MATCH ?', 'n.repo_id = ?'];
    const params: (string | number)[] = [match, repoId];
    if (opts.namespace !== undefined) {
      where.push('n.namespace = ?');
      params.push(opts.namespace);
    }
    if (opts.commitsOnly) where.push("n.object_type = 'commit'");
    params.push(opts.limit);
    // Only the WHERE clauses above are spliced in (fixed text); every value is a bound parameter.
    const sql = `SELECT n.namespace, n.target, n.object_type, snippet(notes_fts, 0, '[', ']', '…', 16) AS snippet, -bm25(notes_fts) AS score
      FROM notes_fts JOIN notes n ON n.id = notes_fts.rowid WHERE ${where.join(' AND ')} ORDER BY bm25(notes_fts) LIMIT ?`;
    return this.db.prepare(sql).all(...params) as IndexSearchHit[];
  }
}
