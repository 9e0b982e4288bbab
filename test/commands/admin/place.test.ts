// Which marketplace `mkt admin` works on (issue 30 item 1): a place that holds none is refused,
// naming it, and nothing is created there; only `migrate` and a first `user add` whose place the
// command line names create one; every answer names the place on stderr unless it is the one in
// MKT_DATA_DIR (and MKT_DATABASE_URL). SQLite (a data dir) and PostgreSQL (--database-url).
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { run } from '../../../commands/root/run.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { freshDatabaseUrl } from '../../helpers/pg.js';
import { tempDir } from '../../helpers/tmp.js';

const dir = tempDir('mkt-admin-place-');
afterAll(() => dir.remove());

/** `mkt ARGS` in `cwd` with exactly `env` (no MKT_DATA_DIR unless given). */
async function mkt(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}, stdin?: string): Promise<{ code: number; out: string; err: string }> {
  const io = fakeIO({ env, cwd, stdin });
  const code = await run(args, io);
  return { code, out: io.out(), err: io.err() };
}

describe('mkt admin on a data directory (SQLite)', () => {
  it('refuses the ./.mkt-data default that holds no marketplace, naming it, and creates nothing', async () => {
    const cwd = join(dir.path, 'fresh');
    mkdirSync(cwd);
    const listed = await mkt(cwd, ['admin', 'key', 'list', 'app']);
    expect(listed.code).toBe(1);
    expect(listed.err).toBe(
      `mkt: no marketplace in ${join(cwd, '.mkt-data')}\nhint: run \`mkt admin --data-dir DIR migrate\` (or a first \`mkt admin --data-dir DIR user add\`) to create one, or name the marketplace with --data-dir, MKT_DATA_DIR or --database-url\n`,
    );
    // The second step: a user added "into" the default is refused too.
    const added = await mkt(cwd, ['admin', 'user', 'add', 'zed', '--email', 'zed@example.com']);
    expect(added.code).toBe(1);
    expect(added.out).toBe('');
    expect(added.err).toMatch(/^mkt: no marketplace in .*\.mkt-data\n/);
    // Neither does MKT_DATA_DIR alone name a place to create (a forgotten variable is no intent).
    const byEnv = await mkt(cwd, ['admin', 'user', 'add', 'zed', '--email', 'zed@example.com'], { MKT_DATA_DIR: 'elsewhere' });
    expect(byEnv.code).toBe(1);
    expect(byEnv.err).toContain(`no marketplace in ${join(cwd, 'elsewhere')}`);
    for (const verb of [['app', 'list'], ['repo', 'list'], ['token', 'list'], ['user', 'list'], ['signing-key', 'rotate'], ['reindex'], ['billing', 'renew']]) {
      const r = await mkt(cwd, ['admin', '--data-dir', 'market', ...verb]);
      expect(r.code, verb.join(' ')).toBe(1);
      expect(r.err, verb.join(' ')).toContain(`no marketplace in ${join(cwd, 'market')}`);
    }
    expect(existsSync(join(cwd, '.mkt-data'))).toBe(false);
    expect(existsSync(join(cwd, 'elsewhere'))).toBe(false);
    expect(existsSync(join(cwd, 'market'))).toBe(false);
  });

  it('a first user add with --data-dir creates the marketplace and says so; later answers name the place unless MKT_DATA_DIR does', async () => {
    const cwd = join(dir.path, 'named');
    mkdirSync(cwd);
    // A first user refused for its input makes no marketplace either.
    const bad = await mkt(cwd, ['admin', '--data-dir', 'market', 'user', 'add', 'ana', '--email', 'not-an-address']);
    expect(bad.code).toBe(1);
    expect(bad.err).toBe('mkt: not an email address: "not-an-address"\n');
    expect(existsSync(join(cwd, 'market'))).toBe(false);
    const added = await mkt(cwd, ['admin', '--data-dir', 'market', 'user', 'add', 'ana', '--email', 'ana@example.com']);
    expect(added.code, added.err).toBe(0);
    expect(added.out).toBe('added user ana <ana@example.com>\n');
    expect(added.err).toBe(`created a new marketplace in ${join(cwd, 'market')}\n`);
    expect(existsSync(join(cwd, 'market', 'marketplace.db'))).toBe(true);
    // A second user add finds it (no "created").
    const second = await mkt(cwd, ['admin', '--data-dir', 'market', 'user', 'add', 'bo', '--email', 'bo@example.com']);
    expect(second.err).toBe(`using the marketplace in ${join(cwd, 'market')}\n`);
    const listed = await mkt(cwd, ['admin', '--data-dir', 'market', 'user', 'list']);
    expect(listed.code, listed.err).toBe(0);
    expect(listed.err).toBe(`using the marketplace in ${join(cwd, 'market')}\n`);
    // The place MKT_DATA_DIR names needs no saying, with the flag (naming the same place) or without.
    const quiet = await mkt(cwd, ['admin', 'user', 'list'], { MKT_DATA_DIR: join(cwd, 'market') });
    expect(quiet.code).toBe(0);
    expect(quiet.err).toBe('');
    expect(quiet.out.split('\n')[0]).toMatch(/^ana\tana@example\.com\t/);
    expect((await mkt(cwd, ['admin', '--data-dir', 'market', 'user', 'list'], { MKT_DATA_DIR: 'market' })).err).toBe('');
    // A flag naming another place than MKT_DATA_DIR is said.
    expect((await mkt(cwd, ['admin', '--data-dir', 'market', 'user', 'list'], { MKT_DATA_DIR: 'other' })).err).toBe(`using the marketplace in ${join(cwd, 'market')}\n`);
  });

  it('migrate creates a marketplace even in the ./.mkt-data default', async () => {
    const cwd = join(dir.path, 'migrated');
    mkdirSync(cwd);
    const r = await mkt(cwd, ['admin', 'migrate']);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toBe(`created a new marketplace in ${join(cwd, '.mkt-data')}\n`);
    expect((await mkt(cwd, ['admin', 'item', 'create', 'app', '--name', 'App'])).code).toBe(0);
  });

  it("the README's flow: a data dir `mkt serve marketplace --data-dir market` ran on takes `mkt admin --data-dir market user add`", async () => {
    const cwd = join(dir.path, 'served');
    mkdirSync(cwd);
    const { startService } = await import('../../../daemon/start.js');
    const { createLogger } = await import('../../../daemon/logger.js');
    const logger = createLogger({ level: 'silent', pretty: false, stream: new Writable({ write: (_c, _e, cb) => cb() }) });
    const svc = await startService('marketplace', { host: '127.0.0.1', port: 0, dataDir: join(cwd, 'market'), options: {}, env: {}, logger, out: { write: () => true } as unknown as NodeJS.WritableStream });
    try {
      const r = await mkt(cwd, ['admin', '--data-dir', 'market', 'user', 'add', 'ana', '--email', 'ana@example.com'], {}, 'correct horse battery\n');
      expect(r.code, r.err).toBe(0);
      expect(r.err).toBe(`using the marketplace in ${join(cwd, 'market')}\n`);
    } finally {
      await svc.close();
    }
  });
});

