// The repository adapter over the SQL surface (SQLite or PostgreSQL): repository rows and grants.
// No lookup is memoised in the process: another instance (or `mkt admin`) may create, delete or
// grant at any moment, and an indexed lookup costs less than keeping a cache coherent.
import { randomUUID } from 'node:crypto';
import type { ComponentMigrations, SqlDatabase, SqlExecutor } from './sql.js';
import type { ObjectFormat, Repo, RepoPermission, RepoRows, RepoStore } from './repos.js';

// SQLite: append only. PostgreSQL: the same schema, owner/name unique ignoring case through lower();
// `private` stays a 0/1 INTEGER so both engines read it alike.
const MIGRATIONS: ComponentMigrations = {
  sqlite: [
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
  ],
  postgres: [
    `CREATE TABLE repos (
       id TEXT PRIMARY KEY,
       owner_id TEXT NOT NULL REFERENCES users(id),
       owner TEXT NOT NULL,
       name TEXT NOT NULL,
       private INTEGER NOT NULL,
       object_format TEXT NOT NULL CHECK (object_format IN ('sha1', 'sha256')),
       created_at TEXT NOT NULL
     );
     CREATE UNIQUE INDEX repos_owner_name ON repos (lower(owner), lower(name));
     CREATE TABLE repo_grants (
       repo_id TEXT NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
       user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
       permission TEXT NOT NULL CHECK (permission IN ('read', 'push')),
       PRIMARY KEY (repo_id, user_id)
     );`,
  ],
};

interface RepoRow extends Omit<Repo, 'private'> {
  private: number;
}
const fromRow = (r: RepoRow): Repo => ({ ...r, private: r.private === 1 });
const COLUMNS = 'id, owner, owner_id, name, private, object_format, created_at';

class Rows implements RepoRows {
  constructor(protected readonly x: SqlExecutor) {}

  lock(key: string): Promise<void> {
    return this.x.lock(key);
  }

  async createRepo(input: { ownerId: string; owner: string; name: string; private: boolean; objectFormat: ObjectFormat }): Promise<Repo> {
    const repo: Repo = {
      id: randomUUID(),
      owner: input.owner,
      owner_id: input.ownerId,
      name: input.name,
      private: input.private,
      object_format: input.objectFormat,
      created_at: new Date().toISOString(),
    };
    await this.x.run(`INSERT INTO repos (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`, [
      repo.id,
      repo.owner,
      repo.owner_id,
      repo.name,
      repo.private ? 1 : 0,
      repo.object_format,
      repo.created_at,
    ]);
    return repo;
  }
  async findRepo(owner: string, name: string): Promise<Repo | undefined> {
    // PostgreSQL text cannot hold NUL (binding one is an error, a 500 for a hostile URL); no
    // stored name holds one on either engine, so the answer is known.
    if (owner.includes('\0') || name.includes('\0')) return undefined;
    // NOCASE columns on SQLite; the lower() index on PostgreSQL.
    const where = this.x.engine === 'postgres' ? 'lower(owner) = lower(?) AND lower(name) = lower(?)' : 'owner = ? AND name = ?';
    const row = await this.x.get<RepoRow>(`SELECT ${COLUMNS} FROM repos WHERE ${where}`, [owner, name]);
    return row && fromRow(row);
  }
  async listRepos(): Promise<Repo[]> {
    // One order on both engines: PostgreSQL's collation would sort case and punctuation its own way.
    const order = this.x.engine === 'postgres' ? 'lower(owner) COLLATE "C", lower(name) COLLATE "C"' : 'owner, name';
    return (await this.x.all<RepoRow>(`SELECT ${COLUMNS} FROM repos ORDER BY ${order}`)).map(fromRow);
  }
  async deleteRepo(id: string): Promise<void> {
    await this.x.run('DELETE FROM repos WHERE id = ?', [id]);
  }
  async grant(repoId: string, userId: string, permission: RepoPermission): Promise<void> {
    await this.x.run(
      'INSERT INTO repo_grants (repo_id, user_id, permission) VALUES (?, ?, ?) ON CONFLICT (repo_id, user_id) DO UPDATE SET permission = excluded.permission',
      [repoId, userId, permission],
    );
  }
  async revoke(repoId: string, userId: string): Promise<void> {
    await this.x.run('DELETE FROM repo_grants WHERE repo_id = ? AND user_id = ?', [repoId, userId]);
  }
  async permissionOf(repoId: string, userId: string): Promise<RepoPermission | undefined> {
    return (await this.x.value<RepoPermission>('SELECT permission FROM repo_grants WHERE repo_id = ? AND user_id = ?', [repoId, userId])) ?? undefined;
  }
}

export class SqlRepoStore extends Rows implements RepoStore {
  private constructor(private readonly sql: SqlDatabase) {
    super(sql);
  }

  /** Migrates the `repos` component (after `accounts`, whose users it references) and returns the store. */
  static async open(sql: SqlDatabase): Promise<SqlRepoStore> {
    await sql.migrate('repos', MIGRATIONS);
    return new SqlRepoStore(sql);
  }

  transaction<T>(fn: (tx: RepoRows) => Promise<T>): Promise<T> {
    return this.sql.transaction((x) => fn(new Rows(x)));
  }
}
