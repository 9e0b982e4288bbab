// The accounts adapter over the SQL surface (SQLite or PostgreSQL): users, token and session rows.
// Secrets are stored and looked up only as SHA-256 digests.
import { randomBytes, randomUUID } from 'node:crypto';
import type { ComponentMigrations, SqlDatabase, SqlExecutor } from './sql.js';
import {
  SESSION_LIFETIME_MS,
  TOKEN_PREFIX,
  secretDigest,
  type AccountsRows,
  type AccountsStore,
  type TokenInfo,
  type TokenScope,
  type User,
} from './accounts.js';
import { sqlText } from './sql-text.js';

// SQLite: append only, databases in the field are at some version of this list. PostgreSQL: the
// schema SQLite reaches, in one step; names and emails unique ignoring case through lower(), and
// session expiry (ms) as BIGINT.
const MIGRATIONS: ComponentMigrations = {
  sqlite: [
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
  ],
  postgres: [
    `CREATE TABLE users (
       id TEXT PRIMARY KEY,
       name TEXT NOT NULL,
       email TEXT NOT NULL,
       password_hash TEXT,
       created_at TEXT NOT NULL
     );
     CREATE UNIQUE INDEX users_name ON users (lower(name));
     CREATE UNIQUE INDEX users_email ON users (lower(email));
     CREATE TABLE tokens (
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
       expires_ms BIGINT NOT NULL
     );
     CREATE INDEX sessions_expiry ON sessions (expires_ms);`,
  ],
};

const USER = 'id, name, email, created_at';

class Rows implements AccountsRows {
  constructor(protected readonly x: SqlExecutor) {}

  lock(key: string): Promise<void> {
    return this.x.lock(key);
  }

  /** A case-insensitive match of a user column: NOCASE columns on SQLite, the lower() indexes on PostgreSQL. */
  private matchCase(column: 'name' | 'email'): string {
    return this.x.engine === 'postgres' ? `lower(${column}) = lower(?)` : `${column} = ?`;
  }

  async addUser(input: { name: string; email: string; passwordHash?: string | null }): Promise<User> {
    const user: User = { id: randomUUID(), name: input.name, email: input.email, created_at: new Date().toISOString() };
    await this.x.run('INSERT INTO users (id, name, email, password_hash, created_at) VALUES (?, ?, ?, ?, ?)', [
      user.id,
      user.name,
      user.email,
      input.passwordHash ?? null,
      user.created_at,
    ]);
    return user;
  }
  async findUserByName(name: string): Promise<User | undefined> {
    // PostgreSQL text cannot hold NUL (binding one is an error); no stored name or email holds one.
    if (name.includes('\0')) return undefined;
    return this.x.get<User>(`SELECT ${USER} FROM users WHERE ${this.matchCase('name')}`, [name]);
  }
  async findUserByEmail(email: string): Promise<User | undefined> {
    if (email.includes('\0')) return undefined;
    return this.x.get<User>(`SELECT ${USER} FROM users WHERE ${this.matchCase('email')}`, [email]);
  }
  async getUser(id: string): Promise<User | undefined> {
    if (id.includes('\0')) return undefined;
    return this.x.get<User>(sqlText`SELECT ${USER} FROM users WHERE id = ?`, [id]);
  }
  async getPasswordHash(userId: string): Promise<string | undefined> {
    return (await this.x.value<string | null>('SELECT password_hash FROM users WHERE id = ?', [userId])) ?? undefined;
  }
  async setPasswordHash(userId: string, hash: string): Promise<void> {
    await this.x.run('UPDATE users SET password_hash = ? WHERE id = ?', [hash, userId]);
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
    await this.x.run('INSERT INTO tokens (id, user_id, name, scope, digest, created_at) VALUES (?, ?, ?, ?, ?, ?)', [
      info.id,
      info.user_id,
      info.name,
      info.scope,
      secretDigest(token),
      info.created_at,
    ]);
    return { token, info };
  }
  async revokeToken(idOrToken: string): Promise<boolean> {
    if (idOrToken.includes('\0')) return false;
    // One statement, so revoking twice (or from two instances) revokes once and answers false after.
    const r = await this.x.run('UPDATE tokens SET revoked_at = ? WHERE (id = ? OR digest = ?) AND revoked_at IS NULL', [
      new Date().toISOString(),
      idOrToken,
      secretDigest(idOrToken),
    ]);
    return r.changes > 0;
  }
  listTokens(userId: string): Promise<TokenInfo[]> {
    return this.x.all<TokenInfo>('SELECT id, user_id, name, scope, created_at, revoked_at FROM tokens WHERE user_id = ? ORDER BY created_at, id', [userId]);
  }
  listUsers(): Promise<User[]> {
    return this.x.all<User>(sqlText`SELECT ${USER} FROM users ORDER BY lower(name), id`);
  }
  listAllTokens(): Promise<(TokenInfo & { user: string })[]> {
    return this.x.all<TokenInfo & { user: string }>(
      'SELECT t.id, t.user_id, u.name AS user, t.name, t.scope, t.created_at, t.revoked_at FROM tokens t JOIN users u ON u.id = t.user_id ORDER BY lower(u.name), t.created_at, t.id',
    );
  }
  async authenticateToken(token: string): Promise<{ user: User; scope: TokenScope; tokenId: string } | undefined> {
    const row = await this.x.get<User & { token_id: string; scope: TokenScope }>(
      'SELECT t.id AS token_id, t.scope, u.id, u.name, u.email, u.created_at FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.digest = ? AND t.revoked_at IS NULL',
      [secretDigest(token)],
    );
    if (!row) return undefined;
    const { token_id, scope, ...user } = row;
    return { user, scope, tokenId: token_id };
  }
  async createSession(userId: string, lifetimeMs = SESSION_LIFETIME_MS): Promise<{ value: string; expiresAt: string }> {
    const now = Date.now();
    // Expired sessions are swept as new ones are minted, so the table stays the size of the live ones.
    await this.x.run('DELETE FROM sessions WHERE expires_ms <= ?', [now]);
    const value = randomBytes(32).toString('base64url');
    await this.x.run('INSERT INTO sessions (digest, user_id, created_at, expires_ms) VALUES (?, ?, ?, ?)', [
      secretDigest(value),
      userId,
      new Date(now).toISOString(),
      now + lifetimeMs,
    ]);
    return { value, expiresAt: new Date(now + lifetimeMs).toISOString() };
  }
  authenticateSession(value: string, nowMs = Date.now()): Promise<User | undefined> {
    return this.x.get<User>(
      'SELECT u.id, u.name, u.email, u.created_at FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.digest = ? AND s.expires_ms > ?',
      [secretDigest(value), nowMs],
    );
  }
}

export class SqlAccountsStore extends Rows implements AccountsStore {
  private constructor(private readonly sql: SqlDatabase) {
    super(sql);
  }

  /** Migrates the `accounts` component and returns the store. */
  static async open(sql: SqlDatabase): Promise<SqlAccountsStore> {
    await sql.migrate('accounts', MIGRATIONS);
    return new SqlAccountsStore(sql);
  }

  transaction<T>(fn: (tx: AccountsRows) => Promise<T>): Promise<T> {
    return this.sql.transaction((x) => fn(new Rows(x)));
  }
}
