// The notes search index's contract: every note of every hosted repository (repository,
// namespace, target, object type, blob, content), searchable, plus the notes-ref tips it
// reflects, so a moved ref is noticed and caught up incrementally. One adapter implements it on
// both engines (src/store/notes-sql.ts); several instances may update it at once, so every
// change of a ref's part moves its recorded tip by compare-and-swap.
import type { NotesQuery } from '../notes/query.js';
import type { NoteField } from '../notes/fields.js';

export type { NoteField };

export interface IndexedNote {
  namespace: string;
  target: string;
  object_type: string;
  blob: string;
  content: string;
}

/**
 * Who last changed a note and when (the notes-ref commit), and what the annotated commit is.
 * Optional: an upsert without `note_at` leaves the stored metadata as it is (a note moved
 * between fan-out paths, its blob unchanged); one with it replaces all five.
 */
export interface NoteMeta {
  note_author?: string | null;
  note_email?: string | null;
  /** Ms since the epoch: the author time of the notes-ref commit that last changed the note. */
  note_at?: number | null;
  /** Null unless the target is a commit the repository holds. */
  commit_subject?: string | null;
  commit_author?: string | null;
}

export interface NoteUpsert extends NoteMeta {
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

export interface FieldFilter {
  key: string;
  op: '=' | '~';
  value: string;
}

/** Conditions every returned note meets besides the text match (all optional, ANDed). */
export interface NoteFilter {
  namespace?: string;
  commitsOnly?: boolean;
  /** At most 20 (the API's bound); `=` exact value, `~` contains (case-insensitive); key case-insensitive. */
  fields?: FieldFilter[];
  /** The note author's name or email, case-insensitive exact. */
  author?: string;
  /** Ms, inclusive, on note_at (notes with unknown note_at never pass a time bound). */
  since?: number;
  /** Ms, exclusive. */
  until?: number;
  /** Targets (at most 1,000). */
  commits?: string[];
}

export type IndexMatch =
  | { kind: 'words'; query: NotesQuery }
  | { kind: 'all' }
  | { kind: 'literal'; text: string }
  | { kind: 'literals'; texts: string[] };

export interface PageKey {
  score?: number;
  id: number;
}

export interface IndexRow {
  id: number;
  namespace: string;
  target: string;
  object_type: string;
  score: number;
  snippet: string;
  note_author: string | null;
  note_email: string | null;
  note_at: number | null;
  commit_subject: string | null;
  commit_author: string | null;
  fields: NoteField[];
  content?: string;
}

/**
 * One page: `after` (exclusive) is the last row of the page before. `caseInsensitive` applies to
 * `literals` only (a regex with `(?i)`): see SqlNotesIndex.searchPage for what it narrows.
 */
export interface PageRequest {
  after?: PageKey;
  limit: number;
  withContent?: boolean;
  caseInsensitive?: boolean;
}

export type CountBy = 'namespace' | 'note_author' | { field: string };

export interface NotesIndex {
  /** What the server logs once at start (PostgreSQL without pg_trgm: literal search scans). */
  readonly warnings: readonly string[];
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
   * One page of a repository's notes matching `match` and `filter`. Words: by score (higher
   * better, the order of search()) then id; every other match by id. Keyset: `page.after`.
   */
  searchPage(repoId: string, match: IndexMatch, filter: NoteFilter, page: PageRequest): Promise<IndexRow[]>;
  /**
   * Matching notes counted per group, count descending then key (byte order); at most `max`
   * groups (ask for one more to learn whether more exist). Notes without the key are not counted;
   * a note with two values of a field counts in both.
   */
  countBy(repoId: string, match: IndexMatch, filter: NoteFilter, by: CountBy, max: number): Promise<{ key: string; count: number }[]>;
  /** The texts of some notes of a repository by id (those still there), for hits' matched lines. */
  contents(repoId: string, ids: readonly number[]): Promise<Map<number, string>>;
  /** Those of `commits` that have no note in the namespace, in the given order. */
  missing(repoId: string, namespace: string, commits: string[]): Promise<string[]>;
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
