// The contract between the marketplace service and its areas (notes, license, sync):
// each area registers its routes into the one marketplace server and uses the shared stores.
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../../service.js';
import type { MarketplaceOptions } from './options.js';
import type { MarketplaceStores } from '../../../src/store/marketplace.js';

export interface MarketplaceShared {
  ctx: ServiceContext<MarketplaceOptions>;
  /** Every marketplace store, on one database (SQLite in the data dir, or PostgreSQL). */
  stores: MarketplaceStores;
  /** Repositories, secrets and local blobs live here (a volume every instance mounts when there are several). */
  dataDir: string;
}

export interface MarketplaceArea {
  register(app: FastifyInstance): Promise<void>;
  start?(app: FastifyInstance): Promise<void> | void;
  reload?(): Promise<void>;
  close(): Promise<void>;
}

export type OpenArea = (shared: MarketplaceShared) => Promise<MarketplaceArea>;
