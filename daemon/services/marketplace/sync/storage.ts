// Blob storage and billing of the sync area: opens the storage store, the object store and the
// payment provider chosen by the options, registers the blob, multipart, subscription, webhook (and the
// local adapters' own) routes, and runs the upload reaper (one instance a period, when several
// share the database). Called by sync/index.ts.
import type { FastifyInstance, preHandlerHookHandler } from 'fastify';
import type { MarketplaceStores } from '../../../../src/store/marketplace.js';
import { LocalObjectStore } from '../../../../src/sync-objects/local.js';
import type { ObjectStore } from '../../../../src/sync-objects/store.js';
import type { ServiceContext } from '../../../service.js';
import type { StorageOptions } from './options.js';
import { deriveSyncKey } from './auth.js';
import { decideExposure } from './exposure.js';
import { ConfigError } from '../../../../src/config/yaml-reader.js';
import { blobRoutes } from './routes/blobs.js';
import { subscriptionRoutes } from './routes/subscription.js';
import { checkoutReturnRoutes, localCheckoutRoutes } from './routes/checkout.js';
import { multipartRoutes } from './routes/multipart.js';
import { localObjectRoutes } from './routes/objects.js';
import { LocalPaymentProvider, localWebhookSecret, type PaymentProvider } from './payments.js';
import { DEFAULT_REAPER_SCHEDULE, recordStoredParts, startReaper } from './reaper.js';
import { touchUpload } from './uploads.js';
import type { StorageContext } from './storage-context.js';
import { webhookRoutes } from './routes/webhook.js';

export interface StorageDeps {
  /** The marketplace's stores: `storage` for blobs and billing, `accounts` for checkout e-mails, `sql` for the reaper's turns. */
  stores: MarketplaceStores;
  /** Local objects live under it (a volume every instance mounts, when several share a `local` store). */
  dataDir: string;
  ctx: ServiceContext<StorageOptions>;
  /** The sync secret (see auth.ts `deriveSyncKey` for purpose-bound keys). */
  secret: Buffer;
  /** The bearer preHandler (requireSyncAuth) to put on every bearer route. */
  auth: preHandlerHookHandler;
}

export const DEFAULT_UPLOAD_IDLE_HOURS = 24;
export const DEFAULT_URL_TTL_SECONDS = 3600;

export async function registerStorageRoutes(app: FastifyInstance, deps: StorageDeps): Promise<{ close(): Promise<void> }> {
  const { ctx } = deps;
  const options = ctx.options;
  // For the S3 and Stripe settings only, which read their own variables (s3OptionsFrom, stripeOptionsFrom).
  const env = ctx.server.env;
  const clock = ctx.clock;
  const nowSeconds = (): number => Math.floor(clock.now() / 1000);

  // Before anything is opened: refuses unsafe defaults on a non-loopback address.
  const exposure = decideExposure({ host: ctx.server.host, payments: options.syncPayments, publicUrl: options.publicUrl });
  const objectKind = options.syncObjectStore ?? 'local';
  let objects: ObjectStore;
  let local: LocalObjectStore | undefined;
  if (objectKind === 'local') objects = local = new LocalObjectStore(deps.dataDir, deriveSyncKey(deps.secret, 'object-urls'), nowSeconds);
  else if (objectKind === 's3') {
    // Loaded only when chosen: the AWS SDK is large.
    const { S3ObjectStore, s3OptionsFrom } = await import('../../../../src/sync-objects/s3.js');
    objects = new S3ObjectStore(s3OptionsFrom(options.syncS3, env));
  } else throw new Error(`unknown sync object store ${JSON.stringify(objectKind)} (expected local or s3)`);

  const payKind = exposure.payments;
  let payments: PaymentProvider;
  let localPay: LocalPaymentProvider | undefined;
  let stripeReturnPath: string | undefined;
  if (payKind === 'local') payments = localPay = new LocalPaymentProvider(localWebhookSecret(deps.secret));
  else if (payKind === 'stripe') {
    const { StripePaymentProvider, stripeOptionsFrom, CHECKOUT_RETURN_PATH } = await import('./payments-stripe.js');
    payments = new StripePaymentProvider(stripeOptionsFrom(options.syncStripe, env));
    stripeReturnPath = CHECKOUT_RETURN_PATH;
  } else throw new ConfigError([`unknown sync payment provider ${JSON.stringify(payKind)} (expected local or stripe)`]);

  const c: StorageContext = {
    store: deps.stores.storage,
    objects,
    payments,
    clock,
    logger: ctx.logger,
    limits: {
      urlTtlSeconds: Math.floor(options.syncUrlTtlSeconds ?? DEFAULT_URL_TTL_SECONDS),
      uploadIdleMs: (options.syncUploadIdleHours ?? DEFAULT_UPLOAD_IDLE_HOURS) * 3600 * 1000,
    },
    baseUrl: exposure.baseUrl,
  };

  await blobRoutes(app, c, deps.auth);
  await multipartRoutes(app, c, deps.auth);
  await subscriptionRoutes(app, c, deps.auth, deps.stores.accounts);
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

  const reaper = startReaper(c, options.syncReaperSchedule ?? DEFAULT_REAPER_SCHEDULE, deps.stores.sql);
  ctx.logger.info({ object_store: objects.kind, payments: payments.kind }, 'sync storage ready');
  return {
    async close() {
      await reaper.stop();
      await objects.close();
      // The stores belong to the marketplace, which closes them.
    },
  };
}
