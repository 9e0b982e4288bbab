// Administration of sync apps (what `mkt admin app ...` runs, on the marketplace stores the
// Factory opens, SQLite or PostgreSQL): create an app with its pricing constants (its public API
// key is shown once), list apps.
import type { SyncApp, SyncAppPricing, SyncStore } from '../../../../src/store/sync.js';
import type { MarketplaceStores } from '../../../../src/store/marketplace.js';
import { appKeyHash, newAppKey } from '../../../../src/crypto/sync-app-key.js';

const GIB = 1024 ** 3;

/** Pricing of an app created without flags: $1.00 floor, 2.5¢ per GiB-month, 10× annual, 1 GiB–1 TiB caps, 1 GiB free. */
export const DEFAULT_APP_PRICING: SyncAppPricing = {
  min_charge_cents: 100,
  per_gb_tenths_of_cent_per_month: 25,
  annual_multiplier: 10,
  min_cap_bytes: GIB,
  max_cap_bytes: 1024 * GIB,
  free_bytes: GIB,
};

/** Why pricing constants cannot be used, or undefined when they can. */
export function pricingProblem(p: SyncAppPricing): string | undefined {
  for (const [k, v] of Object.entries(p)) if (!Number.isSafeInteger(v) || v < 0) return `${k} must be a whole number ≥ 0`;
  if (p.annual_multiplier < 1) return 'annual_multiplier must be at least 1';
  if (p.min_cap_bytes < 1) return 'min_cap_bytes must be at least 1';
  if (p.max_cap_bytes < p.min_cap_bytes) return 'max_cap_bytes must not be below min_cap_bytes';
  return undefined;
}

export class SyncAdmin {
  readonly store: SyncStore;

  constructor(
    stores: Pick<MarketplaceStores, 'sync'>,
    private readonly now: () => number = Date.now,
    /** Closes what the admin opened itself (see `open`); stores given to it are the caller's. */
    private readonly onClose: () => Promise<void> = async () => undefined,
  ) {
    this.store = stores.sync;
  }

  /** An admin on stores it opens (and closes) itself: SQLite in `dataDir`, or PostgreSQL at `databaseUrl`. */
  static async open(target: { dataDir: string; databaseUrl?: string }, now: () => number = Date.now): Promise<SyncAdmin> {
    const { openMarketplaceStores } = await import('../../../../src/store/marketplace.js');
    const stores = await openMarketplaceStores({ dataDir: target.dataDir, databaseUrl: target.databaseUrl });
    return new SyncAdmin(stores, now, () => stores.close());
  }

  /** The new app and its API key (stored only as a hash: this is the one time it is known); undefined when the name is taken. */
  async createApp(name: string, pricing: Partial<SyncAppPricing> = {}): Promise<{ app: SyncApp; apiKey: string } | undefined> {
    const full = { ...DEFAULT_APP_PRICING, ...pricing };
    const problem = pricingProblem(full);
    if (problem) throw new Error(problem);
    if ((await this.store.listApps()).some((a) => a.name.toLowerCase() === name.toLowerCase())) return undefined;
    const apiKey = newAppKey();
    try {
      const app = await this.store.createApp({ name, apiKeyHash: appKeyHash(apiKey), pricing: full, now: new Date(this.now()).toISOString() });
      return { app, apiKey };
    } catch (err) {
      // Another admin (or instance) created the name between the check and the insert.
      if ((await this.store.listApps()).some((a) => a.name.toLowerCase() === name.toLowerCase())) return undefined;
      throw err;
    }
  }

  listApps(): Promise<SyncApp[]> {
    return this.store.listApps();
  }

  close(): Promise<void> {
    return this.onClose();
  }
}
