// A marketplace server with only the license area, for license tests: temp data dir, log captured
// in memory (at trace level, to prove keys never reach it), admin on the same stores. Its database
// is SQLite in the data dir, or PostgreSQL: `databaseUrl` (several servers on one URL are several
// instances on one database), else a fresh one when MKT_TEST_ENGINE=postgres.
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../daemon/server.js';
import { captureLog } from './log-capture.js';
import type { SqlDatabase } from '../../src/store/sql.js';
import { openSqlDatabase } from '../../src/store/open.js';
import { SqlLicenseStore } from '../../src/store/license-sql.js';
import { SqlLimiterWindows } from '../../src/store/limiter-windows-sql.js';
import { SqlLicenseAuditStore } from '../../src/store/license-events-sql.js';
import type { LicenseStore } from '../../src/store/license.js';
import type { MarketplaceStores } from '../../src/store/marketplace.js';
import { ManualClock } from '../../src/util/clock.js';
import { openLicenseArea } from '../../daemon/services/marketplace/license/index.js';
import { LicenseAdmin } from '../../daemon/services/marketplace/license/admin.js';
import { marketplaceDatabaseUrl } from './pg.js';
import { tempDir } from './tmp.js';
import { marketplaceOptions, type MarketplaceOptions } from '../../daemon/services/marketplace/options.js';
import { resolveOptions } from '../../daemon/service-options.js';
import type { ServerTimeouts } from '../../daemon/timeouts.js';

export interface LicenseServer {
  app: FastifyInstance;
  url: string;
  dataDir: string;
  /** PostgreSQL URL of its database; undefined on SQLite. */
  databaseUrl: string | undefined;
  clock: ManualClock;
  admin: LicenseAdmin;
  /** The server's license store (signing keys, keys, activations). */
  license: LicenseStore;
  log(): string;
  /** SIGHUP: what the service runner calls on reload. */
  reload(): Promise<void>;
  close(): Promise<void>;
}

export interface LicenseServerOptions {
  flags?: MarketplaceOptions;
  listen?: boolean;
  now?: number;
  /** A data dir to use (and keep); servers given the same one share it as instances share a volume. */
  dataDir?: string;
  /** PostgreSQL database; absent: a fresh one under MKT_TEST_ENGINE=postgres, else SQLite in the data dir. */
  databaseUrl?: string;
  env?: NodeJS.ProcessEnv;
  /** Starts the area's background work (webhook delivery, the audit job), as `mkt serve` does after listening. */
  startJobs?: boolean;
  /** Shortened server timeouts (daemon/timeouts.ts). */
  timeouts?: Partial<ServerTimeouts>;
}

/**
 * SQLite databases by file, shared by the servers of one process on one data dir: two connections
 * of one process would block each other's write transactions (BEGIN IMMEDIATE waits synchronously).
 */
const sqlite = new Map<string, { db: Promise<SqlDatabase>; users: number }>();

async function database(dataDir: string, databaseUrl: string | undefined): Promise<{ sql: SqlDatabase; release(): Promise<void> }> {
  if (databaseUrl) {
    const sql = await openSqlDatabase({ dataDir, file: 'marketplace.db', databaseUrl });
    return { sql, release: () => sql.close() };
  }
  const file = join(dataDir, 'marketplace.db');
  let entry = sqlite.get(file);
  if (!entry) {
    entry = { db: openSqlDatabase({ dataDir, file: 'marketplace.db' }), users: 0 };
    sqlite.set(file, entry);
  }
  entry.users++;
  const shared = entry;
  const sql = await shared.db;
  return {
    sql,
    async release() {
      if (--shared.users > 0) return;
      sqlite.delete(file);
      await sql.close();
    },
  };
}

export async function startLicenseServer(opts: LicenseServerOptions = {}): Promise<LicenseServer> {
  const dir = opts.dataDir ? { path: opts.dataDir, remove: () => undefined } : tempDir('mkt-license-');
  const databaseUrl = 'databaseUrl' in opts ? opts.databaseUrl : await marketplaceDatabaseUrl();
  const clock = new ManualClock(opts.now ?? Date.now());
  const { logger, text: log } = captureLog();
  const { sql, release } = await database(dir.path, databaseUrl);
  const license = await SqlLicenseStore.open(sql);
  // The license area uses only these stores.
  const stores = { sql, license, limiter: await SqlLimiterWindows.open(sql), licenseAudit: await SqlLicenseAuditStore.open(sql), close: release } as Partial<MarketplaceStores> as MarketplaceStores;
  const env = opts.env ?? {};
  const area = await openLicenseArea({
    ctx: { server: { host: '127.0.0.1', port: 0, dataDir: dir.path, env }, options: resolveOptions('marketplace', marketplaceOptions, opts.flags ?? {}, env), logger, clock, announce: () => undefined },
    stores,
    dataDir: dir.path,
  });
  const app = await buildServer({
    service: { openapi: { title: 'mkt marketplace (license area)', version: '0.16.0' }, register: (a) => area.register(a), close: () => area.close() },
    logger,
    timeouts: opts.timeouts,
  });
  let url = '';
  if (opts.listen !== false) url = await app.listen({ host: '127.0.0.1', port: 0 });
  if (opts.startJobs) await area.start?.(app);
  const admin = new LicenseAdmin({ store: license, dataDir: dir.path, env, now: () => clock.now() });
  return {
    app,
    url,
    dataDir: dir.path,
    databaseUrl,
    clock,
    admin,
    license,
    log,
    reload: async () => area.reload?.(),
    async close() {
      await app.close();
      await area.close();
      await release();
      dir.remove();
    },
  };
}
