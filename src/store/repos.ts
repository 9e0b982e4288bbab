// Hosted repositories and who may read or push them: the records behind the bare git
// repositories under `<data-dir>/repos/`. Interface first; the SQLite adapter below it.
import { randomUUID } from 'node:crypto';
import { migrate, type Db } from './sqlite.js';

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

export interface RepoStore {
  createRepo(input: { ownerId: string; owner: string; name: string; private: boolean; objectFormat: ObjectFormat }): Repo;
  /** Owner and name match without regard to case, like Gitea and GitHub. */
  findRepo(owner: string, name: string): Repo | undefined;
  listRepos(): Repo[];
  deleteRepo(id: string): void;
  /** Sets (or raises/lowers) a user's permission on a repository. */
  grant(repoId: string, userId: string, permission: RepoPermission): void;
  revoke(repoId: string, userId: string): void;
  permissionOf(repoId: string, userId: string): RepoPermission | undefined;
}

const MIGRATIONS = [
  `CREATE TABLE repos (
     id TEXT PRIMARY KEY,
     owner_id TEXT NOT NULL REFERENCES users(id),
     owner TEXT NOT NULL COLLATE NOCASE,
     name TEXT NOT NULL COLLATE NOCASE,
     private INTEGER NOT NULL,
     object_format TEXT NOT NULL CHECK (object_format IN ('sha1', 'sha256')),
     created_at TEXT NOT NULL,
     UNIQUE (owner, name)
   );
   CREATE TABLE repo_grants (
     repo_id TEXT NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
     user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
     permission TEXT NOT NULL CHECK (permission IN ('read', 'push')),
     PRIMARY KEY (repo_id, user_id)
   ) WITHOUT ROWID;`,
];

interface RepoRow extends Omit<Repo, 'private'> {
  private: number;
}
const fromRow = (r: RepoRow | undefined): Repo | undefined => (r ? { ...r, private: r.private === 1 } : undefined);
const COLUMNS = 'id, owner, owner_id, name, private, object_format, created_at';

export class SqliteRepoStore implements RepoStore {
  private readonly q;
  /** Lookups by owner/name, dropped whenever any connection commits a change (PRAGMA data_version). */
  private readonly memo = new Map<string, Repo | undefined>();
  private memoVersion = -1;

  constructor(db: Db) {
    migrate(db, 'repos', MIGRATIONS);
    this.q = {
      insert: db.prepare(`INSERT INTO repos (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`),
      find: db.prepare(`SELECT ${COLUMNS} FROM repos WHERE owner = ? AND name = ?`),
      list: db.prepare(`SELECT ${COLUMNS} FROM repos ORDER BY owner, name`),
      delete: db.prepare('DELETE FROM repos WHERE id = ?'),
      grant: db.prepare(
        'INSERT INTO repo_grants (repo_id, user_id, permission) VALUES (?, ?, ?) ON CONFLICT(repo_id, user_id) DO UPDATE SET permission = excluded.permission',
      ),
      revoke: db.prepare('DELETE FROM repo_grants WHERE repo_id = ? AND user_id = ?'),
      permission: db.prepare('SELECT permission FROM repo_grants WHERE repo_id = ? AND user_id = ?').pluck(),
      // Changes when another connection (for example `mkt admin`) commits; this one's own writes clear the memo.
      dataVersion: db.prepare('PRAGMA data_version').pluck(),
    };
  }

  private freshMemo(): Map<string, Repo | undefined> {
    const v = this.q.dataVersion.get() as number;
    if (v !== this.memoVersion || this.memo.size > 10_000) {
      this.memo.clear();
      this.memoVersion = v;
    }
    return this.memo;
  }

  createRepo(input: { ownerId: string; owner: string; name: string; private: boolean; objectFormat: ObjectFormat }): Repo {
    const repo: Repo = {
      id: randomUUID(),
      owner: input.owner,
      owner_id: input.ownerId,
      name: input.name,
      private: input.private,
      object_format: input.objectFormat,
      created_at: new Date().toISOString(),
    };
    this.q.insert.run(repo.id, repo.owner, repo.owner_id, repo.name, repo.private ? 1 : 0, repo.object_format, repo.created_at);
    this.memo.clear();
    return repo;
  }
  findRepo(owner: string, name: string): Repo | undefined {
    const memo = this.freshMemo();
    const key = `${owner.toLowerCase()}/${name.toLowerCase()}`;
    if (memo.has(key)) return memo.get(key);
    const repo = fromRow(this.q.find.get(owner, name) as RepoRow | undefined);
    memo.set(key, repo);
    return repo;
  }
  listRepos(): Repo[] {
    return (this.q.list.all() as RepoRow[]).map((r) => fromRow(r)!);
  }
  deleteRepo(id: string): void {
    this.q.delete.run(id);
    this.memo.clear();
  }
  grant(repoId: string, userId: string, permission: RepoPermission): void {
    this.q.grant.run(repoId, userId, permission);
  }
  revoke(repoId: string, userId: string): void {
    this.q.revoke.run(repoId, userId);
  }
  permissionOf(repoId: string, userId: string): RepoPermission | undefined {
    return (this.q.permission.get(repoId, userId) as RepoPermission | undefined) ?? undefined;
  }
}
