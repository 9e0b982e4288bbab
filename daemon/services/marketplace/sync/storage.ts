// Blob storage and billing of the sync area: opens the storage store, the object store and the
// payment provider chosen by flags, registers the blob, multipart, subscription, webhook (and the
// local adapters' own) routes, and runs the upload reaper (one instance a period, when several
// share the database). Called by sync/index.ts.
import type { FastifyInstance, preHandlerHookHandler } from 'fastify';
import type { MarketplaceStores } from '../../../../src/store/marketplace.js';
import { LocalObjectStore } from '../../../../src/sync-objects/local.js';
import type { ObjectStore } from '../../../../src/sync-objects/store.js';
import type { S3StoreOptions } from '../../../../src/sync-objects/s3.js';
import type { StripeProviderOptions } from './payments-stripe.js';
import type { ServiceContext } from '../../../service.js';
import { deriveSyncKey } from './auth.js';
import { decideExposure } from './exposure.js';
import { ConfigError } from '../../../../src/config/yaml-reader.js';
import { blobRoutes } from './blobs.js';
import { billingRoutes } from './billing.js';
import { checkoutReturnRoutes, localCheckoutRoutes } from './checkout.js';
import { multipartRoutes } from './multipart.js';
import { localObjectRoutes } from './objects.js';
import { LocalPaymentProvider, localWebhookSecret, type PaymentProvider } from './payments.js';
import { DEFAULT_REAPER_SCHEDULE, recordStoredParts, startReaper } from './reaper.js';
import { touchUpload } from './uploads.js';
import type { StorageContext } from './storage-context.js';
import { webhookRoutes } from './webhook.js';

export interface StorageDeps {
  /** The marketplace's stores: `storage` for blobs and billing, `accounts` for checkout e-mails, `sql` for the reaper's turns. */
  stores: MarketplaceStores;
  /** Local objects live under it (a volume every instance mounts, when several share a `local` store). */
  dataDir: string;
  ctx: ServiceContext;
  /** The sync secret (see auth.ts `deriveSyncKey` for purpose-bound keys). */
  secret: Buffer;
  /** The bearer preHandler (requireSyncAuth) to put on every bearer route. */
  auth: preHandlerHookHandler;
}

/** Service flags (or environment variables) of blob storage and billing; all optional. */
export interface StorageFlags {
  /** `local` (default) or `s3` (MKT_SYNC_OBJECT_STORE). */
  syncObjectStore?: string;
  /** Settings of the s3 store; unset fields come from MKT_SYNC_S3_* (see s3OptionsFrom). */
  syncS3?: Partial<S3StoreOptions>;
  /** `local` or `stripe` (`--payments`, MKT_SYNC_PAYMENTS); default local, on loopback only (exposure.ts). */
  syncPayments?: string;
  /** Settings of the stripe provider; unset fields come from MKT_STRIPE_* (see stripeOptionsFrom). */
  syncStripe?: Partial<StripeProviderOptions>;
  /** Idle hours before the reaper aborts an upload; default 24 (MKT_SYNC_UPLOAD_IDLE_HOURS). */
  syncUploadIdleHours?: number;
  /** Six-field cron expression of the reaper; default every 10 minutes (MKT_SYNC_REAPER_SCHEDULE). */
  syncReaperSchedule?: string;
  /** Public address of pre-signed and checkout URLs (`--public-url`, MKT_PUBLIC_URL); required off loopback. */
  publicUrl?: string;
  /** Lifetime of pre-signed URLs in seconds; default 3600. */
  syncUrlTtlSeconds?: number;
}

export const DEFAULT_UPLOAD_IDLE_HOURS = 24;
export const DEFAULT_URL_TTL_SECONDS = 3600;

function pick(flag: unknown, env: string | undefined): string | undefined {
  if (flag !== undefined && flag !== null && flag !== '') return String(flag);
  return env && env.length > 0 ? env : undefined;
}

