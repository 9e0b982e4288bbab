// The marketplace's sync area (spec marketplace-sync): the sync stores of the shared database, the
// sync secret every instance shares, the anonymous app/auth routes, the bearer routes (changelog,
// devices, account and status, keys and rotation) and the blob/billing routes of storage.ts.
import type { OpenArea } from '../area.js';
import { SYNC_TOKEN_LIFETIME_SECONDS } from '../../../../src/schemas/sync.js';
import { dummyPasswordHash } from '../../../../src/crypto/password.js';
import { ExistingCallers, loadSyncSecret, SyncBearer } from './auth.js';
import { PULL_PATH, pullLane } from './pull-lane.js';
import { DeviceSightings } from './device-sightings.js';
import { appRoutes } from './routes/app.js';
import { changelogRoutes } from './routes/changelog.js';
import { deviceRoutes } from './routes/devices.js';
import { accountRoutes } from './routes/account.js';
import { keyRoutes } from './routes/keys.js';
import { rotationRoutes } from './routes/rotation.js';
import { registerStorageRoutes } from './storage.js';
import { FailureWindow } from '../../../plugins/failure-window.js';

/** The sign-in limit of sync_auth: failed sign-ins (wrong password or unknown email) per client address and window. */
export const DEFAULT_SIGN_IN_LIMIT = { failures: 10, windowSeconds: 900 };

export const openSyncArea: OpenArea = async (shared) => {
  const { ctx, stores, dataDir } = shared;
  const { accounts } = stores;
  const options = ctx.options;
  const lifetime = options.syncTokenLifetimeSeconds ?? SYNC_TOKEN_LIFETIME_SECONDS;
  const store = stores.sync;
  const secret = loadSyncSecret(dataDir, ctx.server.env);
  // Made now, in the background, so the first unknown email does not pay for it (timing).
  void dummyPasswordHash();
  const clock = ctx.clock;
  const bearer = new SyncBearer(secret, clock, {
    // A token outlives neither its app nor its user: one statement for a caller not seen before,
    // none after (apps and users are never deleted, see ExistingCallers).
    callers: new ExistingCallers((c) => store.callerExists(c.appId, c.userId)),
  });
  const auth = bearer.hook();
  let storage: { close(): Promise<void> } | undefined;
  const deps = { store, accounts, clock };
  const guard = new FailureWindow(stores.limiter, clock, {
    scope: 'sync-sign-in',
    limit: {
      failures: options.syncSignInFailures ?? DEFAULT_SIGN_IN_LIMIT.failures,
      windowSeconds: options.syncSignInWindowSeconds ?? DEFAULT_SIGN_IN_LIMIT.windowSeconds,
    },
    refusal: (s) => `too many failed sign-ins from this address; retry after ${s} s`,
  });
  return {
    async register(app) {
      await app.register(async (scope) => appRoutes(scope, { ...deps, secret, guard, tokenLifetimeSeconds: lifetime }));
      await app.register(async (scope) => {
        // Before the body is read: an unauthenticated request costs no parsing.
        scope.addHook('onRequest', auth);
        // One record for the route and the lane: a device seen through either is seen.
        const sightings = new DeviceSightings();
        await changelogRoutes(scope, { ...deps, sightings });
        // The request a device sends at every sync, taken before fastify (pull-lane.ts).
        app.directRoutes.add(PULL_PATH, pullLane(app.directRoutes, { bearer, store, clock, sightings, deadlines: app.bodyDeadlines, bodyLimit: app.initialConfig.bodyLimit! }));
        await deviceRoutes(scope, deps);
        // Status reports storage use as blob confirm reckons it: one definition, in the blob store.
        await accountRoutes(scope, { ...deps, usage: (appId, userId) => stores.storage.usage(appId, userId) });
        await keyRoutes(scope, deps);
        await rotationRoutes(scope, deps);
      });
      await app.register(async (scope) => {
        storage = await registerStorageRoutes(scope, { stores, dataDir, ctx, secret, auth });
      });
    },
    async close() {
      // The stores are the marketplace's to close.
      await storage?.close();
    },
  };
};
