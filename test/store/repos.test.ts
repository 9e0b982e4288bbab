// The repository adapter on both engines: repositories found by owner and name ignoring case,
// listed in one order, grants set, raised, revoked and dropped with their repository, and a
// create decided inside a locked transaction.
import { expect, it } from 'vitest';
import { describeEngines } from '../helpers/engines.js';
import type { SqlDatabase } from '../../src/store/sql.js';
import { SqlAccountsStore } from '../../src/store/accounts-sql.js';
import { SqlRepoStore } from '../../src/store/repos-sql.js';

const UNIQUE = /UNIQUE|duplicate key/i;

async function stores(db: SqlDatabase) {
  const accounts = await SqlAccountsStore.open(db);
  const repos = await SqlRepoStore.open(db);
  const ana = await accounts.addUser({ name: 'Ana', email: 'ana@example.com' });
  const bo = await accounts.addUser({ name: 'bo', email: 'bo@example.com' });
  return { accounts, repos, ana, bo };
}

describeEngines('SqlRepoStore', (open) => {
  it('creates repositories and finds them by owner and name ignoring case', async () => {
    const { repos, ana } = await stores(await open());
    const app = await repos.createRepo({ ownerId: ana.id, owner: ana.name, name: 'App', private: true, objectFormat: 'sha256' });
    expect(app).toMatchObject({ owner: 'Ana', owner_id: ana.id, name: 'App', private: true, object_format: 'sha256' });
    expect(await repos.findRepo('ana', 'app')).toEqual(app);
    expect(await repos.findRepo('ANA', 'APP')).toEqual(app);
    expect(await repos.findRepo('ana', 'other')).toBeUndefined();
    // NUL (which PostgreSQL text cannot hold) finds nothing rather than failing.
    expect(await repos.findRepo('ana\0', 'app')).toBeUndefined();
    expect(await repos.findRepo('ana', '\0')).toBeUndefined();
    await expect(repos.createRepo({ ownerId: ana.id, owner: 'ana', name: 'app', private: false, objectFormat: 'sha1' })).rejects.toThrow(UNIQUE);
    const pub = await repos.createRepo({ ownerId: ana.id, owner: ana.name, name: 'lib', private: false, objectFormat: 'sha1' });
    expect((await repos.findRepo('Ana', 'lib'))?.private).toBe(false);
    expect(pub.private).toBe(false);
  });

  it('refuses a repository of an owner that does not exist', async () => {
    const { repos } = await stores(await open());
    await expect(repos.createRepo({ ownerId: 'ghost', owner: 'ghost', name: 'x', private: false, objectFormat: 'sha1' })).rejects.toThrow(/FOREIGN KEY|foreign key/);
  });

  it('lists every repository by owner then name, ignoring case', async () => {
    const { repos, ana, bo } = await stores(await open());
    for (const [u, name] of [[bo, 'b'], [ana, 'zed'], [ana, 'Beta'], [ana, 'alpha'], [bo, 'A_x'], [bo, 'ab']] as const) {
      await repos.createRepo({ ownerId: u.id, owner: u.name, name, private: false, objectFormat: 'sha1' });
    }
    expect((await repos.listRepos()).map((r) => `${r.owner}/${r.name}`)).toEqual(['Ana/alpha', 'Ana/Beta', 'Ana/zed', 'bo/A_x', 'bo/ab', 'bo/b']);
  });

  it('grants, raises, lowers and revokes permissions; deleting a repository drops its grants', async () => {
    const db = await open();
    const { repos, ana, bo } = await stores(db);
    const app = await repos.createRepo({ ownerId: ana.id, owner: ana.name, name: 'app', private: true, objectFormat: 'sha1' });
    expect(await repos.permissionOf(app.id, bo.id)).toBeUndefined();
    await repos.grant(app.id, bo.id, 'read');
    expect(await repos.permissionOf(app.id, bo.id)).toBe('read');
    await repos.grant(app.id, bo.id, 'push');
    expect(await repos.permissionOf(app.id, bo.id)).toBe('push');
    await repos.grant(app.id, bo.id, 'read');
    expect(await repos.permissionOf(app.id, bo.id)).toBe('read');
    await repos.revoke(app.id, bo.id);
    expect(await repos.permissionOf(app.id, bo.id)).toBeUndefined();
    await repos.grant(app.id, bo.id, 'push');
    await repos.deleteRepo(app.id);
    expect(await repos.findRepo('ana', 'app')).toBeUndefined();
    expect(await db.value('SELECT COUNT(*) FROM repo_grants')).toBe(0);
    expect(await repos.listRepos()).toEqual([]);
  });

  it('locked create transactions: one create of a free name wins, the others see it', async () => {
    const { repos, ana } = await stores(await open());
    const made = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        repos.transaction(async (tx) => {
          await tx.lock('repos:ana/app');
          if (await tx.findRepo('ana', 'app')) return false;
          await new Promise((r) => setTimeout(r, 2));
          await tx.createRepo({ ownerId: ana.id, owner: ana.name, name: i % 2 ? 'app' : 'APP', private: false, objectFormat: 'sha1' });
          return true;
        }),
      ),
    );
    expect(made.filter(Boolean)).toHaveLength(1);
    expect(await repos.listRepos()).toHaveLength(1);
  });
});
