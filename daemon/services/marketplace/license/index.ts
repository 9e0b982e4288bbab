// The marketplace's license-key area: the LicenseStore and limiter windows from the shared stores,
// the key-hash secret from the data dir (or the operator's file), the signing keys shared through
// the database (followed across instances), and the routes.
import type { OpenArea } from '../area.js';
import { loadKeyHashSecret } from '../../../../src/crypto/license-key.js';
import { SigningKeyring } from '../../../../src/crypto/signing.js';
import { TOKEN_LIFETIME_SECONDS } from '../../../../src/schemas/license.js';
import { FailureWindow } from '../../../plugins/failure-window.js';
import { Licenses } from './licenses.js';
import { licenseRoutes } from './routes.js';
import { DEFAULT_AUDIT_INTERVAL_MS, DEFAULT_EVENT_RETENTION_DAYS, startAuditJob } from './audit-jobs.js';
import { WebhookDelivery } from './webhooks.js';

/**
 * The abuse limit of the key endpoints: failed lookups (malformed or unknown keys, the signs of
 * guessing) per client address in a fixed window.
 */
export const DEFAULT_ABUSE_LIMIT = { failures: 20, windowSeconds: 600 };

export const openLicenseArea: OpenArea = async (shared) => {
  const { ctx, stores, dataDir } = shared;
  const options = ctx.options;
  const env = ctx.server.env;
  const store = stores.license;
  const clock = ctx.clock;
  // A provisioned file open to other users is refused (readProvisionedSecretFile).
  const hashSecret = loadKeyHashSecret(dataDir, env);
  const log = ctx.logger.child({ component: 'license-keys' });
  let warned = false;
  // Retired keys stay published for one token lifetime, so their tokens verify until expiry.
  const keyring = await SigningKeyring.open({
    store,
    now: () => clock.now(),
    keepMs: TOKEN_LIFETIME_SECONDS * 1000,
    dataDir,
    pollMs: options.licenseKeysPollMs,
    onRefreshError: (err) => {
      // Once per outage: the loaded keys keep signing meanwhile.
      if (!warned) log.warn({ err: (err as Error).message }, 'cannot check the signing keys for a rotation; signing with the loaded key');
      warned = true;
    },
  });
  const licenses = new Licenses({
    store,
    clock,
    hashSecret,
    keyring,
    issuer: options.licenseIssuer ?? 'mkt-marketplace',
  });
  const guard = new FailureWindow(stores.limiter, clock, {
    scope: 'license-abuse',
    limit: {
      failures: options.licenseAbuseFailures ?? DEFAULT_ABUSE_LIMIT.failures,
      windowSeconds: options.licenseAbuseWindowSeconds ?? DEFAULT_ABUSE_LIMIT.windowSeconds,
    },
    refusal: (s) => `too many failed license key lookups from this address; retry after ${s} s`,
  });
  ctx.logger.info({ kid: keyring.currentKid() }, 'license keys ready');
  // The audit trail's background work: webhook delivery and the audit job, started with the server.
  const auditLog = ctx.logger.child({ component: 'license-audit' });
  const webhooks = new WebhookDelivery({ audit: stores.licenseAudit, clock, logger: auditLog, pollMs: options.licenseWebhookPollMs, retryBaseMs: options.licenseWebhookRetryBaseMs });
  let auditJob: { stop(): Promise<void> } | undefined;
  return {
    async register(app) {
      await app.register(async (scope) => licenseRoutes(scope, { licenses, guard, keyring }));
    },
    start() {
      webhooks.start();
      const retentionDays = options.licenseEventRetentionDays ?? DEFAULT_EVENT_RETENTION_DAYS;
      auditJob ??= startAuditJob({ sql: stores.sql, audit: stores.licenseAudit, license: store, clock, logger: auditLog, retentionDays }, options.licenseAuditIntervalMs ?? DEFAULT_AUDIT_INTERVAL_MS);
    },
    async reload() {
      await keyring.reload();
      warned = false;
    },
    async close() {
      await webhooks.stop();
      await auditJob?.stop();
      keyring.close();
    },
  };
};
