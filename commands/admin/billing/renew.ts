// billingRenewRun: `mkt admin billing renew` — renews due local-provider subscriptions and
// prints what became of each (renewed, not due, ...). Works on the marketplace stores the Factory
// opens: SQLite in the data dir, or PostgreSQL from --database-url / MKT_DATABASE_URL.
import { NegativeError } from '../../../src/cli/errors.js';
import { printJson, printTable } from '../../../src/cli/output.js';
import { openMarketplace, type AdminFlags } from '../flags.js';

export interface BillingRenewOptions extends AdminFlags {
  app?: string;
  user?: string;
  early?: boolean;
}

export async function billingRenewRun(opts: BillingRenewOptions): Promise<void> {
  const stores = await openMarketplace(opts);
  let results;
  try {
    const { BillingAdmin } = await import('../../../daemon/services/marketplace/sync/billing-admin.js');
    const admin = new BillingAdmin(stores, () => opts.factory.now().getTime());
    results = await admin.renew({ app: opts.app, user: opts.user, early: opts.early === true });
  } catch (err) {
    throw new NegativeError((err as Error).message);
  } finally {
    await stores.close();
  }
  if (opts.json) {
    printJson(opts.factory.io, results);
    return;
  }
  printTable(
    opts.factory.io,
    ['app', 'user', 'outcome', 'cap_bytes', 'price_cents', 'period_end'],
    results.map((r) => [r.app, r.user, r.outcome === 'applied' ? 'renewed' : r.outcome, String(r.cap_bytes), String(r.price_cents), r.current_period_end]),
  );
}
