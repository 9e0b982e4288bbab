// The accounts adapter on both engines: users by id, name and email (case-insensitive, unique),
// password hashes, tokens (hashed, revocable) and sessions (hashed, expiring), and transactions
// that serialise a read-decide-write through a lock.
import { expect, it } from 'vitest';
import { describeEngines } from '../../helpers/engines.js';
import { SqlAccountsStore } from '../../../src/store/accounts-sql.js';
import { secretDigest } from '../../../src/store/accounts.js';

const UNIQUE = /UNIQUE|duplicate key/i;

describeEngines('SqlAccountsStore', (open) => {
  it('adds users and finds them by id, name and email; names and emails are unique ignoring case', async () => {
    const store = await SqlAccountsStore.open(await open());
    const ana = await store.addUser({ name: 'ana', email: 'ana@example.com' });
    expect(await store.getUser(ana.id)).toEqual(ana);
    expect(await store.findUserByName('ANA')).toEqual(ana);
    expect(await store.findUserByName('ana')).toEqual(ana);
    expect(await store.findUserByEmail('Ana@Example.com')).toEqual(ana);
    await expect(store.addUser({ name: 'Ana', email: 'other@example.com' })).rejects.toThrow(UNIQUE);
    await expect(store.addUser({ name: 'bo', email: 'ANA@example.com' })).rejects.toThrow(UNIQUE);
    expect(await store.getPasswordHash(ana.id)).toBeUndefined();
    await store.setPasswordHash(ana.id, 'scrypt$abc');
    expect(await store.getPasswordHash(ana.id)).toBe('scrypt$abc');
    const bo = await store.addUser({ name: 'Bo', email: 'bo@example.com', passwordHash: 'scrypt$def' });
    expect(await store.getPasswordHash(bo.id)).toBe('scrypt$def');
    expect((await store.findUserByName('bO'))?.name).toBe('Bo');
    expect(await store.findUserByName('nobody')).toBeUndefined();
    expect(await store.getUser('nobody')).toBeUndefined();
    // NUL (which PostgreSQL text cannot hold) finds nothing rather than failing.
    expect(await store.findUserByName('ana\0')).toBeUndefined();
    expect(await store.findUserByEmail('\0')).toBeUndefined();
    expect(await store.getUser('\0')).toBeUndefined();
    expect(await store.revokeToken('\0')).toBe(false);
  });

  it('opens twice on one database (the migration runs once)', async () => {
    const db = await open();
    const first = await SqlAccountsStore.open(db);
    await first.addUser({ name: 'ana', email: 'ana@example.com' });
    const second = await SqlAccountsStore.open(db);
    expect((await second.findUserByName('ana'))?.email).toBe('ana@example.com');
  });

  it('tokens: shown once, stored as a digest, authenticated with their scope, listed, revoked by id or value', async () => {
    const db = await open();
    const store = await SqlAccountsStore.open(db);
    const ana = await store.addUser({ name: 'ana', email: 'ana@example.com' });
    const push = await store.createToken({ userId: ana.id, scope: 'push', name: 'laptop' });
    const read = await store.createToken({ userId: ana.id, scope: 'read' });
    expect(push.token).toMatch(/^mkt_[A-Za-z0-9_-]{43}$/);
    expect(push.info).toMatchObject({ user_id: ana.id, name: 'laptop', scope: 'push', revoked_at: null });
    expect(read.info.name).toBe('read token');
    // Only the digest is stored.
    expect(await db.value('SELECT COUNT(*) FROM tokens WHERE digest = ?', [push.token])).toBe(0);
    expect(await db.value('SELECT COUNT(*) FROM tokens WHERE digest = ?', [secretDigest(push.token)])).toBe(1);

    expect(await store.authenticateToken(push.token)).toEqual({ user: ana, scope: 'push', tokenId: push.info.id });
    expect((await store.authenticateToken(read.token))?.scope).toBe('read');
    expect(await store.authenticateToken('mkt_nonsense')).toBeUndefined();
    expect(await store.authenticateToken(push.info.id)).toBeUndefined();
    expect((await store.listTokens(ana.id)).map((t) => t.id).sort()).toEqual([push.info.id, read.info.id].sort());

    expect(await store.revokeToken(push.info.id)).toBe(true);
    expect(await store.revokeToken(push.info.id)).toBe(false);
    expect(await store.authenticateToken(push.token)).toBeUndefined();
    expect(await store.revokeToken(read.token)).toBe(true);
    expect(await store.authenticateToken(read.token)).toBeUndefined();
    expect(await store.revokeToken('nothing')).toBe(false);
    const listed = await store.listTokens(ana.id);
    expect(listed.every((t) => typeof t.revoked_at === 'string')).toBe(true);
  });

  it('concurrent revokes of one token: exactly one reports it', async () => {
    const store = await SqlAccountsStore.open(await open());
    const ana = await store.addUser({ name: 'ana', email: 'ana@example.com' });
    const { token, info } = await store.createToken({ userId: ana.id, scope: 'push' });
    const done = await Promise.all(Array.from({ length: 10 }, (_, i) => store.revokeToken(i % 2 ? token : info.id)));
    expect(done.filter(Boolean)).toHaveLength(1);
  });

  it('sessions: stored as a digest, authenticate until they expire, expired ones are swept', async () => {
    const db = await open();
    const store = await SqlAccountsStore.open(db);
    const ana = await store.addUser({ name: 'ana', email: 'ana@example.com' });
    const before = Date.now();
    const s = await store.createSession(ana.id, 60_000);
    const expires = Date.parse(s.expiresAt);
    expect(expires).toBeGreaterThanOrEqual(before + 60_000);
    expect(await db.value('SELECT COUNT(*) FROM sessions WHERE digest = ?', [s.value])).toBe(0);
    expect(await store.authenticateSession(s.value)).toEqual(ana);
    expect(await store.authenticateSession(s.value, expires - 1)).toEqual(ana);
    expect(await store.authenticateSession(s.value, expires)).toBeUndefined();
    expect(await store.authenticateSession('nonsense')).toBeUndefined();
    // The default lifetime is two weeks.
    const long = await store.createSession(ana.id);
    expect(Date.parse(long.expiresAt) - Date.now()).toBeGreaterThan(13 * 24 * 3600 * 1000);

    const short = await store.createSession(ana.id, 1);
    await new Promise((r) => setTimeout(r, 5));
    expect(await store.authenticateSession(short.value)).toBeUndefined();
    await store.createSession(ana.id);
    expect(await db.value('SELECT COUNT(*) FROM sessions WHERE digest = ?', [secretDigest(short.value)])).toBe(0);
    expect(await db.value('SELECT COUNT(*) FROM sessions')).toBe(3);
  });

  it('a transaction rolls back when it throws', async () => {
    const store = await SqlAccountsStore.open(await open());
    await expect(
      store.transaction(async (tx) => {
        await tx.addUser({ name: 'ana', email: 'ana@example.com' });
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    expect(await store.findUserByName('ana')).toBeUndefined();
  });

  it('locked read-decide-write transactions: one add of a free name wins', async () => {
    const store = await SqlAccountsStore.open(await open());
    const added = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        store.transaction(async (tx) => {
          await tx.lock('accounts:users');
          if (await tx.findUserByName('Ana')) return false;
          await new Promise((r) => setTimeout(r, 2));
          await tx.addUser({ name: i % 2 ? 'ana' : 'ANA', email: `ana${i}@example.com` });
          return true;
        }),
      ),
    );
    expect(added.filter(Boolean)).toHaveLength(1);
  });
});