function positive(name: string, text: string | undefined, dflt: number): number {
  if (text === undefined) return dflt;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, not ${JSON.stringify(text)}`);
  return n;
}

export async function registerStorageRoutes(app: FastifyInstance, deps: StorageDeps): Promise<{ close(): Promise<void> }> {
  const { ctx } = deps;
  const flags = ctx.options.flags as StorageFlags;
  const env = ctx.options.env;
  const clock = ctx.clock;
  const nowSeconds = (): number => Math.floor(clock.now() / 1000);

  // Before anything is opened: refuses unsafe defaults on a non-loopback address.
  const exposure = decideExposure({ host: ctx.options.host, payments: pick(flags.syncPayments, env.MKT_SYNC_PAYMENTS), publicUrl: pick(flags.publicUrl, env.MKT_PUBLIC_URL) });
  const objectKind = pick(flags.syncObjectStore, env.MKT_SYNC_OBJECT_STORE) ?? 'local';
  let objects: ObjectStore;
  let local: LocalObjectStore | undefined;
  if (objectKind === 'local') objects = local = new LocalObjectStore(deps.dataDir, deriveSyncKey(deps.secret, 'object-urls'), nowSeconds);
  else if (objectKind === 's3') {
    // Loaded only when chosen: the AWS SDK is large.
    const { S3ObjectStore, s3OptionsFrom } = await import('../../../../src/sync-objects/s3.js');
    objects = new S3ObjectStore(s3OptionsFrom(flags.syncS3, env));
  } else throw new Error(`unknown sync object store ${JSON.stringify(objectKind)} (expected local or s3)`);

  const payKind = exposure.payments;
  let payments: PaymentProvider;
  let localPay: LocalPaymentProvider | undefined;
  let stripeReturnPath: string | undefined;
  if (payKind === 'local') payments = localPay = new LocalPaymentProvider(localWebhookSecret(deps.secret));
  else if (payKind === 'stripe') {
    const { StripePaymentProvider, stripeOptionsFrom, CHECKOUT_RETURN_PATH } = await import('./payments-stripe.js');
    payments = new StripePaymentProvider(stripeOptionsFrom(flags.syncStripe, env));
    stripeReturnPath = CHECKOUT_RETURN_PATH;
  } else throw new ConfigError([`unknown sync payment provider ${JSON.stringify(payKind)} (expected local or stripe)`]);

  const c: StorageContext = {
    store: deps.stores.storage,
    objects,
    payments,
    clock,
    logger: ctx.logger,
    limits: {
      urlTtlSeconds: Math.floor(positive('syncUrlTtlSeconds', pick(flags.syncUrlTtlSeconds, undefined), DEFAULT_URL_TTL_SECONDS)),
      uploadIdleMs: positive('MKT_SYNC_UPLOAD_IDLE_HOURS', pick(flags.syncUploadIdleHours, env.MKT_SYNC_UPLOAD_IDLE_HOURS), DEFAULT_UPLOAD_IDLE_HOURS) * 3600 * 1000,
    },
    baseUrl: exposure.baseUrl,
  };

  await blobRoutes(app, c, deps.auth);
  await multipartRoutes(app, c, deps.auth);
  await billingRoutes(app, c, deps.auth, deps.stores.accounts);
  await webhookRoutes(app, c);
  if (local) {
    await localObjectRoutes(app, local);
    // A part PUT is activity on its session, and its bytes bill from now on.
    local.onPartStored = async (storeUploadId) => {
      try {
        const s = await c.store.uploadByStoreId(storeUploadId);
        if (!s) return;
        await touchUpload(c.store, s.id, clock.now());
        await recordStoredParts(c, s);
      } catch (err) {
        ctx.logger.warn({ err: (err as Error).message }, 'could not record an uploaded part');
      }
    };
  }
  if (localPay) await localCheckoutRoutes(app, c, localPay);
  if (stripeReturnPath) await checkoutReturnRoutes(app, stripeReturnPath);

  const reaper = startReaper(c, pick(flags.syncReaperSchedule, env.MKT_SYNC_REAPER_SCHEDULE) ?? DEFAULT_REAPER_SCHEDULE, deps.stores.sql);
  ctx.logger.info({ object_store: objects.kind, payments: payments.kind }, 'sync storage ready');
  return {
    async close() {
      await reaper.stop();
      await objects.close();
      // The stores belong to the marketplace, which closes them.
    },
  };
}
