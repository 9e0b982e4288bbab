// `mkt admin billing renew` (issue 6 "Subscriptions and payments": local renewals triggered from
// the admin command): due local subscriptions are renewed on the data dir, a pending cap is
// promoted, filters by app and user, an unknown user is exit 1.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { adminCli } from '../../helpers/admin-cli.js';
import { tempDir } from '../../helpers/tmp.js';
import { startSyncServer } from '../../helpers/sync-server.js';

const GIB = 1024 ** 3;
const dir = tempDir('mkt-billing-admin-');
const data = join(dir.path, 'data');
afterAll(() => dir.remove());

const mkt = adminCli(dir.path, data);

describe('mkt admin billing renew', () => {
  it('renews a due local subscription, promoting its pending cap', async () => {
    const app = JSON.parse((await mkt(['app', 'create', 'Notes', '--json'])).out) as { api_key: string };
    expect((await mkt(['user', 'add', 'ana', '--email', 'ana@example.com'], { stdin: 'a long enough password\n' })).code).toBe(0);
    // The server's clock stands at 2026-03-01; the command's is the real one, months later.
    const s = await startSyncServer({ dataDir: data });
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
});
