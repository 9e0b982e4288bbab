// The repositories of one owner, in name order (an owner-wide notes search walks them in this
// order): one indexed statement on either engine, instead of listing every repository of the
// server. Visibility is the caller's to judge (daemon/services/marketplace/notes/access.ts).
import type { SqlExecutor } from './sql.js';
import type { Repo } from './repos.js';

export interface OwnerRepos {
  /** The owner's repositories (owner matched without regard to case), by lower-cased name, byte order. */
  listByOwner(owner: string): Promise<Repo[]>;
}

interface RepoRow extends Omit<Repo, 'private'> {
  private: number;
}

export class SqlOwnerRepos implements OwnerRepos {
  constructor(private readonly x: SqlExecutor) {}

  async listByOwner(owner: string): Promise<Repo[]> {
    // PostgreSQL text cannot hold NUL; no stored owner does (as findRepo).
    if (owner.includes('\0')) return [];
    // The same order as listRepos on both engines: NOCASE on SQLite, lower() in byte order on PostgreSQL.
    const sql =
      this.x.engine === 'postgres'
        ? 'SELECT id, owner, owner_id, name, private, object_format, created_at FROM repos WHERE lower(owner) = lower(?) ORDER BY lower(name) COLLATE "C"'
        : 'SELECT id, owner, owner_id, name, private, object_format, created_at FROM repos WHERE owner = ? ORDER BY name';
    return (await this.x.all<RepoRow>(sql, [owner])).map((r) => ({ ...r, private: r.private === 1 }));
  }
}
