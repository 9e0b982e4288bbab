// Local administration of sync subscriptions (`mkt admin billing renew`), straight on the data
// dir: renews subscriptions of the local payment provider through the same event path as the
// webhook (a renewal invoice reduced and applied once), promoting any pending storage cap.
import { join } from 'node:path';
import { openDatabase, type Db } from '../../../../src/store/sqlite.js';
import { SqliteAccountsStore } from '../../../../src/store/accounts.js';
import { SqliteSyncStorageStore, type EventOutcome } from '../../../../src/store/sync-billing.js';
import { quoteCents } from '../../../../src/sync/pricing.js';
import { localRenewalEvent, reduceEvent } from './payments.js';

export interface RenewResult {
  app: string;
  user: string;
  outcome: EventOutcome | 'not_due' | 'not_local' | 'inactive';
  cap_bytes: number;
  price_cents: number;
  current_period_end: string;
}

const LOCAL_SUBSCRIPTION = /^sub_local_/;

export class BillingAdmin {
  private readonly db: Db;
  private readonly store: SqliteSyncStorageStore;
  private readonly accounts: SqliteAccountsStore;

  constructor(dataDir: string, private readonly now: () => number = Date.now) {
    this.db = openDatabase(join(dataDir, 'marketplace.db'));
    this.store = new SqliteSyncStorageStore(this.db);
    this.accounts = new SqliteAccountsStore(this.db);
  }

  /**
   * Renews the local-provider subscriptions whose period has ended (every one selected with
   * `early`), optionally only of one app (name or id) and one user (email or name). Throws
   * when a named app or user does not exist.
   */
  async renew(opts: { app?: string; user?: string; early?: boolean } = {}): Promise<RenewResult[]> {
    let appId: string | undefined;
    let userId: string | undefined;
    if (opts.app !== undefined) {
      const app = await this.store.appByNameOrId(opts.app);
      if (!app) throw new Error(`no sync app ${JSON.stringify(opts.app)}`);
      appId = app.app_id;
    }
    if (opts.user !== undefined) {
      const user = (await this.accounts.findUserByEmail(opts.user)) ?? (await this.accounts.findUserByName(opts.user));
      if (!user) throw new Error(`no user ${JSON.stringify(opts.user)}`);
      userId = user.id;
    }
    const nowMs = this.now();
    const results: RenewResult[] = [];
    for (const sub of await this.store.subscriptions({ app_id: appId, user_id: userId })) {
      const app = await this.store.app(sub.app_id);
      const user = await this.accounts.getUser(sub.user_id);
      const row = { app: app?.app_name ?? sub.app_id, user: user?.email ?? sub.user_id };
      let outcome: RenewResult['outcome'];
      if (sub.status !== 'active') outcome = 'inactive';
      else if (!LOCAL_SUBSCRIPTION.test(sub.provider_subscription_id)) outcome = 'not_local';
      else if (!opts.early && Date.parse(sub.current_period_end) > nowMs) outcome = 'not_due';
      else {
        const cap = sub.pending_cap_bytes ?? sub.cap_bytes;
        const price = app ? quoteCents(app, cap, sub.interval) : sub.price_cents;
        const event = reduceEvent(localRenewalEvent(sub, Math.floor(nowMs / 1000), price));
        outcome = await this.store.applyEvent(event, new Date(nowMs).toISOString());
      }
      const after = (await this.store.subscription(sub.app_id, sub.user_id)) ?? sub;
      results.push({ ...row, outcome, cap_bytes: after.cap_bytes, price_cents: after.price_cents, current_period_end: after.current_period_end });
    }
    return results;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
