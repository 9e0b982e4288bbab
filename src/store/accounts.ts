// Marketplace accounts: users, personal access tokens and browser sessions.
// Interface first; the SQLite adapter below it. Shared by the notes, license and sync areas
// and by `mkt admin`.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { migrate, type Db } from './sqlite.js';

export interface User {
  id: string;
  name: string;
  email: string;
  created_at: string;
}

export interface AccountsStore {
  addUser(input: { name: string; email: string; passwordHash?: string | null }): Promise<User>;
  findUserByName(name: string): Promise<User | undefined>;
  findUserByEmail(email: string): Promise<User | undefined>;
  getUser(id: string): Promise<User | undefined>;
  /** The stored password hash (see src/crypto/password.ts), if the user has a password. */
  getPasswordHash(userId: string): Promise<string | undefined>;
  setPasswordHash(userId: string, hash: string): Promise<void>;
  /** Mints a personal access token; the plain value is returned once, only its hash is kept. */
  createToken(input: { userId: string; scope: TokenScope; name?: string }): Promise<{ token: string; info: TokenInfo }>;
  /** Revokes by token id or by the token itself; false when nothing matched. */
  revokeToken(idOrToken: string): Promise<boolean>;
  listTokens(userId: string): Promise<TokenInfo[]>;
  /** The user and scope of a live token, else undefined. */
  authenticateToken(token: string): Promise<{ user: User; scope: TokenScope; tokenId: string } | undefined>;
  /** Mints a browser session (cookie value returned once; only its hash is kept). */
  createSession(userId: string, lifetimeMs?: number): Promise<{ value: string; expiresAt: string }>;
  authenticateSession(value: string, nowMs?: number): Promise<User | undefined>;
}

export type TokenScope = 'read' | 'push';
export interface TokenInfo {
  id: string;
  user_id: string;
  name: string;
  scope: TokenScope;
  created_at: string;
  revoked_at: string | null;
}

/** Cookie that carries a browser session (reads only; writes with it answer 403). */
export const SESSION_COOKIE = 'mkt_session';
export const SESSION_LIFETIME_MS = 14 * 24 * 3600 * 1000;
const TOKEN_PREFIX = 'mkt_';

