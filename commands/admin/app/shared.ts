// What the app admin verbs share: opening the data dir's sync administration.
import type { Factory } from '../../../src/cli/factory.js';
import { dataDir } from '../../../src/config/paths.js';
import type { SyncAdmin } from '../../../daemon/services/marketplace/sync/admin.js';

export interface AppAdminFlags {
  factory: Factory;
  dataDir?: string;
  json?: boolean;
}

/** Runs `fn` with the sync administration of the data dir, closing it afterwards. */
export async function withSyncAdmin<T>(opts: AppAdminFlags, fn: (admin: SyncAdmin) => Promise<T>): Promise<T> {
  const dir = dataDir(opts.dataDir, opts.factory.io.env, opts.factory.io.cwd);
  const { SyncAdmin } = await import('../../../daemon/services/marketplace/sync/admin.js');
  const admin = new SyncAdmin(dir, () => opts.factory.now().getTime());
  try {
    return await fn(admin);
  } finally {
    await admin.close();
  }
}
