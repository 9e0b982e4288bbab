// Local administration of sync subscriptions (`mkt admin billing renew`) on the marketplace's
// stores (SQLite or PostgreSQL): renews subscriptions of the local payment provider through the
// same event path as the webhook (a renewal invoice reduced and applied once, subscriptions.ts),
// promoting any pending storage cap. One renewal run at a time across every instance and admin.
import type { EventOutcome } from '../../../../src/store/sync-billing.js';
import { quoteCents } from '../../../../src/sync/pricing.js';
import type { MarketplaceStores } from '../../../../src/store/marketplace.js';
import { localRenewalEvent, reduceEvent } from './payments.js';
import { applyEvent } from './subscriptions.js';

export interface RenewResult {
  app: string;
  user: string;
  outcome: EventOutcome | 'not_due' | 'not_local' | 'inactive';
  cap_bytes: number;
  price_cents: number;
  current_period_end: string;
}

/** The exclusive job name of a renewal run (SqlDatabase.exclusive). */
export const RENEW_JOB = 'sync-billing-renew';
const LOCAL_SUBSCRIPTION = /^sub_local_/;

export class BillingAdmin {
  constructor(
    private readonly stores: Pick<MarketplaceStores, 'sql' | 'storage' | 'accounts'>,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Renews the local-provider subscriptions whose period has ended (every one selected with
   * `early`), optionally only of one app (name or id) and one user (email or name). Throws
   * when a named app or user does not exist, or when another renewal run is under way (each
   * renewal is applied at most once anyway: a second one for a period is stale).
   */
  async renew(opts: { app?: string; user?: string; early?: boolean } = {}): Promise<RenewResult[]> {
    let results: RenewResult[] = [];
    const ran = await this.stores.sql.exclusive(RENEW_JOB, async () => {
      results = await this.renewNow(opts);
    });
    if (!ran) throw new Error('another subscription renewal is running on this database; try again when it has finished');
    return results;
  }

  private async renewNow(opts: { app?: string; user?: string; early?: boolean }): Promise<RenewResult[]> {
    const { storage, accounts } = this.stores;
    let appId: string | undefined;
    let userId: string | undefined;
    if (opts.app !== undefined) {
      const app = await storage.appByNameOrId(opts.app);
      if (!app) throw new Error(`no sync app ${JSON.stringify(opts.app)}`);
      appId = app.app_id;
    }
    if (opts.user !== undefined) {
      const user = (await accounts.findUserByEmail(opts.user)) ?? (await accounts.findUserByName(opts.user));
      if (!user) throw new Error(`no user ${JSON.stringify(opts.user)}`);
      userId = user.id;
    }
    const nowMs = this.now();
    const results: RenewResult[] = [];
    for (const sub of await storage.subscriptions({ app_id: appId, user_id: userId })) {
      const app = await storage.app(sub.app_id);
      const user = await accounts.getUser(sub.user_id);
      const row = { app: app?.app_name ?? sub.app_id, user: user?.email ?? sub.user_id };
      let outcome: RenewResult['outcome'];
      if (sub.status !== 'active') outcome = 'inactive';
      else if (!LOCAL_SUBSCRIPTION.test(sub.provider_subscription_id)) outcome = 'not_local';
      else if (!opts.early && Date.parse(sub.current_period_end) > nowMs) outcome = 'not_due';
      else {
        const cap = sub.pending_cap_bytes ?? sub.cap_bytes;
        const price = app ? quoteCents(app, cap, sub.interval) : sub.price_cents;
        const event = reduceEvent(localRenewalEvent(sub, Math.floor(nowMs / 1000), price));
        outcome = await applyEvent(storage, event, new Date(nowMs).toISOString());
      }
      const after = (await storage.subscription(sub.app_id, sub.user_id)) ?? sub;
      results.push({ ...row, outcome, cap_bytes: after.cap_bytes, price_cents: after.price_cents, current_period_end: after.current_period_end });
    }
    return results;
  }
}