/** SHA-256 of a 256-bit random secret: a lookup key that reveals nothing and needs no salt. */
function secretDigest(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

export type OpenAccountsStore = (db: Db) => AccountsStore;

const MIGRATIONS = [
  `CREATE TABLE users (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL UNIQUE COLLATE NOCASE,
     email TEXT NOT NULL UNIQUE COLLATE NOCASE,
     password_hash TEXT,
     created_at TEXT NOT NULL
   );`,
  `CREATE TABLE tokens (
     id TEXT PRIMARY KEY,
     user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
     name TEXT NOT NULL,
     scope TEXT NOT NULL CHECK (scope IN ('read', 'push')),
     digest TEXT NOT NULL UNIQUE,
     created_at TEXT NOT NULL,
     revoked_at TEXT
   );
   CREATE INDEX tokens_user ON tokens (user_id);
   CREATE TABLE sessions (
     digest TEXT PRIMARY KEY,
     user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
     created_at TEXT NOT NULL,
     expires_ms INTEGER NOT NULL
   ) WITHOUT ROWID;`,
];

export class SqliteAccountsStore implements AccountsStore {
  private readonly q;
  constructor(private readonly db: Db) {
    migrate(db, 'accounts', MIGRATIONS);
    this.q = {
      insert: db.prepare('INSERT INTO users (id, name, email, password_hash, created_at) VALUES (?, ?, ?, ?, ?)'),
      byName: db.prepare('SELECT id, name, email, created_at FROM users WHERE name = ?'),
      byEmail: db.prepare('SELECT id, name, email, created_at FROM users WHERE email = ?'),
      byId: db.prepare('SELECT id, name, email, created_at FROM users WHERE id = ?'),
      hash: db.prepare('SELECT password_hash FROM users WHERE id = ?').pluck(),
      setHash: db.prepare('UPDATE users SET password_hash = ? WHERE id = ?'),
      insertToken: db.prepare('INSERT INTO tokens (id, user_id, name, scope, digest, created_at) VALUES (?, ?, ?, ?, ?, ?)'),
      revokeToken: db.prepare('UPDATE tokens SET revoked_at = ? WHERE (id = ? OR digest = ?) AND revoked_at IS NULL'),
      listTokens: db.prepare('SELECT id, user_id, name, scope, created_at, revoked_at FROM tokens WHERE user_id = ? ORDER BY created_at, id'),
      tokenByDigest: db.prepare(
        'SELECT t.id AS token_id, t.scope, u.id, u.name, u.email, u.created_at FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.digest = ? AND t.revoked_at IS NULL',
      ),
      insertSession: db.prepare('INSERT INTO sessions (digest, user_id, created_at, expires_ms) VALUES (?, ?, ?, ?)'),
      sessionUser: db.prepare(
        'SELECT u.id, u.name, u.email, u.created_at FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.digest = ? AND s.expires_ms > ?',
      ),
      purgeSessions: db.prepare('DELETE FROM sessions WHERE expires_ms <= ?'),
    };
  }

  async addUser(input: { name: string; email: string; passwordHash?: string | null }): Promise<User> {
    const user: User = { id: randomUUID(), name: input.name, email: input.email, created_at: new Date().toISOString() };
    this.q.insert.run(user.id, user.name, user.email, input.passwordHash ?? null, user.created_at);
    return user;
  }
  async findUserByName(name: string): Promise<User | undefined> {
    return this.q.byName.get(name) as User | undefined;
  }
  async findUserByEmail(email: string): Promise<User | undefined> {
    return this.q.byEmail.get(email) as User | undefined;
  }
  async getUser(id: string): Promise<User | undefined> {
    return this.q.byId.get(id) as User | undefined;
  }
  async getPasswordHash(userId: string): Promise<string | undefined> {
    return (this.q.hash.get(userId) as string | null | undefined) ?? undefined;
  }
  async setPasswordHash(userId: string, hash: string): Promise<void> {
    this.q.setHash.run(hash, userId);
  }

  async createToken(input: { userId: string; scope: TokenScope; name?: string }): Promise<{ token: string; info: TokenInfo }> {
    const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
    const info: TokenInfo = {
      id: randomBytes(6).toString('hex'),
      user_id: input.userId,
      name: input.name ?? `${input.scope} token`,
      scope: input.scope,
      created_at: new Date().toISOString(),
      revoked_at: null,
    };
    this.q.insertToken.run(info.id, info.user_id, info.name, info.scope, secretDigest(token), info.created_at);
    return { token, info };
  }
  async revokeToken(idOrToken: string): Promise<boolean> {
    return this.q.revokeToken.run(new Date().toISOString(), idOrToken, secretDigest(idOrToken)).changes > 0;
  }
  async listTokens(userId: string): Promise<TokenInfo[]> {
    return this.q.listTokens.all(userId) as TokenInfo[];
  }
  async authenticateToken(token: string): Promise<{ user: User; scope: TokenScope; tokenId: string } | undefined> {
    const row = this.q.tokenByDigest.get(secretDigest(token)) as (User & { token_id: string; scope: TokenScope }) | undefined;
    if (!row) return undefined;
    const { token_id, scope, ...user } = row;
    return { user, scope, tokenId: token_id };
  }
  async createSession(userId: string, lifetimeMs = SESSION_LIFETIME_MS): Promise<{ value: string; expiresAt: string }> {
    const now = Date.now();
    this.q.purgeSessions.run(now);
    const value = randomBytes(32).toString('base64url');
    this.q.insertSession.run(secretDigest(value), userId, new Date(now).toISOString(), now + lifetimeMs);
    return { value, expiresAt: new Date(now + lifetimeMs).toISOString() };
  }
  async authenticateSession(value: string, nowMs = Date.now()): Promise<User | undefined> {
    return this.q.sessionUser.get(secretDigest(value), nowMs) as User | undefined;
  }
}
