// Hosted repositories and who may read or push them: the records behind the bare git
// repositories under `<data-dir>/repos/`; the interface every engine's adapter
// (src/store/repos-sql.ts) implements.

export type ObjectFormat = 'sha1' | 'sha256';
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
}

export interface RepoStore extends RepoRows {
  /** Runs `fn` in one transaction; decisions (is this name free?) are made in it. */
  transaction<T>(fn: (tx: RepoRows) => Promise<T>): Promise<T>;
}
