// The contract between the marketplace service and its areas (notes, license, sync):
// each area registers its routes into the one marketplace server and shares its database.
import type { FastifyInstance } from 'fastify';
import type { Db } from '../../../src/store/sqlite.js';
import type { AccountsStore } from '../../../src/store/accounts.js';
import type { ServiceContext } from '../../service.js';

export interface MarketplaceShared {
  ctx: ServiceContext;
  /** `<data-dir>/marketplace.db`; each area migrates its own component in it. */
  db: Db;
  dataDir: string;
  accounts: AccountsStore;
}

export interface MarketplaceArea {
  register(app: FastifyInstance): Promise<void>;
  start?(app: FastifyInstance): Promise<void> | void;
  reload?(): Promise<void>;
  close(): Promise<void>;
}

export type OpenArea = (shared: MarketplaceShared) => Promise<MarketplaceArea>;
