// Several marketplace instances of the sync storage routes on one database, as a balancer would
// have them: each its own fastify server, connection pool, stores, object-store client and reaper,
// sharing only the database, the sync secret, the data dir and (with `s3`) the object store. Only
// the storage side is built (registerStorageRoutes over the real stores), with bearer tokens
// signed by the shared secret, so these tests stand on their own. Also an s3rver with ListParts.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../daemon/server.js';
import { registerStorageRoutes } from '../../daemon/services/marketplace/sync/storage.js';
import { requireSyncAuth, tokenKey } from '../../daemon/services/marketplace/sync/auth.js';
import type { MarketplaceStores } from '../../src/store/marketplace.js';
import { PgDatabase } from '../../src/store/sql-pg.js';
import type { SqlDatabase } from '../../src/store/sql.js';
import { SqlSyncStorageStore } from '../../src/store/sync-billing-sql.js';
import { signSyncToken } from '../../src/crypto/sync-token.js';
import { ManualClock } from '../../src/util/clock.js';
import { captureLog } from './log-capture.js';
import { tempDir } from './tmp.js';
import { startS3rver } from './s3rver.js';
import type { Answer } from './sync-server.js';
import { marketplaceOptions, type MarketplaceOptions } from '../../daemon/services/marketplace/options.js';
import { resolveOptions } from '../../daemon/service-options.js';

export interface StorageInstance {
  url: string;
  clock: ManualClock;
  sql: SqlDatabase;
  /** The instance's log (debug level, JSON lines). */
  log(): string;
  call<T = Record<string, unknown>>(method: string, path: string, opts?: { token?: string; body?: unknown }): Promise<Answer<T>>;
  close(): Promise<void>;
}

export interface StorageCluster {
  instances: StorageInstance[];
  /** The instance after the last one used: every request to the next instance in turn. */
  next(): StorageInstance;
  /** A sync app straight in the database (the storage side reads only its plan). */
  addApp(id: string, freeBytes: number): Promise<void>;
  /** A bearer token of (app, user), valid on every instance. */
  token(appId: string, userId: string): string;
  close(): Promise<void>;
}

export async function startStorageInstances(opts: { databaseUrl: string; count: number; flags?: MarketplaceOptions; now?: string }): Promise<StorageCluster> {
  const dir = tempDir('mkt-storage-instances-');
  const secret = randomBytes(32);
  const start = Date.parse(opts.now ?? '2026-03-01T12:00:00.000Z');
  const instances: StorageInstance[] = [];
  try {
    for (let i = 0; i < opts.count; i++) instances.push(await startInstance(opts.databaseUrl, dir.path, secret, new ManualClock(start), opts.flags ?? {}));
  } catch (err) {
    for (const s of instances) await s.close().catch(() => undefined);
    dir.remove();
    throw err;
  }
  let turn = 0;
  return {
    instances,
    next: () => instances[turn++ % instances.length]!,
    async addApp(id, freeBytes) {
      await instances[0]!.sql.run(
        `INSERT INTO sync_apps (id, name, api_key, min_charge_cents, per_gb_tenths_of_cent_per_month, annual_multiplier, min_cap_bytes, max_cap_bytes, free_bytes, created_at)
         VALUES (?, ?, ?, 100, 25, 10, ?, ?, ?, ?)`,
        [id, `App ${id}`, `key-${id}`, 1024 ** 3, 1024 ** 4, freeBytes, new Date(start).toISOString()],
      );
    },
    token: (appId, userId) => signSyncToken(tokenKey(secret), { appId, userId, nowMs: start, lifetimeSeconds: 30 * 86400 }).token,
    async close() {
      for (const s of instances) await s.close().catch(() => undefined);
      dir.remove();
    },
  };
}

async function startInstance(databaseUrl: string, dataDir: string, secret: Buffer, clock: ManualClock, flags: MarketplaceOptions): Promise<StorageInstance> {
  const sql = await PgDatabase.open(databaseUrl);
  const storage = await SqlSyncStorageStore.open(sql);
  // The storage routes use `sql`, `storage` and, for checkout e-mails, `accounts` only.
  const stores = {
    sql,
    storage,
    accounts: { getUser: async (id: string) => ({ id, name: id, email: `${id}@example.com` }) },
    close: () => sql.close(),
  } as unknown as MarketplaceStores;
  const { logger, text } = captureLog('debug');
  // Checked and filled as `mkt serve` would (with an empty environment).
  const ctx = { server: { host: '127.0.0.1', port: 0, dataDir, env: {} }, options: resolveOptions('marketplace', marketplaceOptions, flags, {}), logger, clock, announce: () => undefined };
  let storageHandle: { close(): Promise<void> } | undefined;
  let app: FastifyInstance;
  try {
    app = await buildServer({
      logger,
      bodyLimit: 8 * 1024 * 1024,
      service: {
        openapi: { title: 'storage instance', version: '0' },
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
        async register(a) {
          await a.register(async (scope) => {
            storageHandle = await registerStorageRoutes(scope, { stores, dataDir, ctx, secret, auth: requireSyncAuth(secret, clock) });
          });
        },
        async close() {},
      },
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
  } catch (err) {
    await storageHandle?.close().catch(() => undefined);
    await sql.close();
    throw err;
  }
  const addr = app.server.address();
  const url = typeof addr === 'object' && addr ? `http://127.0.0.1:${addr.port}` : '';
  return {
    url,
    clock,
    sql,
    log: text,
    async call<T>(method: string, path: string, o: { token?: string; body?: unknown } = {}): Promise<Answer<T>> {
      const headers: Record<string, string> = {};
      if (o.token !== undefined) headers.authorization = `Bearer ${o.token}`;
      if (o.body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(url + path, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) });
      const t = await res.text();
      return { status: res.status, body: (t ? JSON.parse(t) : null) as T };
    },
    async close() {
      await app.close();
      await storageHandle?.close();
      await sql.close();
    },
  };
}

export interface ListingS3 {
  endpoint: string;
  bucket: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** The `syncS3` flags of a marketplace on it. */
  flags: MarketplaceOptions;
  close(): Promise<void>;
}

/** s3rver with ListParts (test/helpers/s3rver.ts), and the marketplace flags that use it. */
export async function startListingS3rver(bucket = 'mkt-blobs'): Promise<ListingS3> {
  // s3rver has no ListParts; the stand-in's proxy answers it from the parts on disk.
  const s3 = await startS3rver(bucket, { listParts: true });
  return {
    ...s3,
    flags: { syncObjectStore: 's3', syncS3: { bucket, endpoint: s3.endpoint, forcePathStyle: true, credentials: s3.credentials, region: 'us-east-1' } },
  };
}
