// What the app admin verbs share: the sync administration over the marketplace stores the Factory
// opens (SQLite in the data dir, or PostgreSQL from --database-url / MKT_DATABASE_URL).
import { openMarketplace, type AdminFlags } from '../flags.js';
import type { SyncAdmin } from '../../../daemon/services/marketplace/sync/admin.js';

export type AppAdminFlags = AdminFlags;

/** Runs `fn` with the sync administration of the marketplace's stores, closing them afterwards. */
export async function withSyncAdmin<T>(opts: AppAdminFlags, fn: (admin: SyncAdmin) => Promise<T>): Promise<T> {
  const stores = await openMarketplace(opts);
  try {
    const { SyncAdmin } = await import('../../../daemon/services/marketplace/sync/admin.js');
    return await fn(new SyncAdmin(stores, () => opts.factory.now().getTime()));
  } finally {
    await stores.close();
  }
}
