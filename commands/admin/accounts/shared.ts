// What the account and repository admin verbs share: opening the data dir's administration and
// turning its input errors into one-line usage errors.
import type { AdminFlags } from '../flags.js';
import { NegativeError } from '../../../src/cli/errors.js';
import { dataDir } from '../../../src/config/paths.js';
import type { AccountsAdmin } from '../../../daemon/services/marketplace/notes/admin.js';

export type { AdminFlags } from '../flags.js';

/** Runs `fn` with the accounts administration of the data dir, closing it afterwards. */
export async function withAccounts<T>(opts: AdminFlags, fn: (admin: AccountsAdmin, dir: string) => Promise<T>): Promise<T> {
  const dir = dataDir(opts.dataDir, opts.factory.io.env, opts.factory.io.cwd);
  const { AccountsAdmin, AdminInputError } = await import('../../../daemon/services/marketplace/notes/admin.js');
  const admin = new AccountsAdmin(dir);
  try {
    return await fn(admin, dir);
  } catch (err) {
    if (err instanceof AdminInputError) throw new NegativeError(err.message);
    throw err;
  } finally {
    await admin.close();
  }
}
