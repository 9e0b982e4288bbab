// The repository adapter over the SQL surface (SQLite or PostgreSQL): repository rows and grants.
// Repositories found by owner and name are remembered in the process. On PostgreSQL every create
// and delete (on any instance, or by `mkt admin`) notifies REPOS_CHANGED after it commits and each
// instance drops what it remembers; on SQLite a change of the file's data version (a commit by
// another connection or process, read at most every 100 ms) does. Grants are always read from the
// database, and so are the notes merge strategies (read once per push, per list and per raced write).
import { randomUUID } from 'node:crypto';
import type { ComponentMigrations, SqlDatabase, SqlExecutor } from './sql.js';
import type { NotesMergeStrategy, ObjectFormat, Repo, RepoPermission, RepoRows, RepoStore } from './repos.js';
import { sqlText } from './sql-text.js';

/** Version 2 on both engines: each namespace's notes merge strategy, when it is not `manual`. */
const NOTES_MERGE_TABLE = `CREATE TABLE repo_notes_merge (
   repo_id TEXT NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
   namespace TEXT NOT NULL,
   strategy TEXT NOT NULL CHECK (strategy IN ('ours', 'theirs', 'union', 'cat_sort_uniq')),
   PRIMARY KEY (repo_id, namespace)
 )`;

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
    NOTES_MERGE_TABLE,
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
    NOTES_MERGE_TABLE,
  ],
};

/** Every instance's repository cache hears of creates and deletes on this channel. */
const REPOS_CHANGED = 'mkt_repos';
/** SQLite: how long the file's data version read is trusted (as REF_READ_TTL_MS for notes refs). */
const DATA_VERSION_TTL_MS = 100;
/** Lookups (owner and name as asked, repository found) one instance remembers. */
const FOUND_ENTRIES = 10_000;

interface RepoRow extends Omit<Repo, 'private'> {
  private: number;
}
const fromRow = (r: RepoRow): Repo => ({ ...r, private: r.private === 1 });
const COLUMNS = 'id, owner, owner_id, name, private, object_format, created_at';

class Rows implements RepoRows {
  /** `changed` hears of every create or delete made through these rows, when it is made. */
  constructor(
    protected readonly x: SqlExecutor,
    private readonly changed: () => Promise<void>,
  ) {}

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
    await this.x.run(sqlText`INSERT INTO repos (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`, [
      repo.id,
      repo.owner,
      repo.owner_id,
      repo.name,
      repo.private ? 1 : 0,
      repo.object_format,
      repo.created_at,
    ]);
    await this.changed();
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
    await this.changed();
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
  async setNotesMergeStrategy(repoId: string, namespace: string, strategy: NotesMergeStrategy): Promise<void> {
    if (strategy === 'manual') {
      await this.x.run('DELETE FROM repo_notes_merge WHERE repo_id = ? AND namespace = ?', [repoId, namespace]);
      return;
    }
    await this.x.run(
      'INSERT INTO repo_notes_merge (repo_id, namespace, strategy) VALUES (?, ?, ?) ON CONFLICT (repo_id, namespace) DO UPDATE SET strategy = excluded.strategy',
      [repoId, namespace, strategy],
    );
  }
  async notesMergeStrategies(repoId: string): Promise<Map<string, NotesMergeStrategy>> {
    const rows = await this.x.all<{ namespace: string; strategy: NotesMergeStrategy }>('SELECT namespace, strategy FROM repo_notes_merge WHERE repo_id = ?', [repoId]);
    return new Map(rows.map((r) => [r.namespace, r.strategy]));
  }
}

export class SqlRepoStore extends Rows implements RepoStore {
  /** `owner\0name` exactly as asked (PostgreSQL's lower() decides what matches, not JS) → repository. */
  private readonly found = new Map<string, Repo>();
  /** Bumped whenever the cache is dropped, so a lookup that raced a change is not remembered. */
  private generation = 0;
  /** Set once this instance hears REPOS_CHANGED: lookups are remembered only from then on. */
  private watching: Promise<void> | undefined;
  private heard = false;
  /** SQLite: the file's data version the remembered lookups were made at, and when it was read. */
  private dataVersion: number | undefined;
  private dataVersionAt = -Infinity;

  private constructor(private readonly sql: SqlDatabase) {
    // Outside a transaction a statement commits as it runs: announce at once.
    super(sql, () => this.announce());
  }

  /** Migrates the `repos` component (after `accounts`, whose users it references) and returns the store. */
  static async open(sql: SqlDatabase): Promise<SqlRepoStore> {
    await sql.migrate('repos', MIGRATIONS);
    return new SqlRepoStore(sql);
  }

  /** Drops this instance's cache and tells every other instance to drop theirs. */
  private async announce(): Promise<void> {
    this.forget();
    if (this.sql.engine === 'postgres') await this.sql.notify(REPOS_CHANGED).catch(() => undefined);
  }

  private forget(): void {
    this.generation++;
    this.found.clear();
  }

  override async findRepo(owner: string, name: string): Promise<Repo | undefined> {
    if (this.sql.engine === 'postgres') {
      // Every notification, including the empty one after the listener reconnects, drops everything.
      this.watching ??= this.sql.listen(REPOS_CHANGED, () => this.forget()).then(
        () => void (this.heard = true),
        () => undefined,
      );
    } else {
      // SQLite: `mkt admin` may write the file from another process, whose changes no
      // notification announces; the file's data version moves with every commit of another
      // connection. Reading it starts a read transaction, nearly the lookup's own cost, so it is
      // read at most every DATA_VERSION_TTL_MS: another process's change is seen that much later.
      const now = performance.now();
      if (now - this.dataVersionAt >= DATA_VERSION_TTL_MS) {
        const version = await this.sql.value<number>('PRAGMA data_version');
        if (version !== this.dataVersion) {
          this.forget();
          this.dataVersion = version;
        }
        this.dataVersionAt = now;
      }
      this.heard = true;
    }
    const key = `${owner}\0${name}`;
    const hit = this.found.get(key);
    if (hit) return { ...hit };
    const gen = this.generation;
    const repo = await super.findRepo(owner, name);
    // Only repositories found: names anyone may ask for must not fill the cache, and a name not
    // found now is found as soon as it is created.
    if (repo && this.heard && gen === this.generation) {
      if (this.found.size >= FOUND_ENTRIES) this.found.clear();
      this.found.set(key, { ...repo });
    }
    return repo;
  }

  cachedRepo(owner: string, name: string): Readonly<Repo> | undefined {
    // As findRepo trusts its cache: PostgreSQL once the listener is in place, SQLite while the
    // file's data version was read within DATA_VERSION_TTL_MS. Otherwise findRepo reads.
    if (this.sql.engine === 'postgres' ? !this.heard : performance.now() - this.dataVersionAt >= DATA_VERSION_TTL_MS) return undefined;
    return this.found.get(`${owner}\0${name}`);
  }

  async transaction<T>(fn: (tx: RepoRows) => Promise<T>): Promise<T> {
    let changed = false;
    try {
      return await this.sql.transaction((x) =>
        fn(
          new Rows(x, async () => {
            changed = true;
          }),
        ),
      );
    } finally {
      // Announced once the transaction has ended: before it commits no other instance could see
      // the change, and an instance that dropped its cache early could fill it again meanwhile.
      if (changed) await this.announce();
    }
  }
}
