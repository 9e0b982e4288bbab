// The marketplace's sync area (spec marketplace-sync): the sync stores of the shared database, the
// sync secret every instance shares, the anonymous app/auth routes, the bearer routes (changelog,
// devices, account and status, keys and rotation) and the blob/billing routes of storage.ts.
import type { OpenArea } from '../area.js';
import { SYNC_TOKEN_LIFETIME_SECONDS } from '../../../../src/schemas/sync.js';
import { dummyPasswordHash } from '../../../../src/crypto/password.js';
import { loadSyncSecret, rememberExisting, requireSyncAuth } from './auth.js';
import { appRoutes } from './routes-app.js';
import { changelogRoutes } from './routes-changelog.js';
import { deviceRoutes } from './routes-devices.js';
import { accountRoutes } from './routes-account.js';
import { keyRoutes } from './routes-keys.js';
import { rotationRoutes } from './routes-rotation.js';
import { registerStorageRoutes } from './storage.js';
import { FailureWindow } from '../../../plugins/failure-window.js';

/** Service flags this area reads (all optional). */
export interface SyncFlags {
  /** Lifetime of sync access tokens in seconds; default $MKT_SYNC_TOKEN_LIFETIME_SECONDS, else 3600. */
  syncTokenLifetimeSeconds?: number;
  /** Failed sign-ins per client address and window before 429 (default 10 per 900 s). */
  syncSignInFailures?: number;
  syncSignInWindowSeconds?: number;
}

/** The sign-in limit of sync_auth: failed sign-ins (wrong password or unknown email) per client address and window. */
export const DEFAULT_SIGN_IN_LIMIT = { failures: 10, windowSeconds: 900 };

function tokenLifetime(flags: SyncFlags, env: NodeJS.ProcessEnv): number {
  const raw = flags.syncTokenLifetimeSeconds ?? env.MKT_SYNC_TOKEN_LIFETIME_SECONDS;
  if (raw === undefined || raw === '') return SYNC_TOKEN_LIFETIME_SECONDS;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 60 || n > 30 * 86400) throw new Error(`MKT_SYNC_TOKEN_LIFETIME_SECONDS must be a whole number of seconds from 60 to 2592000, not ${JSON.stringify(raw)}`);
  return n;
}

export const openSyncArea: OpenArea = async (shared) => {
  const { ctx, stores, dataDir } = shared;
  const { accounts } = stores;
  const flags = ctx.options.flags as SyncFlags;
  const lifetime = tokenLifetime(flags, ctx.options.env);
  const store = stores.sync;
  const secret = loadSyncSecret(dataDir, ctx.options.env);
  // Made now, in the background, so the first unknown email does not pay for it (timing).
  void dummyPasswordHash();
  const clock = ctx.clock;
  const auth = requireSyncAuth(secret, clock, {
    // A token outlives neither its app nor its user: one statement for a caller not seen before,
    // none after (apps and users are never deleted, see rememberExisting).
    callerExists: rememberExisting((c) => store.callerExists(c.appId, c.userId)),
  });
  let storage: { close(): Promise<void> } | undefined;
  const deps = { store, accounts, clock };
  const guard = new FailureWindow(stores.limiter, clock, {
    scope: 'sync-sign-in',
    limit: {
      failures: flags.syncSignInFailures ?? DEFAULT_SIGN_IN_LIMIT.failures,
      windowSeconds: flags.syncSignInWindowSeconds ?? DEFAULT_SIGN_IN_LIMIT.windowSeconds,
    },
    refusal: (s) => `too many failed sign-ins from this address; retry after ${s} s`,
  });
  return {
    async register(app) {
      await app.register(async (scope) => appRoutes(scope, { ...deps, secret, guard, tokenLifetimeSeconds: lifetime }));
      await app.register(async (scope) => {
        // Before the body is read: an unauthenticated request costs no parsing.
        scope.addHook('onRequest', auth);
        await changelogRoutes(scope, deps);
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
