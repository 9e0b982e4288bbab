// Local administration of marketplace accounts and hosted repositories (what `mkt admin user|
// token|session|repo|reindex` run, on the marketplace's stores and the data dir's repositories):
// users with password hashes, tokens and sessions shown once, bare repositories created with git,
// grants, index rebuilds. Works on whichever database the stores sit on (SQLite or PostgreSQL).
import { randomBytes } from 'node:crypto';
import { existsSync, renameSync, rmSync } from 'node:fs';
import type { AccountsStore, TokenInfo, TokenScope, User } from '../../../../src/store/accounts.js';
import type { ObjectFormat, Repo, RepoPermission, RepoRows, RepoStore } from '../../../../src/store/repos.js';
import type { NotesIndex } from '../../../../src/store/notes.js';
import { CATCH_UP_JOB, NotesIndexer } from '../../../../src/notes/indexer.js';
import { branchNameProblem, DEFAULT_BRANCH, initBareRepo, nameProblem, repoDir } from '../../../../src/git/hosting.js';
import { hashPassword } from '../../../../src/crypto/password.js';
import type { MarketplaceStores } from '../../../../src/store/marketplace.js';

/** A failure of an admin verb that the user can fix (shown as one line). */
export class AdminInputError extends Error {}

/** C0 controls and DEL: never part of a name or address, and NUL cannot be stored in PostgreSQL text. */
function hasControl(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/**
 * What is wrong with a user to add, before any store is opened (so a refused first `user add`
 * creates no marketplace), or undefined.
 */
export function userInputProblem(input: { name: string; email: string; password?: string }): string | undefined {
  const problem = nameProblem('owner', input.name);
  if (problem) return problem.replace('owner name', 'user name');
  if (!/^[^\s@]+@[^\s@]+$/.test(input.email) || hasControl(input.email)) return `not an email address: ${JSON.stringify(input.email)}`;
  if (input.password !== undefined && input.password.length < 8) return 'password must be at least 8 characters';
  return undefined;
}

/** The stores the administration works on. */
export type AccountsAdminStores = Pick<MarketplaceStores, 'accounts' | 'repos' | 'notes' | 'sql'>;

export class AccountsAdmin {
  readonly accounts: AccountsStore;
  readonly repos: RepoStore;
  private readonly index: NotesIndex;
  private readonly sql: AccountsAdminStores['sql'];

  /**
   * `dataDir` holds the bare repositories; `onClose` releases the stores when this administration
   * opened them itself (see open()); stores passed in stay the caller's to close.
   */
  constructor(
    stores: AccountsAdminStores,
    private readonly dataDir: string,
    private readonly onClose?: () => Promise<void>,
  ) {
    this.accounts = stores.accounts;
    this.repos = stores.repos;
    this.index = stores.notes;
    this.sql = stores.sql;
  }

  /** Opens the marketplace stores (SQLite in the data dir, or PostgreSQL) for this administration alone. */
  static async open(target: { dataDir: string; databaseUrl?: string }): Promise<AccountsAdmin> {
    const { openMarketplaceStores } = await import('../../../../src/store/marketplace.js');
    const stores = await openMarketplaceStores({ dataDir: target.dataDir, databaseUrl: target.databaseUrl });
    return new AccountsAdmin(stores, target.dataDir, () => stores.close());
  }

  async close(): Promise<void> {
    await this.onClose?.();
  }

  private async user(name: string): Promise<User> {
    const u = await this.accounts.findUserByName(name);
    if (!u) throw new AdminInputError(`no user ${JSON.stringify(name)} (add one with \`mkt admin user add\`)`);
    return u;
  }

  async addUser(input: { name: string; email: string; password?: string }): Promise<User> {
    const problem = userInputProblem(input);
    if (problem) throw new AdminInputError(problem);
    // Hashed before the transaction: scrypt is slow and would hold every other add waiting.
    const passwordHash = input.password === undefined ? null : await hashPassword(input.password);
    return this.accounts.transaction(async (tx) => {
      // Adds take turns on every instance, so the loser of a race hears which part is taken
      // rather than a unique-index error.
      await tx.lock('accounts:users');
      if (await tx.findUserByName(input.name)) throw new AdminInputError(`user ${input.name} already exists`);
      if (await tx.findUserByEmail(input.email)) throw new AdminInputError(`email ${input.email} is already used`);
      return tx.addUser({ name: input.name, email: input.email, passwordHash });
    });
  }

  async createToken(userName: string, scope: TokenScope, name?: string): Promise<{ token: string; info: TokenInfo }> {
    if (name !== undefined && hasControl(name)) throw new AdminInputError('a token name cannot hold control characters');
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

  private async findRepo(full: string): Promise<Repo> {
    const { owner, name } = this.parseRepo(full);
    const repo = await this.repos.findRepo(owner, name);
    if (!repo) throw new AdminInputError(`no repository ${owner}/${name}`);
    return repo;
  }

  /** `defaultBranch`: the branch HEAD names (default main); the first branch pushed replaces it while it is missing. */
  async createRepo(full: string, opts: { private: boolean; objectFormat: ObjectFormat; defaultBranch?: string }): Promise<{ repo: Repo; dir: string }> {
    const { owner, name } = this.parseRepo(full);
    const problem = nameProblem('repository', name);
    if (problem) throw new AdminInputError(problem);
    const branch = opts.defaultBranch ?? DEFAULT_BRANCH;
    const branchProblem = await branchNameProblem(branch);
    if (branchProblem) throw new AdminInputError(branchProblem);
    const u = await this.user(owner);
    const dir = repoDir(this.dataDir, u.name, name);
    const taken = async (rows: RepoRows, onDisk: boolean): Promise<void> => {
      if (await rows.findRepo(owner, name)) throw new AdminInputError(`repository ${owner}/${name} already exists`);
      if (onDisk && existsSync(dir)) throw new AdminInputError(`${dir} already exists on disk; move it away first`);
    };
    await taken(this.repos, true);
    // git runs outside the transaction (it would hold the database's write lock while it runs) on a
    // staging directory that the transaction renames into place just before the row is written.
    const staging = `${dir}.mkt-${randomBytes(6).toString('hex')}.tmp`;
    let placed = false;
    try {
      await initBareRepo(staging, opts.objectFormat, branch);
      return await this.repos.transaction(async (tx) => {
        // Creates of one name take turns (on every instance): the second finds the first's row and
        // never touches the directory the first placed.
        await tx.lock(`repos:${u.name.toLowerCase()}/${name.toLowerCase()}`);
        await taken(tx, !placed);
        if (!placed) {
          renameSync(staging, dir);
          placed = true;
        }
        const repo = await tx.createRepo({ ownerId: u.id, owner: u.name, name, private: opts.private, objectFormat: opts.objectFormat });
        return { repo, dir };
      });
    } catch (err) {
      // No row records the directory: remove it so the name can be created again.
      if (placed) rmSync(dir, { recursive: true, force: true });
      throw err;
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }

  async grant(full: string, userName: string, permission: RepoPermission): Promise<Repo> {
    const repo = await this.findRepo(full);
    const u = await this.user(userName);
    await this.repos.grant(repo.id, u.id, permission);
    return repo;
  }

  listRepos(): Promise<Repo[]> {
    return this.repos.listRepos();
  }

  /** Rebuilds the notes index of one repository, or of all of them. */
  async reindex(full?: string): Promise<{ repo: string; namespaces: number; notes: number }[]> {
    const targets = full ? [await this.findRepo(full)] : await this.repos.listRepos();
    const indexer = new NotesIndexer(this.index);
    const out: { repo: string; namespaces: number; notes: number }[] = [];
    try {
      // One reindexing at a time across the cluster: a server's start-up catch-up or another admin.
      const ran = await this.sql.exclusive(CATCH_UP_JOB, async () => {
        for (const repo of targets) {
          const r = await indexer.rebuild({ id: repo.id, dir: repoDir(this.dataDir, repo.owner, repo.name) });
          out.push({ repo: `${repo.owner}/${repo.name}`, ...r });
        }
      });
      if (!ran) throw new Error('the notes index is being rebuilt or caught up by another process; try again when it is done');
    } finally {
      // Stops its notification listener, which would keep a PostgreSQL connection open.
      await indexer.close();
    }
    return out;
  }
}
