// What the blob, multipart, billing and reaper modules of the sync area share: the store, the
// object store, the payment provider, the clock, the limits and the public address of the server.
import type { FastifyRequest } from 'fastify';
import type { SyncStorageStore, Usage } from '../../../../src/store/sync-billing.js';
import type { ObjectStore } from '../../../../src/sync-objects/store.js';
import type { Clock } from '../../../../src/util/clock.js';
import type { Logger } from '../../../logger.js';
import { HttpError } from '../../../plugins/errors.js';
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

export function nowIso(clock: Clock): string {
  return new Date(clock.now()).toISOString();
}

/** Answers 413 when `extra` more bytes would go over the caller's storage cap. */
export function assertRoom(usage: Usage, extra: number): void {
  if (usage.used_bytes + extra > usage.cap_bytes) throw overCap(usage, extra);
}

export function overCap(usage: Usage, extra: number): HttpError {
  const hint = usage.subscription_active ? 'queue a larger cap with POST /api/v1/sync/subscription/storage-cap' : 'buy a storage subscription (POST /api/v1/sync/subscription/checkout)';
  return new HttpError(413, `storage cap exceeded: ${usage.used_bytes} bytes used + ${extra} would pass the cap of ${usage.cap_bytes} bytes; ${hint}`);
}
