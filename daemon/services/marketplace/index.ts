// `mkt serve marketplace`: one server, one database (`marketplace.db`) shared by its areas
// (notes, license keys, sync), each migrating its own component and registering its routes.
import { join } from 'node:path';
import type { ServiceModule, ServiceRuntime } from '../../service.js';
import { openDatabase } from '../../../src/store/sqlite.js';
import { SqliteAccountsStore } from '../../../src/store/accounts.js';
import { VERSION } from '../../../src/version.js';
import type { MarketplaceArea } from './area.js';
import { AREAS } from './areas.js';

export async function open(ctx: Parameters<ServiceModule['open']>[0]): Promise<ServiceRuntime> {
  const dataDir = ctx.options.dataDir;
  const db = openDatabase(join(dataDir, 'marketplace.db'));
  const areas: MarketplaceArea[] = [];
  try {
    const accounts = new SqliteAccountsStore(db);
    for (const openArea of AREAS) areas.push(await openArea({ ctx, db, dataDir, accounts }));
  } catch (err) {
    for (const a of areas.reverse()) await a.close().catch(() => undefined);
    db.close();
    throw err;
  }
  return {
    openapi: { title: 'mkt marketplace', version: VERSION, description: 'Git notes, license keys and end-to-end-encrypted app sync.' },
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
    bodyLimit: 8 * 1024 * 1024,
    async register(app) {
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
      if (db.open) db.close();
    },
  };
}
