// `mkt admin user add`, `token create|revoke`, `session create`, `repo create|grant`, `reindex`
// on a data dir, with the stores on SQLite (the data dir's marketplace.db) and on PostgreSQL
// (`--database-url`, or MKT_DATABASE_URL), checked through the stores and the bare repositories
// they leave behind.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCli, type AdminCli } from '../../helpers/admin-cli.js';
import { ENGINES } from '../../helpers/engines.js';
import { freshDatabaseUrl } from '../../helpers/pg.js';
import { tempDir } from '../../helpers/tmp.js';
import { AccountsAdmin } from '../../../daemon/services/marketplace/accounts/admin.js';
import { verifyPassword } from '../../../src/crypto/password.js';

for (const engine of ENGINES) {
  describe(`mkt admin accounts and repositories [${engine}]`, () => {
    const dir = tempDir('mkt-accounts-admin-');
    const data = join(dir.path, 'data');
    let databaseUrl: string | undefined;
    let mkt: AdminCli;
    beforeAll(async () => {
      databaseUrl = engine === 'postgres' ? await freshDatabaseUrl() : undefined;
      mkt = adminCli(dir.path, data, { databaseUrl });
    });
    afterAll(() => dir.remove());

    async function withAdmin<T>(fn: (a: AccountsAdmin) => Promise<T>): Promise<T> {
      const a = await AccountsAdmin.open({ dataDir: data, databaseUrl });
      try {
        return await fn(a);
      } finally {
        await a.close();
      }
    }

    it('user add stores a password hash read from stdin; duplicates and bad input exit non-zero', async () => {
      const added = await mkt(['user', 'add', 'ana', '--email', 'ana@example.com'], { stdin: 'correct horse battery\n' });
      expect(added.code, added.err).toBe(0);
      const hash = await withAdmin(async (a) => a.accounts.getPasswordHash((await a.accounts.findUserByName('ana'))!.id));
      expect(await verifyPassword('correct horse battery', hash!)).toBe(true);
      expect((await mkt(['user', 'add', 'bo', '--email', 'bo@example.com'], { tty: true })).code).toBe(0);
      const dup = await mkt(['user', 'add', 'ANA', '--email', 'x@example.com'], { tty: true });
      expect(dup.code).toBe(1);
      expect(dup.err).toMatch(/already exists/);
      const dupEmail = await mkt(['user', 'add', 'cy', '--email', 'ANA@example.com'], { tty: true });
      expect(dupEmail.code).toBe(1);
      expect(dupEmail.err).toMatch(/already used/);
      expect((await mkt(['user', 'add', '../x', '--email', 'x@example.com'], { tty: true })).code).toBe(1);
      expect((await mkt(['user', 'add', 'cy', '--email', 'not-an-email'], { tty: true })).code).toBe(1);
      expect((await mkt(['user', 'add', 'cy', '--email', 'cy\0@example.com'], { tty: true })).code).toBe(1);
      if (engine === 'sqlite') expect(statSync(join(data, 'marketplace.db')).mode & 0o777).toBe(0o600);
      // On PostgreSQL nothing of the stores lands in the data dir.
      else expect(existsSync(join(data, 'marketplace.db'))).toBe(false);
    });

    it('concurrent adds of one name: exactly one succeeds, the others say it exists', async () => {
      const results = await withAdmin((a) =>
        Promise.allSettled(Array.from({ length: 8 }, (_, i) => a.addUser({ name: i % 2 ? 'Dee' : 'dee', email: `dee${i}@example.com` }))),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect(String(r.reason)).toMatch(/already exists/);
    });

    it('token create prints the token once and stores only a hash; revoke stops it', async () => {
      const r = await mkt(['token', 'create', 'ana', '--scope', 'push', '--json']);
      expect(r.code, r.err).toBe(0);
      const { token, id, scope } = JSON.parse(r.out) as { token: string; id: string; scope: string };
      expect(scope).toBe('push');
      expect(token).toMatch(/^mkt_[A-Za-z0-9_-]{43}$/);
      expect(await withAdmin(async (a) => (await a.accounts.authenticateToken(token))?.user.name)).toBe('ana');
      expect((await mkt(['token', 'create', 'ana', '--scope', 'admin'])).code).toBe(2);
      expect((await mkt(['token', 'create', 'nobody', '--scope', 'read'])).code).toBe(1);
      expect((await mkt(['token', 'create', 'ana', '--scope', 'read', '--name', 'a\0b'])).code).toBe(1);
      expect((await mkt(['token', 'revoke', id])).code).toBe(0);
      expect(await withAdmin((a) => a.accounts.authenticateToken(token))).toBeUndefined();
      expect((await mkt(['token', 'revoke', id])).code).toBe(1);
      const plain = await mkt(['token', 'create', 'bo', '--scope', 'read']);
      expect((await mkt(['token', 'revoke', '-'], { stdin: plain.out })).code).toBe(0);
    });

    it('session create mints a cookie value that authenticates the user', async () => {
      // The database also comes from MKT_DATABASE_URL when no flag names one.
      const run = databaseUrl ? adminCli(dir.path, data) : mkt;
      const r = await run(['session', 'create', 'ana'], { env: databaseUrl ? { MKT_DATABASE_URL: databaseUrl } : {} });
      expect(r.code, r.err).toBe(0);
      expect(r.err).toMatch(/mkt_session=/);
      expect(await withAdmin(async (a) => (await a.accounts.authenticateSession(r.out.trim()))?.name)).toBe('ana');
    });

    it('repo create makes a bare repository of the asked object format; grant and reindex work', async () => {
      const r = await mkt(['repo', 'create', 'ana/app', '--private', '--object-format', 'sha256', '--json']);
      expect(r.code, r.err).toBe(0);
      const created = JSON.parse(r.out) as { path: string; private: boolean; object_format: string };
      expect(created).toMatchObject({ private: true, object_format: 'sha256' });
      expect(existsSync(join(created.path, 'HEAD'))).toBe(true);
      expect((await mkt(['repo', 'create', 'ana/app'])).code).toBe(1);
      expect((await mkt(['repo', 'create', 'ANA/App'])).err).toMatch(/already exists/);
      expect((await mkt(['repo', 'create', 'nobody/app'])).code).toBe(1);
      expect((await mkt(['repo', 'create', 'ana/-bad'])).code).toBe(1);
      expect((await mkt(['repo', 'create', 'ana/lib.git'])).out).toMatch(/ana\/lib at /);
      expect((await mkt(['repo', 'create', 'ana/y', '--object-format', 'md5'])).code).toBe(2);
      // No staging directory is left behind by creates that succeeded or failed.
      expect(readdirSync(join(data, 'repos', 'ana')).sort()).toEqual(['app.git', 'lib.git']);
      expect((await mkt(['repo', 'grant', 'ana/app', 'bo', '--read'])).code).toBe(0);
      expect((await mkt(['repo', 'grant', 'ana/app', 'bo'])).code).toBe(2);
      expect((await mkt(['repo', 'grant', 'ana/nope', 'bo', '--read'])).code).toBe(1);
      expect(
        await withAdmin(async (a) => a.repos.permissionOf((await a.repos.findRepo('ana', 'app'))!.id, (await a.accounts.findUserByName('bo'))!.id)),
      ).toBe('read');
      const re = await mkt(['reindex', '--json']);
      expect(re.code, re.err).toBe(0);
      expect(JSON.parse(re.out)).toEqual([{ repo: 'ana/app', namespaces: 0, notes: 0 }, { repo: 'ana/lib', namespaces: 0, notes: 0 }]);
    });

    it('concurrent creates of one repository: one row, one directory', async () => {
      const results = await withAdmin((a) =>
        Promise.allSettled(Array.from({ length: 4 }, () => a.createRepo('bo/race', { private: false, objectFormat: 'sha1' }))),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(readdirSync(join(data, 'repos', 'bo'))).toEqual(['race.git']);
      expect(existsSync(join(data, 'repos', 'bo', 'race.git', 'HEAD'))).toBe(true);
    });

    it('user list, repo list and token list: a table on a terminal, TSV in a pipe, --json; never a secret (issue 30 item 13)', async () => {
      const made = JSON.parse((await mkt(['token', 'create', 'bo', '--scope', 'push', '--name', 'ci', '--json'])).out) as { token: string; id: string };
      const users = await mkt(['user', 'list', '--json']);
      expect(users.code, users.err).toBe(0);
      const userRows = JSON.parse(users.out) as Record<string, unknown>[];
      expect(userRows.map((u) => String(u.name).toLowerCase())).toEqual(['ana', 'bo', 'dee']);
      expect(Object.keys(userRows[0]!).sort()).toEqual(['created_at', 'email', 'id', 'name']);
      const tsv = await mkt(['user', 'list']);
      expect(tsv.out.split('\n')[0]).toMatch(/^ana\tana@example\.com\t[0-9a-f-]{36}\t\d{4}-/);
      const table = await mkt(['user', 'list'], { tty: true, env: { NO_COLOR: '1' } });
      expect(table.out.split('\n')[0]).toMatch(/^NAME\s+EMAIL\s+ID\s+CREATED$/);

      const repos = await mkt(['repo', 'list', '--json']);
      expect(repos.code, repos.err).toBe(0);
      expect((JSON.parse(repos.out) as { owner: string; name: string; private: boolean; path: string }[]).map((r) => [`${r.owner}/${r.name}`, r.private, r.path])).toEqual([
        ['ana/app', true, join(data, 'repos', 'ana', 'app.git')],
        ['ana/lib', false, join(data, 'repos', 'ana', 'lib.git')],
        ['bo/race', false, join(data, 'repos', 'bo', 'race.git')],
      ]);
      expect((await mkt(['repo', 'list'])).out.split('\n')[0]).toBe(`ana/app\tprivate\tsha256\t${(JSON.parse(repos.out) as { created_at: string }[])[0]!.created_at}\t${join(data, 'repos', 'ana', 'app.git')}`);

      const all = await mkt(['token', 'list', '--json']);
      expect(all.code, all.err).toBe(0);
      const tokens = JSON.parse(all.out) as Record<string, unknown>[];
      // ana's push token and bo's read token, both revoked earlier, then bo's new one: by user, then creation.
      expect(tokens.map((t) => [t.user, t.scope, t.revoked_at === null])).toEqual([
        ['ana', 'push', false],
        ['bo', 'read', false],
        ['bo', 'push', true],
      ]);
      expect(tokens.find((t) => t.id === made.id)).toMatchObject({ user: 'bo', name: 'ci', scope: 'push', revoked_at: null });
      for (const t of tokens) expect(Object.keys(t).sort()).toEqual(['created_at', 'id', 'name', 'revoked_at', 'scope', 'user', 'user_id']);
      const bo = JSON.parse((await mkt(['token', 'list', 'bo', '--json'])).out) as { user: string }[];
      expect(bo.length).toBeGreaterThan(0);
      expect(new Set(bo.map((t) => t.user))).toEqual(new Set(['bo']));
      const piped = await mkt(['token', 'list']);
      expect(piped.out).toContain(`${made.id}\tbo\tci\tpush\t`);
      // No token value (nor its SHA-256) is in any answer.
      const { createHash } = await import('node:crypto');
      for (const out of [all.out, piped.out, (await mkt(['token', 'list'], { tty: true })).out]) {
        expect(out).not.toContain(made.token);
        expect(out).not.toContain(createHash('sha256').update(made.token).digest('hex'));
        expect(out).not.toMatch(/mkt_[A-Za-z0-9_-]{43}/);
      }
      const nobody = await mkt(['token', 'list', 'nobody']);
      expect(nobody.code).toBe(1);
      expect(nobody.err).toMatch(/no user "nobody"/);
    });
  });
}
