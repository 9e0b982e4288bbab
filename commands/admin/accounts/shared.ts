// What the account and repository admin verbs share: the accounts administration on the
// marketplace's stores (SQLite in the data dir, or PostgreSQL by --database-url /
// MKT_DATABASE_URL, opened by the Factory as the server opens them), and its input errors turned
// into one-line usage errors.
import { openMarketplace, type AdminFlags } from '../flags.js';
import { NegativeError } from '../../../src/cli/errors.js';
import type { AccountsAdmin } from '../../../daemon/services/marketplace/accounts/admin.js';

export type { AdminFlags } from '../flags.js';

/**
 * Runs `fn` with the accounts administration, closing the stores afterwards; `create` lets this
 * verb make the marketplace where there is none (see openMarketplace).
 */
export async function withAccounts<T>(opts: AdminFlags, fn: (admin: AccountsAdmin, dir: string) => Promise<T>, create = false): Promise<T> {
  const { AccountsAdmin, AdminInputError } = await import('../../../daemon/services/marketplace/accounts/admin.js');
  const stores = await openMarketplace(opts, create);
  const dir = stores.place.dataDir;
  try {
    return await fn(new AccountsAdmin(stores, dir), dir);
  } catch (err) {
    if (err instanceof AdminInputError) throw new NegativeError(err.message);
    throw err;
  } finally {
    await stores.close();
  }
}
