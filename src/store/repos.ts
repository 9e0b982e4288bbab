// Hosted repositories and who may read or push them: the records behind the bare git
// repositories under `<data-dir>/repos/`; the interface every engine's adapter
// (src/store/repos-sql.ts) implements.

export type ObjectFormat = 'sha1' | 'sha256';
/**
 * How a notes ref's diverged histories are joined on the server (git's `notes.mergeStrategy`).
 * `manual`, the default, joins nothing: a non-fast-forward push of the ref is refused by git
 * unless forced (a forced one replaces the ref), as before strategies existed.
 */
export type NotesMergeStrategy = 'manual' | 'ours' | 'theirs' | 'union' | 'cat_sort_uniq';
export type RepoPermission = 'read' | 'push';

export interface Repo {
  id: string;
  owner: string;
  owner_id: string;
  name: string;
  private: boolean;
  object_format: ObjectFormat;
  created_at: string;
}

/** Row operations on repositories and grants, on the database or inside one transaction. */
export interface RepoRows {
  /**
   * Serialises, until the transaction ends, every transaction that locks the same key (across
   * instances on PostgreSQL). Only inside `transaction()`.
   */
  lock(key: string): Promise<void>;
  /** Inserts a repository; an owner/name already taken (ignoring case) is a unique-constraint error. */
  createRepo(input: { ownerId: string; owner: string; name: string; private: boolean; objectFormat: ObjectFormat }): Promise<Repo>;
  /** Owner and name match without regard to case, like Gitea and GitHub. */
  findRepo(owner: string, name: string): Promise<Repo | undefined>;
  /** Every repository, by owner then name. */
  listRepos(): Promise<Repo[]>;
  deleteRepo(id: string): Promise<void>;
  /** Sets (or raises/lowers) a user's permission on a repository. */
  grant(repoId: string, userId: string, permission: RepoPermission): Promise<void>;
  revoke(repoId: string, userId: string): Promise<void>;
  permissionOf(repoId: string, userId: string): Promise<RepoPermission | undefined>;
  /** Stores a namespace's merge strategy; `manual` (the default) removes the row. */
  setNotesMergeStrategy(repoId: string, namespace: string, strategy: NotesMergeStrategy): Promise<void>;
  /** Namespace → strategy, for the namespaces of a repository whose strategy is not `manual`. */
  notesMergeStrategies(repoId: string): Promise<Map<string, NotesMergeStrategy>>;
}

export interface RepoStore extends RepoRows {
  /** Runs `fn` in one transaction; decisions (is this name free?) are made in it. */
  transaction<T>(fn: (tx: RepoRows) => Promise<T>): Promise<T>;
  /**
   * The repository findRepo would answer now, when it is remembered and what it was checked
   * against is still fresh (no statement, no await); undefined when findRepo must look.
   */
  cachedRepo(owner: string, name: string): Readonly<Repo> | undefined;
}
