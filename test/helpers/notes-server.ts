// A running marketplace for notes tests: temp data dir, users `ana` (owner) and `bo`, tokens of
// each scope, a session cookie, and helpers to make commits in a local clone and run git.
import { mkdirSync, writeFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { join } from 'node:path';
import { startService, type RunningService } from '../../daemon/start.js';
import { captureLog } from './log-capture.js';
import type { Clock } from '../../src/util/clock.js';
import { AccountsAdmin } from '../../daemon/services/marketplace/accounts/admin.js';
import { tempDir } from './tmp.js';
import { marketplaceDatabaseUrl } from './pg.js';
import { GIT_ENV, gitIn } from './git.js';

export { GIT_ENV, gitIn };

export interface NotesServer {
  url: string;
  /** The server itself (inject() reaches its fastify routes, never a direct lane). */
  app: FastifyInstance;
  dataDir: string;
  /** The PostgreSQL database the server runs on (MKT_TEST_ENGINE=postgres), else undefined (SQLite in dataDir). */
  databaseUrl: string | undefined;
  admin: AccountsAdmin;
  tokens: { anaPush: string; anaRead: string; boPush: string; boRead: string };
  anaSession: string;
  log(): string;
  close(): Promise<void>;
}

/** `clock` replaces the system clock (the note writer reads it just before each write). */
export async function startNotesServer(opts: { clock?: Clock } = {}): Promise<NotesServer> {
  const dir = tempDir('mkt-notes-');
  const { logger, text: log } = captureLog('debug');
  // MKT_TEST_ENGINE=postgres: the server and the administration share a fresh PostgreSQL database.
  const databaseUrl = await marketplaceDatabaseUrl();
  const flags = databaseUrl ? { databaseUrl } : {};
  const svc: RunningService = await startService('marketplace', { host: '127.0.0.1', port: 0, dataDir: dir.path, options: flags, env: {}, logger, clock: opts.clock, out: { write: () => true } as unknown as NodeJS.WritableStream });
  const admin = await AccountsAdmin.open({ dataDir: dir.path, databaseUrl });
  await admin.addUser({ name: 'ana', email: 'ana@example.com' });
  await admin.addUser({ name: 'bo', email: 'bo@example.com' });
  const tokens = {
    anaPush: (await admin.createToken('ana', 'push')).token,
    anaRead: (await admin.createToken('ana', 'read')).token,
    boPush: (await admin.createToken('bo', 'push')).token,
    boRead: (await admin.createToken('bo', 'read')).token,
  };
  const anaSession = (await admin.createSession('ana')).value;
  return {
    url: svc.url,
    app: svc.app,
    dataDir: dir.path,
    databaseUrl,
    admin,
    tokens,
    anaSession,
    log,
    async close() {
      await admin.close();
      await svc.close();
      dir.remove();
    },
  };
}

/** A fixed identity and no user or system config, for every git the notes tests run. */

/**
 * Stock git as Ana, pushing and fetching with `token` as the HTTP Basic password through an extra
 * header (kept out of argv and URLs), with no user or system config but `home`.
 */
export function gitEnvAsAna(home: string, token: string): NodeJS.ProcessEnv {
  const basic = Buffer.from(`ana:${token}`).toString('base64');
  return {
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_AUTHOR_NAME: 'Ana',
    GIT_AUTHOR_EMAIL: 'ana@example.com',
    GIT_COMMITTER_NAME: 'Ana',
    GIT_COMMITTER_EMAIL: 'ana@example.com',
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: 'http.extraHeader',
    GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}`,
  };
}

/** Runs git asynchronously: the server under test lives in this process, so a sync call would deadlock. */

/** A fresh local repository with `n` commits; returns its path and the commit ids, oldest first. */
export async function localRepo(parent: string, name: string, n: number, objectFormat: 'sha1' | 'sha256' = 'sha1'): Promise<{ dir: string; commits: string[] }> {
  const dir = join(parent, name);
  mkdirSync(dir, { recursive: true });
  await gitIn(dir, ['init', '-q', `--object-format=${objectFormat}`, '-b', 'main']);
  const commits: string[] = [];
  for (let i = 0; i < n; i++) {
    writeFileSync(join(dir, 'file.txt'), `version ${i}\n`);
    await gitIn(dir, ['add', 'file.txt']);
    await gitIn(dir, ['commit', '-q', '-m', `commit ${i}`]);
    commits.push(await gitIn(dir, ['rev-parse', 'HEAD']));
  }
  return { dir, commits };
}

/**
 * Ana's two hosted repositories, `ana/app` (public) and `ana/secret` (private), SHA-1, and a local
 * clone of `n` commits pushed to app (and to secret unless `secretEmpty`).
 */
export async function anaRepos(server: NotesServer, parent: string, n: number, opts: { secretEmpty?: boolean } = {}): Promise<{ dir: string; commits: string[] }> {
  await server.admin.createRepo('ana/app', { private: false, objectFormat: 'sha1' });
  await server.admin.createRepo('ana/secret', { private: true, objectFormat: 'sha1' });
  const local = await localRepo(parent, 'app', n);
  await gitIn(local.dir, ['push', '-q', gitUrl(server, 'ana/app', server.tokens.anaPush), 'main']);
  if (!opts.secretEmpty) await gitIn(local.dir, ['push', '-q', gitUrl(server, 'ana/secret', server.tokens.anaPush), 'main']);
  return local;
}

/** The smart-HTTP URL of a hosted repository with a token as Basic password. */
export function gitUrl(server: NotesServer, repo: string, token?: string): string {
  const u = new URL(`${server.url}/${repo}.git`);
  if (token) {
    u.username = 'x';
    u.password = token;
  }
  return u.toString();
}

export interface ApiCallOptions {
  /** A bearer token. */
  token?: string;
  /** A whole Authorization header (wins over token). */
  auth?: string;
  cookie?: string;
  /** Sent as JSON. */
  body?: unknown;
}

/** One JSON request to a marketplace: its status and parsed body ({} when empty). */
export async function apiCall(baseUrl: string, method: string, path: string, opts: ApiCallOptions = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.auth) headers.authorization = opts.auth;
  if (opts.cookie) headers.cookie = opts.cookie;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/**
 * Whether the clock is being read by the note writer (src/notes/writer.ts), which reads it just
 * before each write. A racing clock acts on these reads alone: the service's other readers (the
 * license audit job's minutely timer, the sync reaper) once fired inside a race's window on a
 * loaded machine and took the move meant for the write.
 */
export function readByNoteWriter(): boolean {
  return /notes[\\/]writer\.[jt]s/.test(new Error().stack ?? '');
}
