// Every store of the marketplace, opened on one database (SQLite `<data-dir>/marketplace.db`, or
// PostgreSQL): the server and `mkt admin` both get them here, so they are built one way.
import type { SqlDatabase } from '../../../src/store/sql.js';
import { openSqlDatabase, type DatabaseChoice } from '../../../src/store/open.js';
import type { AccountsStore } from '../../../src/store/accounts.js';
import type { RepoStore } from '../../../src/store/repos.js';
import type { NotesIndex } from '../../../src/store/notes.js';
import type { LicenseStore } from '../../../src/store/license.js';
import type { LimiterWindows } from '../../../src/store/limiter-windows.js';
import type { SyncStore } from '../../../src/store/sync.js';
import type { SyncStorageStore } from '../../../src/store/sync-billing.js';
import { SqlAccountsStore } from '../../../src/store/accounts-sql.js';
import { SqlRepoStore } from '../../../src/store/repos-sql.js';
import { SqlNotesIndex } from '../../../src/store/notes-sql.js';
import { SqlLicenseStore } from '../../../src/store/license-sql.js';
import { SqlLimiterWindows } from '../../../src/store/limiter-windows-sql.js';
import { SqlSyncStore } from '../../../src/store/sync-sql.js';
import { SqlSyncStorageStore } from '../../../src/store/sync-billing-sql.js';

export interface MarketplaceStores {
  sql: SqlDatabase;
  accounts: AccountsStore;
  repos: RepoStore;
  notes: NotesIndex;
  license: LicenseStore;
  limiter: LimiterWindows;
  sync: SyncStore;
  storage: SyncStorageStore;
  /** Closes the database (every store with it). */
  close(): Promise<void>;
}

/** Opens the stores on an open database, migrating each component. */
export async function marketplaceStoresOn(sql: SqlDatabase): Promise<MarketplaceStores> {
  return {
    sql,
    accounts: await SqlAccountsStore.open(sql),
    repos: await SqlRepoStore.open(sql),
    notes: await SqlNotesIndex.open(sql),
    license: await SqlLicenseStore.open(sql),
    limiter: await SqlLimiterWindows.open(sql),
    sync: await SqlSyncStore.open(sql),
    storage: await SqlSyncStorageStore.open(sql),
    close: () => sql.close(),
  };
}

export async function openMarketplaceStores(choice: Omit<DatabaseChoice, 'file'>): Promise<MarketplaceStores> {
  const sql = await openSqlDatabase({ ...choice, file: 'marketplace.db' });
  try {
    return await marketplaceStoresOn(sql);
  } catch (err) {
    await sql.close().catch(() => undefined);
    throw err;
  }
}