describe('mkt admin on a PostgreSQL database', () => {
  it('refuses an empty database, naming it without its password; user add with --database-url creates the marketplace', async () => {
    const url = await freshDatabaseUrl();
    const cwd = join(dir.path, 'pg');
    mkdirSync(cwd);
    const password = new URL(url).password;
    const refused = await mkt(cwd, ['admin', '--database-url', url, 'item', 'create', 'app', '--name', 'App']);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/^mkt: no marketplace in the database postgres:\/\/.*\/mkt_test_[0-9a-f]+\n/);
    if (password) expect(refused.err).not.toContain(password);
    // The variable alone does not name a place to create either.
    expect((await mkt(cwd, ['admin', 'user', 'add', 'ana', '--email', 'ana@example.com'], { MKT_DATABASE_URL: url })).code).toBe(1);
    expect(existsSync(join(cwd, '.mkt-data'))).toBe(false);

    const added = await mkt(cwd, ['admin', '--database-url', url, 'user', 'add', 'ana', '--email', 'ana@example.com']);
    expect(added.code, added.err).toBe(0);
    expect(added.err).toMatch(/^created a new marketplace in the database postgres:\/\/.*\/mkt_test_[0-9a-f]+ \(data directory .*\.mkt-data\)\n$/);
    if (password) expect(added.err).not.toContain(password);
    // Nothing of the stores lands in the data dir on PostgreSQL.
    expect(existsSync(join(cwd, '.mkt-data', 'marketplace.db'))).toBe(false);
    const item = await mkt(cwd, ['admin', '--database-url', url, 'item', 'create', 'app', '--name', 'App']);
    expect(item.code, item.err).toBe(0);
    expect(item.err).toMatch(/^using the marketplace in the database postgres:/);
    // Named by the environment (both variables): nothing to say.
    const quiet = await mkt(cwd, ['admin', 'user', 'list'], { MKT_DATABASE_URL: url, MKT_DATA_DIR: '.mkt-data' });
    expect(quiet.code, quiet.err).toBe(0);
    expect(quiet.err).toBe('');
  });
});
