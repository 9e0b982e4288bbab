// The repository adapter on both engines: repositories found by owner and name ignoring case,
// listed in one order, grants set, raised, revoked and dropped with their repository, a create
// decided inside a locked transaction, lookups that another instance's delete reaches, and the
// notes merge strategies of a repository's namespaces.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { describeEngines, ENGINES } from '../../helpers/engines.js';
import { freshDatabaseUrl } from '../../helpers/pg.js';
import type { Engine, SqlDatabase } from '../../../src/store/sql.js';
import { SqliteDatabase } from '../../../src/store/sql-sqlite.js';
import { PgDatabase } from '../../../src/store/sql-pg.js';
import { SqlAccountsStore } from '../../../src/store/accounts-sql.js';
import { SqlRepoStore } from '../../../src/store/repos-sql.js';

const UNIQUE = /UNIQUE|duplicate key/i;

async function stores(db: SqlDatabase) {
  const accounts = await SqlAccountsStore.open(db);
  const repos = await SqlRepoStore.open(db);
  const ana = await accounts.addUser({ name: 'Ana', email: 'ana@example.com' });
  const bo = await accounts.addUser({ name: 'bo', email: 'bo@example.com' });
  return { accounts, repos, ana, bo };
}

describeEngines('SqlRepoStore', (open) => {
  it('stores a notes merge strategy per repository and namespace; manual removes it; deleting the repository drops them', async () => {
    const { repos, ana } = await stores(await open());
    const app = await repos.createRepo({ ownerId: ana.id, owner: ana.name, name: 'app', private: false, objectFormat: 'sha1' });
    const lib = await repos.createRepo({ ownerId: ana.id, owner: ana.name, name: 'lib', private: false, objectFormat: 'sha1' });
    expect(await repos.notesMergeStrategies(app.id)).toEqual(new Map());
    await repos.setNotesMergeStrategy(app.id, 'commits', 'union');
    await repos.setNotesMergeStrategy(app.id, 'reviews/security', 'ours');
    await repos.setNotesMergeStrategy(lib.id, 'commits', 'theirs');
    await repos.setNotesMergeStrategy(app.id, 'commits', 'cat_sort_uniq');
    expect(await repos.notesMergeStrategies(app.id)).toEqual(new Map([['commits', 'cat_sort_uniq'], ['reviews/security', 'ours']]));
    await repos.setNotesMergeStrategy(app.id, 'reviews/security', 'manual');
    expect(await repos.notesMergeStrategies(app.id)).toEqual(new Map([['commits', 'cat_sort_uniq']]));
    await repos.deleteRepo(app.id);
    expect(await repos.notesMergeStrategies(app.id)).toEqual(new Map());
    expect(await repos.notesMergeStrategies(lib.id)).toEqual(new Map([['commits', 'theirs']]));
  });

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

/** Two handles on one new database, as two instances (or a server and `mkt admin`) hold. */
async function twoInstances(engine: Engine): Promise<{ a: SqlDatabase; b: SqlDatabase; dispose(): Promise<void> }> {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'mkt-repos-'));
    const a = new SqliteDatabase(join(dir, 'm.db'));
    const b = new SqliteDatabase(join(dir, 'm.db'));
    return { a, b, dispose: async () => { await a.close(); await b.close(); rmSync(dir, { recursive: true, force: true }); } };
  }
  const url = await freshDatabaseUrl();
  const a = await PgDatabase.open(url);
  const b = await PgDatabase.open(url);
  return { a, b, dispose: async () => { await a.close(); await b.close(); } };
}

