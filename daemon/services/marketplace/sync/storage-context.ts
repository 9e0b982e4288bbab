// What the blob, multipart, billing and reaper modules of the sync area share: the store, the
// object store, the payment provider, the clock, the limits and the public address of the server.
import type { FastifyRequest } from 'fastify';
import type { SyncStorageStore } from '../../../../src/store/sync-billing.js';
import type { ObjectStore } from '../../../../src/sync-objects/store.js';
import type { Clock } from '../../../../src/util/clock.js';
import type { Logger } from '../../../logger.js';
import type { PaymentProvider } from './payments.js';

export interface StorageLimits {
  /** Seconds a pre-signed URL stays valid (the `expires_in` of every answer). */
  urlTtlSeconds: number;
  /** An open multipart session (or an unconfirmed one-shot upload) idle this long is reaped. */
  uploadIdleMs: number;
}

export interface StorageContext {
  store: SyncStorageStore;
  objects: ObjectStore;
  payments: PaymentProvider;
  clock: Clock;
  logger: Logger;
  limits: StorageLimits;
  /** The address clients reached this server at (for pre-signed URLs and checkout pages). */
  baseUrl(req: FastifyRequest): string;
}
