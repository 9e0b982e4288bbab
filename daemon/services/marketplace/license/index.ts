// The marketplace's license-key area: opens the LicenseStore in the shared database, the
// key-hash secret and the signing keyring in the data dir, and registers the routes.
import type { OpenArea } from '../area.js';
import { SqliteLicenseStore } from '../../../../src/store/license.js';
import { loadKeyHashSecret } from '../../../../src/crypto/license-key.js';
import { SigningKeyring } from '../../../../src/crypto/signing.js';
import { TOKEN_LIFETIME_SECONDS } from '../../../../src/schemas/license.js';
import { SqliteLimiterWindows } from '../../../../src/store/limiter-windows.js';
import { FailureWindow } from '../../../plugins/failure-window.js';
import { Licenses } from './licenses.js';
import { licenseRoutes } from './routes.js';

/** Service flags this area reads (all optional). */
export interface LicenseFlags {
  /** `iss` claim of offline tokens; default `mkt-marketplace`. */
  licenseIssuer?: string;
  /** Failed key lookups per address and window before 429 (default 20 per 600 s). */
  licenseAbuseFailures?: number;
  licenseAbuseWindowSeconds?: number;
}

/**
 * The abuse limit of the key endpoints: failed lookups (malformed or unknown keys, the signs of
 * guessing) per client address in a fixed window.
 */
export const DEFAULT_ABUSE_LIMIT = { failures: 20, windowSeconds: 600 };

export const openLicenseArea: OpenArea = async (shared) => {
  const { ctx, db, dataDir } = shared;
  const flags = ctx.options.flags as LicenseFlags;
  const store = new SqliteLicenseStore(db);
  const clock = ctx.clock;
  // Retired keys stay published for one token lifetime, so their tokens verify until expiry.
  const keyring = new SigningKeyring(dataDir, () => clock.now(), TOKEN_LIFETIME_SECONDS * 1000);
  const licenses = new Licenses({
    store,
    clock,
    hashSecret: loadKeyHashSecret(dataDir),
    keyring,
    issuer: flags.licenseIssuer ?? ctx.options.env.MKT_LICENSE_ISSUER ?? 'mkt-marketplace',
  });
  const guard = new FailureWindow(new SqliteLimiterWindows(db), clock, {
    scope: 'license-abuse',
    limit: {
      failures: flags.licenseAbuseFailures ?? DEFAULT_ABUSE_LIMIT.failures,
      windowSeconds: flags.licenseAbuseWindowSeconds ?? DEFAULT_ABUSE_LIMIT.windowSeconds,
    },
    refusal: (s) => `too many failed license key lookups from this address; retry after ${s} s`,
  });
  ctx.logger.info({ kid: keyring.currentKid() }, 'license keys ready');
  return {
    async register(app) {
      await app.register(async (scope) => licenseRoutes(scope, { licenses, guard, keyring }));
    },
    async reload() {
      keyring.reload();
    },
    async close() {
      await store.close();
    },
  };
};
