// Marketplace accounts: users, personal access tokens and browser sessions; the interface every
// engine's adapter (src/store/accounts-sql.ts) implements. Shared by the notes, license and sync
// areas and by `mkt admin`.
import { hash } from 'node:crypto';

export interface User {
  id: string;
  name: string;
  email: string;
  created_at: string;
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

/** Row operations on accounts, on the database or inside one transaction. */
export interface AccountsRows {
  /**
   * Serialises, until the transaction ends, every transaction that locks the same key (across
   * instances on PostgreSQL). Only inside `transaction()`.
   */
  lock(key: string): Promise<void>;
  /** Inserts a user; a name or email already taken (ignoring case) is a unique-constraint error. */
  addUser(input: { name: string; email: string; passwordHash?: string | null }): Promise<User>;
  /** Names and emails match without regard to case. */
  findUserByName(name: string): Promise<User | undefined>;
  findUserByEmail(email: string): Promise<User | undefined>;
  getUser(id: string): Promise<User | undefined>;
  /** The stored password hash (see src/crypto/password.ts), if the user has a password. */
  getPasswordHash(userId: string): Promise<string | undefined>;
  setPasswordHash(userId: string, hash: string): Promise<void>;
  /** Mints a personal access token; the plain value is returned once, only its hash is kept. */
  createToken(input: { userId: string; scope: TokenScope; name?: string }): Promise<{ token: string; info: TokenInfo }>;
  /** Revokes by token id or by the token itself; false when nothing live matched. */
  revokeToken(idOrToken: string): Promise<boolean>;
  listTokens(userId: string): Promise<TokenInfo[]>;
  /** Every user, by name (ignoring case). */
  listUsers(): Promise<User[]>;
  /** Every token (never its value or digest) with its user's name, by user name then creation. */
  listAllTokens(): Promise<(TokenInfo & { user: string })[]>;
  /** The user and scope of a live token, else undefined. */
  authenticateToken(token: string): Promise<{ user: User; scope: TokenScope; tokenId: string } | undefined>;
  /** Mints a browser session (cookie value returned once; only its hash is kept). */
  createSession(userId: string, lifetimeMs?: number): Promise<{ value: string; expiresAt: string }>;
  authenticateSession(value: string, nowMs?: number): Promise<User | undefined>;
}

export interface AccountsStore extends AccountsRows {
  /** Runs `fn` in one transaction; decisions (is this name free?) are made in it. */
  transaction<T>(fn: (tx: AccountsRows) => Promise<T>): Promise<T>;
}

/** Cookie that carries a browser session (reads only; writes with it answer 403). */
export const SESSION_COOKIE = 'mkt_session';
export const SESSION_LIFETIME_MS = 14 * 24 * 3600 * 1000;
export const TOKEN_PREFIX = 'mkt_';

/**
 * SHA-256 of a 256-bit random secret: a lookup key that reveals nothing and needs no salt. Secrets
 * are found by their digest through an index, so no comparison of the secret itself can leak timing.
 */
export function secretDigest(value: string): string {
  // One-shot: a Hash object costs five times as much, once a request for a session's lookup.
  return hash('sha256', value, 'hex');
}
