// `mkt serve marketplace`: one server, one database (SQLite `marketplace.db` in the data dir, or
// PostgreSQL from --database-url / MKT_DATABASE_URL) shared by its areas (notes, license keys,
// sync), each registering its routes over the shared stores.
import type { ServiceContext, ServiceRuntime } from '../../service.js';
import { openMarketplaceStores } from '../../../src/store/marketplace.js';
import { VERSION } from '../../../src/version.js';
import { BEARER_SCHEME } from '../../plugins/openapi.js';
import type { MarketplaceArea } from './area.js';
import { AREAS } from './areas.js';
import { marketplaceOptions, type MarketplaceOptions } from './options.js';

export const options = marketplaceOptions;

export async function open(ctx: ServiceContext<MarketplaceOptions>): Promise<ServiceRuntime> {
  const dataDir = ctx.server.dataDir;
  const stores = await openMarketplaceStores({ dataDir, databaseUrl: ctx.options.databaseUrl });
  ctx.logger.info({ database: stores.sql.label, engine: stores.sql.engine }, 'database open');
  if (stores.sql.engine === 'postgres') {
    // One line when PostgreSQL goes and one when it is back; the requests meanwhile answer 503.
    const { PgDatabase } = await import('../../../src/store/sql-pg.js');
    if (stores.sql instanceof PgDatabase) stores.sql.logAvailability(ctx.logger);
  }
  const areas: MarketplaceArea[] = [];
  try {
    for (const openArea of AREAS) areas.push(await openArea({ ctx, stores, dataDir }));
  } catch (err) {
    for (const a of areas.reverse()) await a.close().catch(() => undefined);
    await stores.close();
    throw err;
  }
  return {
    // The spec describes this API "under a noncommercial license" (the code itself is MIT).
    openapi: { title: 'mkt marketplace', version: VERSION, description: 'Git notes, license keys and end-to-end-encrypted app sync.', license: { name: 'PolyForm Noncommercial License 1.0.0', identifier: 'PolyForm-Noncommercial-1.0.0' } },
    // Each route declares its own `security`: the areas authenticate in their own ways (notes reads optional, license keys in the body).
    securitySchemes: BEARER_SCHEME,
    publicUrl: ctx.options.publicUrl,
    bodyLimit: 8 * 1024 * 1024,
    async register(app) {
      // For load balancers: 200 while this instance can reach its database, else 503 {"error"}
      // (the error handler's answer to StoreUnavailableError), so traffic moves to the others.
      app.get('/healthz', { schema: { hide: true } }, async () => {
        await stores.sql.value('SELECT 1');
        return { status: 'ok', engine: stores.sql.engine };
      });
      for (const a of areas) await a.register(app);
    },
    async start(app) {
      for (const a of areas) await a.start?.(app);
    },
    async reload() {
      for (const a of areas) await a.reload?.();
    },
    async close() {
      for (const a of [...areas].reverse()) await a.close();
      await stores.close();
    },
  };
}
