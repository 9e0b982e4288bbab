// Every store of the marketplace, opened on one database (SQLite `<data-dir>/marketplace.db`, or
// PostgreSQL): the server and `mkt admin` both get them here, so they are built one way.
import type { SqlDatabase } from './sql.js';
import { openSqlDatabase, type DatabaseChoice } from './open.js';
import type { AccountsStore } from './accounts.js';
import type { RepoStore } from './repos.js';
import type { NotesIndex } from './notes.js';
import type { LicenseStore } from './license.js';
import type { LimiterWindows } from './limiter-windows.js';
import type { SyncStore } from './sync.js';
import type { SyncStorageStore } from './sync-billing.js';
import { SqlAccountsStore } from './accounts-sql.js';
import { SqlRepoStore } from './repos-sql.js';
import { SqlNotesIndex } from './notes-sql.js';
import { SqlLicenseStore } from './license-sql.js';
import { SqlLicenseAuditStore } from './license-events-sql.js';
import { SqlLimiterWindows } from './limiter-windows-sql.js';
import { SqlSyncStore } from './sync-sql.js';
import { SqlSyncStorageStore } from './sync-billing-sql.js';

export interface MarketplaceStores {
  sql: SqlDatabase;
  accounts: AccountsStore;
  repos: RepoStore;
  notes: NotesIndex;
  license: LicenseStore;
  /** The license audit trail: events, webhooks and their outbox (component `license-audit`). */
  licenseAudit: SqlLicenseAuditStore;
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
    licenseAudit: await SqlLicenseAuditStore.open(sql),
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
