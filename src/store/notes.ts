// The notes search index's contract: every note of every hosted repository (repository,
// namespace, target, object type, blob, content), searchable, plus the notes-ref tips it
// reflects, so a moved ref is noticed and caught up incrementally. One adapter implements it on
// both engines (src/store/notes-sql.ts); several instances may update it at once, so every
// change of a ref's part moves its recorded tip by compare-and-swap.
import type { NotesQuery } from '../notes/query.js';

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

/**
 * A ref's recorded tip moving to `to`: only if the index still records `from` for it (null: no
 * tip recorded), so two instances catching up the same ref cannot put an older state back over
 * a newer one. `from` undefined replaces whatever is recorded (a full rebuild).
 */
export interface TipMove {
  from?: string | null;
  to: string;
}

export interface SearchOptions {
  namespace?: string;
  commitsOnly?: boolean;
  limit: number;
}

export interface NotesIndex {
  get(repoId: string, namespace: string, target: string): Promise<IndexedNote | undefined>;
  /** Namespace → tip the index reflects. */
  tips(repoId: string): Promise<Map<string, string>>;
  counts(repoId: string): Promise<Map<string, number>>;
  /**
   * Applies one ref's changes and moves its tip, atomically. False when the recorded tip was
   * neither `from` nor already `to` (another instance moved it first): nothing changed, and the
   * caller reads the tips again.
   */
  apply(repoId: string, namespace: string, tip: TipMove, upserts: NoteUpsert[], removals: string[]): Promise<boolean>;
  /** Replaces everything known of one ref (full read), under the same compare-and-swap as apply. */
  replaceRef(repoId: string, namespace: string, tip: TipMove, notes: NoteUpsert[]): Promise<boolean>;
  /** Forgets a ref that is gone, if the index still records `tip` for it. */
  dropRef(repoId: string, namespace: string, tip: string): Promise<boolean>;
  dropRepo(repoId: string): Promise<void>;
  markIndexed(repoId: string): Promise<void>;
  isIndexed(repoId: string): Promise<boolean>;
  /**
   * Hits for a parsed query (src/notes/query.ts), best first: BM25 (FTS5's on SQLite, the same
   * formula over the repository's notes on PostgreSQL), ties by namespace and target.
   */
  search(repoId: string, query: NotesQuery, opts: SearchOptions): Promise<IndexSearchHit[]>;
  /**
   * Runs `fn` while no other instance on this database writes the same repository's notes ref:
   * a PostgreSQL advisory lock held for `fn`'s duration. On SQLite one process owns the file and
   * its in-process queue is enough, so `fn` just runs.
   */
  holdRef<T>(repoId: string, ref: string, fn: () => Promise<T>): Promise<T>;
  /**
   * Calls `fn` with a repository's id whenever any instance on this database changed that
   * repository's part of the index (this one included); returns the unsubscribe function.
   */
  watch(fn: (repoId: string) => void): Promise<() => void>;
}
