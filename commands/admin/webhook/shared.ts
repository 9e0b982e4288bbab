// What the audit-trail admin verbs share (`mkt admin webhook ...`, `mkt admin key events`): the
// audit administration on the marketplace stores the Factory opens, closed afterwards, with its
// setting errors shown as usage errors.
import { openMarketplace, type AdminFlags } from '../flags.js';
import { UsageError } from '../../../src/cli/errors.js';
import type { LicenseAuditAdmin } from '../../../daemon/services/marketplace/license/audit-admin.js';

export type { AdminFlags } from '../flags.js';

export async function withAuditAdmin<T>(opts: AdminFlags, fn: (admin: LicenseAuditAdmin) => Promise<T>): Promise<T> {
  const stores = await openMarketplace(opts);
  try {
    const { LicenseAuditAdmin, WebhookSettingError } = await import('../../../daemon/services/marketplace/license/audit-admin.js');
    const admin = new LicenseAuditAdmin({ license: stores.license, audit: stores.licenseAudit, dataDir: stores.place.dataDir, env: opts.factory.io.env, now: () => opts.factory.now().getTime() });
    try {
      return await fn(admin);
    } catch (err) {
      if (err instanceof WebhookSettingError) throw new UsageError(err.message);
      throw err;
    }
  } finally {
    await stores.close();
  }
}
