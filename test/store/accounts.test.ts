// The SQLite accounts adapter: users by id, name and email (case-insensitive, unique) and
// password hashes.
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/sqlite.js';
import { SqliteAccountsStore } from '../../src/store/accounts.js';

describe('SqliteAccountsStore', () => {
  it('adds users and finds them by id, name and email; names and emails are unique ignoring case', async () => {
    const db = openDatabase(':memory:');
    const store = new SqliteAccountsStore(db);
    const ana = await store.addUser({ name: 'ana', email: 'ana@example.com' });
    expect(await store.getUser(ana.id)).toEqual(ana);
    expect(await store.findUserByName('ANA')).toEqual(ana);
    expect(await store.findUserByEmail('Ana@Example.com')).toEqual(ana);
    await expect(store.addUser({ name: 'Ana', email: 'other@example.com' })).rejects.toThrow(/UNIQUE/);
    await expect(store.addUser({ name: 'bo', email: 'ANA@example.com' })).rejects.toThrow(/UNIQUE/);
    expect(await store.getPasswordHash(ana.id)).toBeUndefined();
    await store.setPasswordHash(ana.id, 'scrypt$abc');
    expect(await store.getPasswordHash(ana.id)).toBe('scrypt$abc');
    expect(await store.findUserByName('nobody')).toBeUndefined();
    db.close();
  });
});
