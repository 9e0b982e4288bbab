// A real `mkt serve marketplace` (startService) for sync tests: temp data dir, a ManualClock,
// the log captured at trace level (to prove ciphertext and secrets stay out of it), an app and
// users created through the admin path on the same stores, and small JSON request helpers. The
// database is the data dir's own: SQLite in it, or under MKT_TEST_ENGINE=postgres a PostgreSQL
// database that belongs to the data dir (the same again when a test restarts a server on it).
// Two servers share one database when given the same `databaseUrl` (and data dir, for the secret).
import { Writable } from 'node:stream';
import { startService, type RunningService } from '../../daemon/start.js';
import { captureLog } from './log-capture.js';
import { SyncAdmin } from '../../daemon/services/marketplace/sync/admin.js';
import { openMarketplaceStores } from '../../src/store/marketplace.js';
import { marketplaceEnvFor } from './pg.js';
import { hashPassword } from '../../src/crypto/password.js';
import type { SyncAppPricing } from '../../src/store/sync.js';
import { ManualClock } from '../../src/util/clock.js';
import { tempDir } from './tmp.js';
import type { MarketplaceOptions } from '../../daemon/services/marketplace/options.js';

export interface Answer<T = Record<string, unknown>> {
  status: number;
  body: T;
}

export interface SyncServer {
  url: string;
  dataDir: string;
  /** The PostgreSQL database the server runs on, undefined on SQLite (in the data dir). */
  databaseUrl: string | undefined;
  clock: ManualClock;
  svc: RunningService;
  log(): string;
  createApp(name: string, pricing?: Partial<SyncAppPricing>): Promise<{ id: string; apiKey: string }>;
  /** A user with this password (none: a user who cannot sign in to sync). */
  addUser(name: string, email: string, password?: string): Promise<string>;
  signIn(apiKey: string, email: string, password: string): Promise<string>;
  /** A JSON request; `token` adds `Authorization: Bearer`. */
  call<T = Record<string, unknown>>(method: string, path: string, opts?: { token?: string; body?: unknown; headers?: Record<string, string> }): Promise<Answer<T>>;
  close(): Promise<void>;
}

export interface SyncServerOptions {
  flags?: MarketplaceOptions;
  now?: string;
  /** The data dir (the caller's to remove); default a fresh temp dir. */
  dataDir?: string;
  /** The PostgreSQL database to run on (another server's, to share it); default the data dir's own. */
  databaseUrl?: string;
  /** The server's environment (MKT_SYNC_SECRET_FILE, ...); default empty. */
  env?: NodeJS.ProcessEnv;
}

export async function startSyncServer(opts: SyncServerOptions = {}): Promise<SyncServer> {
  // A given data dir is the caller's to remove.
  const dir = opts.dataDir ? { path: opts.dataDir, remove: () => undefined } : tempDir('mkt-sync-');
  const clock = new ManualClock(Date.parse(opts.now ?? '2026-03-01T12:00:00.000Z'));
  const { logger, text: log } = captureLog();
  let svc: RunningService;
  let databaseUrl: string | undefined;
  try {
    databaseUrl = opts.databaseUrl ?? (await marketplaceEnvFor(dir.path)).MKT_DATABASE_URL;
    const flags = { ...opts.flags, ...(databaseUrl ? { databaseUrl } : {}) };
    svc = await startService('marketplace', { host: '127.0.0.1', port: 0, dataDir: dir.path, options: flags, env: opts.env ?? {}, logger, clock, out: new Writable({ write: (_c, _e, cb) => cb() }) });
  } catch (err) {
    dir.remove();
    throw err;
  }
  // The admin path's own stores, as `mkt admin` opens them beside a running server.
  const stores = await openMarketplaceStores({ dataDir: dir.path, databaseUrl }).catch(async (err: unknown) => {
    await svc.close();
    dir.remove();
    throw err;
  });
  const admin = new SyncAdmin(stores, () => clock.now());
  const accounts = stores.accounts;

  const call = async <T,>(method: string, path: string, o: { token?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Answer<T>> => {
    const headers: Record<string, string> = { ...o.headers };
    if (o.token !== undefined) headers.authorization = `Bearer ${o.token}`;
    if (o.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(svc.url + path, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
  };

  return {
    url: svc.url,
    dataDir: dir.path,
    databaseUrl,
    clock,
    svc,
    log,
    async createApp(name, pricing) {
      const made = await admin.createApp(name, pricing);
      if (!made) throw new Error(`app ${name} exists`);
      return { id: made.app.id, apiKey: made.apiKey };
    },
    async addUser(name, email, password) {
      const u = await accounts.addUser({ name, email, passwordHash: password === undefined ? null : await hashPassword(password) });
      return u.id;
    },
    async signIn(apiKey, email, password) {
      const r = await call<{ token: string }>('POST', '/api/v1/sync/auth', { body: { api_key: apiKey, email, password } });
      if (r.status !== 200) throw new Error(`sign-in failed: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.token;
    },
    call,
    async close() {
      await svc.close();
      await stores.close();
      dir.remove();
    },
  };
}
