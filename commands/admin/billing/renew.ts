// billingRenewRun: `mkt admin billing renew` — renews due local-provider subscriptions and
// prints what became of each (renewed, not due, ...).
import type { Factory } from '../../../src/cli/factory.js';
import { NegativeError } from '../../../src/cli/errors.js';
import { printJson, printTable } from '../../../src/cli/output.js';
import { dataDir } from '../../../src/config/paths.js';

export interface BillingRenewOptions {
  factory: Factory;
  dataDir?: string;
  app?: string;
  user?: string;
  early?: boolean;
  json?: boolean;
}

export async function billingRenewRun(opts: BillingRenewOptions): Promise<void> {
  const dir = dataDir(opts.dataDir, opts.factory.io.env, opts.factory.io.cwd);
  const { BillingAdmin } = await import('../../../daemon/services/marketplace/sync/billing-admin.js');
  const admin = new BillingAdmin(dir, () => opts.factory.now().getTime());
  let results;
  try {
    results = await admin.renew({ app: opts.app, user: opts.user, early: opts.early === true });
  } catch (err) {
    throw new NegativeError((err as Error).message);
  } finally {
    await admin.close();
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
