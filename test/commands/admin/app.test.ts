// `mkt admin app create|list` (issue 6 "Apps, users, tokens"): the public API key printed once
// (only its hash kept), pricing flags with defaults, and a key and user made by admin working
// against `mkt serve marketplace` on the same data dir (and its database: PostgreSQL under
// MKT_TEST_ENGINE=postgres); `--database-url` works on a PostgreSQL database.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { run } from '../../../commands/root/run.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { freshDatabaseUrl, marketplaceEnvFor } from '../../helpers/pg.js';
import { tempDir } from '../../helpers/tmp.js';
import { startSyncServer } from '../../helpers/sync-server.js';

const dir = tempDir('mkt-app-admin-');
const data = join(dir.path, 'data');
afterAll(() => dir.remove());

/** `mkt admin --data-dir DATA ...` with the data dir's database in the environment (as the server gets it). */
async function mkt(args: string[], opts: { stdin?: string; tty?: boolean } = {}): Promise<{ code: number; out: string; err: string }> {
  const io = fakeIO({ env: await marketplaceEnvFor(data), stdin: opts.stdin, tty: opts.tty, cwd: dir.path });
  const code = await run(['admin', '--data-dir', data, ...args], io);
  return { code, out: io.out(), err: io.err() };
}

describe('mkt admin app', () => {
  let apiKey = '';

  it('create prints the API key once with default pricing; the data dir keeps only its hash', async () => {
    // Issue 30 item 1: no marketplace is made by `app create`; `migrate` makes one.
    const refused = await mkt(['app', 'create', 'Notes', '--json']);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/no marketplace in /);
    expect((await mkt(['migrate'])).code).toBe(0);
    const r = await mkt(['app', 'create', 'Notes', '--json']);
    expect(r.code, r.err).toBe(0);
    const app = JSON.parse(r.out) as Record<string, unknown>;
    expect(app).toMatchObject({ name: 'Notes', min_charge_cents: 100, per_gb_tenths_of_cent_per_month: 25, annual_multiplier: 10, min_cap_bytes: 1024 ** 3, max_cap_bytes: 1024 ** 4, free_bytes: 1024 ** 3 });
    apiKey = app.api_key as string;
    expect(apiKey).toMatch(/^mkt_app_[A-Za-z0-9_-]{43}$/);
    // On PostgreSQL the data dir may not even exist yet.
    for (const f of existsSync(data) ? readdirSync(data) : []) expect(readFileSync(join(data, f)).includes(apiKey)).toBe(false);
    const list = await mkt(['app', 'list', '--json']);
    expect(list.out).not.toContain(apiKey);
    expect((JSON.parse(list.out) as { name: string }[]).map((a) => a.name)).toEqual(['Notes']);
  });

  it('takes pricing flags with sizes; refuses a taken name (exit 1) and bad flags (exit 2)', async () => {
    const r = await mkt(['app', 'create', 'Photos', '--min-charge-cents', '250', '--per-gb-tenths-of-cent', '40', '--annual-multiplier', '11', '--min-cap', '10GiB', '--max-cap', '2TiB', '--free', '0']);
    expect(r.code, r.err).toBe(0);
    // Issue 30 item 4: in a pipe the key is all of stdout (APP_KEY=$(mkt admin app create NAME)).
    expect(r.out).toMatch(/^mkt_app_[A-Za-z0-9_-]{43}\n$/);
    expect(r.err).toMatch(/shown only this once/);
    // On a terminal, the app's fields in a table.
    const tty = await mkt(['app', 'create', 'Pictures'], { tty: true });
    expect(tty.code, tty.err).toBe(0);
    expect(tty.out).toMatch(/api key:\s+mkt_app_/);
    expect(tty.out).toMatch(/min charge:\s+100 cents/);
    const photos = (JSON.parse((await mkt(['app', 'list', '--json'])).out) as Record<string, unknown>[]).find((a) => a.name === 'Photos');
    expect(photos).toMatchObject({ min_charge_cents: 250, per_gb_tenths_of_cent_per_month: 40, annual_multiplier: 11, min_cap_bytes: 10 * 1024 ** 3, max_cap_bytes: 2 * 1024 ** 4, free_bytes: 0 });
    expect((await mkt(['app', 'create', 'notes'])).code).toBe(1);
    expect((await mkt(['app', 'create', 'X', '--min-charge-cents', '-1'])).code).toBe(2);
    expect((await mkt(['app', 'create', 'X', '--min-cap', 'lots'])).code).toBe(2);
    expect((await mkt(['app', 'create', 'X', '--min-cap', '2GiB', '--max-cap', '1GiB'])).code).toBe(2);
    expect((await mkt(['app', 'create', 'X', '--annual-multiplier', '0'])).code).toBe(2);
  });

  it('the key and a user added with a password from stdin sign in to the server on the same data dir', async () => {
    const u = await mkt(['user', 'add', 'ana', '--email', 'ana@example.com'], { stdin: 'hunter2-but-longer\n' });
    expect(u.code, u.err).toBe(0);
    const s = await startSyncServer({ dataDir: data });
    try {
      expect((await s.call('POST', '/api/v1/sync/app/pricing', { body: { api_key: apiKey } })).body).toMatchObject({ app_name: 'Notes', min_charge_cents: 100 });
      const token = await s.signIn(apiKey, 'ana@example.com', 'hunter2-but-longer');
      expect((await s.call('GET', '/api/v1/sync/account', { token })).body).toMatchObject({ username: 'ana', email: 'ana@example.com', app_name: 'Notes' });
    } finally {
      await s.close();
    }
  });
});

