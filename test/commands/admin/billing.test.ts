// `mkt admin billing renew` (issue 6 "Subscriptions and payments": local renewals triggered from
// the admin command): due local subscriptions are renewed in the marketplace's database (the data
// dir's SQLite file, or PostgreSQL through --database-url), a pending cap is promoted, filters by
// app and user, an unknown user is exit 1, and renewals run one at a time on a database.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { adminCli, type AdminCli } from '../../helpers/admin-cli.js';
import { tempDir } from '../../helpers/tmp.js';
import { startSyncServer } from '../../helpers/sync-server.js';
import { freshDatabaseUrl, marketplaceEnvFor } from '../../helpers/pg.js';
import { openMarketplaceStores } from '../../../src/store/marketplace.js';
import { BillingAdmin, RENEW_JOB } from '../../../daemon/services/marketplace/sync/billing-admin.js';

const GIB = 1024 ** 3;
const dir = tempDir('mkt-billing-admin-');
afterAll(() => dir.remove());

for (const engine of ['sqlite', 'postgres'] as const) describe(`mkt admin billing renew [${engine}]`, () => {
  const data = join(dir.path, `data-${engine}`);
  let databaseUrl: string | undefined;
  let mkt: AdminCli;
  const ready = (async () => {
    databaseUrl = engine === 'postgres' ? await freshDatabaseUrl() : (await marketplaceEnvFor(data)).MKT_DATABASE_URL;
    mkt = adminCli(dir.path, data, { databaseUrl });
    // `app create` makes no marketplace (issue 30 item 1): migrate makes it.
    expect((await mkt(['migrate'])).code).toBe(0);
  })();

  it('renews a due local subscription, promoting its pending cap', async () => {
    await ready;
    const app = JSON.parse((await mkt(['app', 'create', 'Notes', '--json'])).out) as { api_key: string };
    expect((await mkt(['user', 'add', 'ana', '--email', 'ana@example.com'], { stdin: 'a long enough password\n' })).code).toBe(0);
    // The server's clock stands at 2026-03-01; the command's is the real one, months later.
    const s = await startSyncServer({ dataDir: data, databaseUrl });
    try {
      const token = await s.signIn(app.api_key, 'ana@example.com', 'a long enough password');
      const co = await s.call<{ checkout_url: string }>('POST', '/api/v1/sync/subscription/checkout', { token, body: { cap_bytes: 50 * GIB, interval: 'month' } });
      expect((await fetch(`${co.body.checkout_url}/confirm`, { method: 'POST' })).status).toBe(200);
      expect((await s.call('POST', '/api/v1/sync/subscription/storage-cap', { token, body: { cap_bytes: 100 * GIB } })).status).toBe(200);
    } finally {
      await s.close();
    }

    const none = await mkt(['billing', 'renew', '--app', 'Notes', '--user', 'nobody@example.com']);
    expect(none.code).toBe(1);
    expect(none.err).toMatch(/no user "nobody@example.com"/);

    const r = await mkt(['billing', 'renew', '--user', 'ana@example.com', '--json']);
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toEqual([
      { app: 'Notes', user: 'ana@example.com', outcome: 'applied', cap_bytes: 100 * GIB, price_cents: 250, current_period_end: '2026-05-01T12:00:00.000Z' },
    ]);
    // A pipe gets TSV rows.
    const t = await mkt(['billing', 'renew']);
    expect(t.code).toBe(0);
    expect(t.out.split('\n')[0]).toBe(`Notes\tana@example.com\trenewed\t${100 * GIB}\t250\t2026-06-01T12:00:00.000Z`);
  });

  it('runs one renewal at a time on a database', async () => {
    await ready;
    const stores = await openMarketplaceStores({ dataDir: data, databaseUrl });
    try {
      let release!: () => void;
      // Another instance or admin holds the renewal job.
      const held = stores.sql.exclusive(RENEW_JOB, () => new Promise<void>((r) => (release = r)));
      await new Promise((r) => setTimeout(r, 50));
      await expect(new BillingAdmin(stores).renew()).rejects.toThrow(/another subscription renewal is running/);
      release();
      await held;
      // Free again; at a time inside the current period nothing is due.
      expect((await new BillingAdmin(stores, () => Date.parse('2026-03-02T00:00:00.000Z')).renew()).map((r) => r.outcome)).toEqual(['not_due']);
    } finally {
      await stores.close();
    }
  });
});
