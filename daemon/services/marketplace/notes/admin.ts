// Local administration of marketplace accounts and hosted repositories (what `mkt admin user|
// token|session|repo|reindex` run, straight on the data dir): users with password hashes,
// tokens and sessions shown once, bare repositories created with git, grants, index rebuilds.
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase, type Db } from '../../../../src/store/sqlite.js';
import { SqliteAccountsStore, type TokenInfo, type TokenScope, type User } from '../../../../src/store/accounts.js';
import { SqliteRepoStore, type ObjectFormat, type Repo, type RepoPermission } from '../../../../src/store/repos.js';
import { SqliteNotesIndex } from '../../../../src/store/notes.js';
import { NotesIndexer } from '../../../../src/notes/indexer.js';
import { initBareRepo, nameProblem, repoDir } from '../../../../src/git/hosting.js';
import { hashPassword } from '../../../../src/crypto/password.js';

/** A failure of an admin verb that the user can fix (shown as one line). */
export class AdminInputError extends Error {}

export class AccountsAdmin {
  private readonly db: Db;
  readonly accounts: SqliteAccountsStore;
  readonly repos: SqliteRepoStore;
  private readonly index: SqliteNotesIndex;

  constructor(private readonly dataDir: string) {
    this.db = openDatabase(join(dataDir, 'marketplace.db'));
    this.accounts = new SqliteAccountsStore(this.db);
    this.repos = new SqliteRepoStore(this.db);
    this.index = new SqliteNotesIndex(this.db);
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  private async user(name: string): Promise<User> {
    const u = await this.accounts.findUserByName(name);
    if (!u) throw new AdminInputError(`no user ${JSON.stringify(name)} (add one with \`mkt admin user add\`)`);
    return u;
  }

  async addUser(input: { name: string; email: string; password?: string }): Promise<User> {
    const problem = nameProblem('owner', input.name);
    if (problem) throw new AdminInputError(problem.replace('owner name', 'user name'));
    if (!/^[^\s@]+@[^\s@]+$/.test(input.email)) throw new AdminInputError(`not an email address: ${JSON.stringify(input.email)}`);
    if (await this.accounts.findUserByName(input.name)) throw new AdminInputError(`user ${input.name} already exists`);
    if (await this.accounts.findUserByEmail(input.email)) throw new AdminInputError(`email ${input.email} is already used`);
    if (input.password !== undefined && input.password.length < 8) throw new AdminInputError('password must be at least 8 characters');
    const passwordHash = input.password === undefined ? null : await hashPassword(input.password);
    return this.accounts.addUser({ name: input.name, email: input.email, passwordHash });
  }

  async createToken(userName: string, scope: TokenScope, name?: string): Promise<{ token: string; info: TokenInfo }> {
    const u = await this.user(userName);
    return this.accounts.createToken({ userId: u.id, scope, name });
  }

  async revokeToken(idOrToken: string): Promise<boolean> {
    return this.accounts.revokeToken(idOrToken);
  }

  async createSession(userName: string): Promise<{ value: string; expiresAt: string }> {
    const u = await this.user(userName);
    return this.accounts.createSession(u.id);
  }

  private parseRepo(full: string): { owner: string; name: string } {
    const m = /^([^/]+)\/([^/]+)$/.exec(full);
    if (!m) throw new AdminInputError(`repository must be OWNER/REPO, not ${JSON.stringify(full)}`);
    return { owner: m[1]!, name: m[2]!.replace(/\.git$/i, '') };
  }

  private findRepo(full: string): Repo {
    const { owner, name } = this.parseRepo(full);
    const repo = this.repos.findRepo(owner, name);
    if (!repo) throw new AdminInputError(`no repository ${owner}/${name}`);
    return repo;
  }

  async createRepo(full: string, opts: { private: boolean; objectFormat: ObjectFormat }): Promise<{ repo: Repo; dir: string }> {
    const { owner, name } = this.parseRepo(full);
    const problem = nameProblem('repository', name);
    if (problem) throw new AdminInputError(problem);
    const u = await this.user(owner);
    if (this.repos.findRepo(owner, name)) throw new AdminInputError(`repository ${owner}/${name} already exists`);
    const dir = repoDir(this.dataDir, u.name, name);
    if (existsSync(dir)) throw new AdminInputError(`${dir} already exists on disk; move it away first`);
    await initBareRepo(dir, opts.objectFormat);
    try {
      return { repo: this.repos.createRepo({ ownerId: u.id, owner: u.name, name, private: opts.private, objectFormat: opts.objectFormat }), dir };
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  async grant(full: string, userName: string, permission: RepoPermission): Promise<Repo> {
    const repo = this.findRepo(full);
    const u = await this.user(userName);
    this.repos.grant(repo.id, u.id, permission);
    return repo;
  }

  listRepos(): Repo[] {
    return this.repos.listRepos();
  }

  /** Rebuilds the notes index of one repository, or of all of them. */
  async reindex(full?: string): Promise<{ repo: string; namespaces: number; notes: number }[]> {
    const targets = full ? [this.findRepo(full)] : this.repos.listRepos();
    const indexer = new NotesIndexer(this.index);
    const out = [];
    for (const repo of targets) {
      const r = await indexer.rebuild({ id: repo.id, dir: repoDir(this.dataDir, repo.owner, repo.name) });
      out.push({ repo: `${repo.owner}/${repo.name}`, ...r });
    }
    return out;
  }
}