describe('mkt admin --database-url (PostgreSQL)', () => {
  it('creates and lists apps in the database, not in the data dir; a server on that database knows them', async () => {
    const url = await freshDatabaseUrl();
    const pgData = join(dir.path, 'pg-data');
    const cli = async (args: string[]) => {
      const io = fakeIO({ env: {}, cwd: dir.path });
      const code = await run(['admin', '--data-dir', pgData, '--database-url', url, ...args], io);
      return { code, out: io.out(), err: io.err() };
    };
    expect((await cli(['migrate'])).code).toBe(0);
    const made = await cli(['app', 'create', 'Remote', '--free', '2GiB', '--json']);
    expect(made.code, made.err).toBe(0);
    const app = JSON.parse(made.out) as { api_key: string; free_bytes: number };
    expect(app.free_bytes).toBe(2 * 1024 ** 3);
    expect((await cli(['app', 'create', 'remote'])).code).toBe(1);
    const list = await cli(['app', 'list', '--json']);
    expect(list.code, list.err).toBe(0);
    expect((JSON.parse(list.out) as { name: string }[]).map((a) => a.name)).toEqual(['Remote']);
    expect(existsSync(join(pgData, 'marketplace.db'))).toBe(false);
    // The same database through the environment.
    const io = fakeIO({ env: { MKT_DATABASE_URL: url }, cwd: dir.path });
    expect(await run(['admin', '--data-dir', pgData, 'app', 'list', '--json'], io)).toBe(0);
    expect((JSON.parse(io.out()) as { name: string }[]).map((a) => a.name)).toEqual(['Remote']);
    const s = await startSyncServer({ databaseUrl: url });
    try {
      expect((await s.call('POST', '/api/v1/sync/validate-app', { body: { api_key: app.api_key } })).body).toMatchObject({ valid: true, app_name: 'Remote' });
    } finally {
      await s.close();
    }
    // Anything but a PostgreSQL URL is a usage error.
    const io2 = fakeIO({ env: {}, cwd: dir.path });
    expect(await run(['admin', '--data-dir', pgData, '--database-url', 'mysql://x', 'app', 'list'], io2)).toBe(2);
    expect(io2.err()).toMatch(/postgres:\/\//);
  });
});