describe('SqlRepoStore on two instances of one database', () => {
  it.each(ENGINES)('%s: cachedRepo answers what findRepo would, with no statement, only while the cache is trusted', async (engine) => {
    const { a, b, dispose } = await twoInstances(engine);
    // The clock findRepo's data-version check reads, held still and moved by hand.
    // Whole milliseconds: with a fractional start, (t + 100) - t can come out a hair under 100.
    let now = Math.ceil(performance.now());
    const clock = vi.spyOn(performance, 'now').mockImplementation(() => now);
    try {
      const { repos, ana } = await stores(a);
      const other = await SqlRepoStore.open(b);
      const app = await repos.createRepo({ ownerId: ana.id, owner: ana.name, name: 'app', private: false, objectFormat: 'sha1' });
      // Nothing remembered yet (and on SQLite, no data version read yet).
      expect(other.cachedRepo('ana', 'app')).toBeUndefined();
      // Remembered once found (PostgreSQL: once this instance listens for changes).
      await expect.poll(async () => (await other.findRepo('ana', 'app'), other.cachedRepo('ana', 'app'))).toEqual(app);
      // As findRepo keys it: the name exactly as asked; a name never found is not remembered.
      expect(other.cachedRepo('ANA', 'app')).toBeUndefined();
      expect(other.cachedRepo('ana', 'lib')).toBeUndefined();

      await repos.deleteRepo(app.id);
      if (engine === 'sqlite') {
        // Another connection's change is seen when the data version is read again: not before
        // DATA_VERSION_TTL_MS (findRepo answers from memory too), and cachedRepo never reads it.
        expect(other.cachedRepo('ana', 'app')).toEqual(app);
        expect(await other.findRepo('ana', 'app')).toEqual(app);
        now += 100;
        expect(other.cachedRepo('ana', 'app')).toBeUndefined();
        expect(await other.findRepo('ana', 'app')).toBeUndefined();
      } else {
        // The notification drops what the other instance remembers.
        await expect.poll(() => other.cachedRepo('ana', 'app')).toBeUndefined();
        expect(await other.findRepo('ana', 'app')).toBeUndefined();
      }
      expect(other.cachedRepo('ana', 'app')).toBeUndefined();
    } finally {
      clock.mockRestore();
      await dispose();
    }
  });

  it.each(ENGINES)('%s: lookups are remembered (SQLite checks the file\'s data version), and a create or delete on either instance reaches both', async (engine) => {
    const { a, b, dispose } = await twoInstances(engine);
    try {
      const { repos, ana } = await stores(a);
      const other = await SqlRepoStore.open(b);
      const reads: string[] = [];
      const get = b.get.bind(b);
      const value = b.value.bind(b);
      (b as { get: SqlDatabase['get'] }).get = (sql, params) => {
        reads.push(sql);
        return get(sql, params);
      };
      (b as { value: SqlDatabase['value'] }).value = (sql, params) => {
        reads.push(sql);
        return value(sql, params);
      };
      /** Lookups one lookup on the other instance runs (none once it is remembered; SQLite may check the data version). */
      const cost = async (name: string) => {
        const before = reads.length;
        await other.findRepo('ANA', name);
        return reads.slice(before).filter((sql) => sql !== 'PRAGMA data_version');
      };
      const remembered: string[] = [];

      const app = await repos.createRepo({ ownerId: ana.id, owner: ana.name, name: 'app', private: false, objectFormat: 'sha1' });
      expect(await other.findRepo('ANA', 'app')).toEqual(app);
      await expect.poll(() => cost('app')).toEqual(remembered);
      expect(await other.findRepo('ANA', 'app')).toEqual(app);
      // A name not found is not remembered: created on one instance, found on the other at once.
      expect(await other.findRepo('ana', 'lib')).toBeUndefined();
      const lib = await repos.createRepo({ ownerId: ana.id, owner: ana.name, name: 'lib', private: true, objectFormat: 'sha256' });
      expect(await other.findRepo('ana', 'lib')).toEqual(lib);

      // The deleting instance forgets at once; the other once the notification arrives.
      expect(await repos.findRepo('ana', 'app')).toEqual(app);
      await repos.deleteRepo(app.id);
      expect(await repos.findRepo('ana', 'app')).toBeUndefined();
      await expect.poll(() => other.findRepo('ANA', 'app')).toBeUndefined();

      // A delete inside a transaction is announced when it commits.
      await expect.poll(() => cost('lib')).toEqual(remembered);
      await repos.transaction((tx) => tx.deleteRepo(lib.id));
      await expect.poll(() => other.findRepo('ANA', 'lib')).toBeUndefined();
    } finally {
      await dispose();
    }
  });
});
