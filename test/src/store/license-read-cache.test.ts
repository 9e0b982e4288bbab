// The license key lookups kept while the database is unchanged (src/store/read-cache.ts, used by
// SqlLicenseStore): a server's lookups see at once what another process sharing the SQLite file
// committed (an admin's revoke, suspension, entitlement change; another instance's activation)
// and what it wrote itself; a floating key, whose seats run out with the clock, is read each time;
// on PostgreSQL nothing is kept (no mark is cheaper than the read).
import { afterEach, expect, it } from 'vitest';
import { openMarketplaceStores, type MarketplaceStores } from '../../../src/store/marketplace.js';
import { SigningKeyring } from '../../../src/crypto/signing.js';
import { loadKeyHashSecret, parseLicenseKey } from '../../../src/crypto/license-key.js';
import { Licenses } from '../../../daemon/services/marketplace/license/licenses.js';
import { LicenseAdmin } from '../../../daemon/services/marketplace/license/admin.js';
import { systemClock } from '../../../src/util/clock.js';
import { tempDir } from '../../helpers/tmp.js';
import { freshDatabaseUrl } from '../../helpers/pg.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A server's license domain on its own connection, and an admin on another (as `mkt license` in another process). */
async function serverAndAdmin(databaseUrl?: string): Promise<{ dir: string; stores: MarketplaceStores; licenses: Licenses; admin: LicenseAdmin }> {
  const dir = tempDir('mkt-read-cache-');
  cleanups.push(() => dir.remove());
  const stores = await openMarketplaceStores({ dataDir: dir.path, databaseUrl });
  cleanups.push(() => stores.close());
  const keyring = await SigningKeyring.open({ store: stores.license, now: () => Date.now(), keepMs: 7 * 86_400_000, pollMs: 3_600_000 });
  cleanups.push(() => keyring.close());
  const licenses = new Licenses({ store: stores.license, clock: systemClock, hashSecret: loadKeyHashSecret(dir.path, {}), keyring, issuer: 'mkt-marketplace' });
  const admin = await LicenseAdmin.open({ dataDir: dir.path, databaseUrl });
  cleanups.push(() => admin.close());
  return { dir: dir.path, stores, licenses, admin };
}

it('SQLite: another connection\'s revoke, suspension and entitlement change are seen by the next lookup', async () => {
  const { stores, licenses, admin } = await serverAndAdmin();
  await admin.createItem({ id: 'app', name: 'App', licenseTemplate: null, maxActivations: 2, verification: true });
  const [k] = await admin.issueKeys({ itemId: 'app', count: 1, expiresAt: null, licensee: null });
  expect((await licenses.status(k!.key)).code).toBe('VALID');
  // Kept: the same lookup again gives the very rows it read (nothing changed in between).
  const prefix = parseLicenseKey(k!.key)!.prefix;
  const rows = await stores.license.keysByPrefix(prefix);
  expect(await stores.license.keysByPrefix(prefix)).toBe(rows);
  expect(Object.isFrozen(rows[0])).toBe(true);

  await admin.changeEntitlements(k!.key, { add: ['pro'] });
  expect((await licenses.status(k!.key)).license?.entitlements).toEqual(['pro']);
  await admin.suspend(k!.key);
  expect((await licenses.status(k!.key)).code).toBe('SUSPENDED');
  await admin.reinstate(k!.key);
  expect((await licenses.verify(k!.key, 'ci-1')).valid).toBe(true);
  await admin.revoke(k!.key);
  expect((await licenses.status(k!.key)).code).toBe('REVOKED');
  expect((await licenses.verify(k!.key, 'ci-1')).code).toBe('REVOKED');
});

it('SQLite: its own writes and another instance\'s activations are seen by the next lookup', async () => {
  const { dir, licenses, admin } = await serverAndAdmin();
  await admin.createItem({ id: 'app', name: 'App', licenseTemplate: null, maxActivations: 1, verification: true });
  const [k] = await admin.issueKeys({ itemId: 'app', count: 1, expiresAt: null, licensee: null });
  expect((await licenses.verify(k!.key, 'm-1')).valid).toBe(true);
  expect((await licenses.validate({ key: k!.key, machine_id: 'm-1' })).valid).toBe(true);
  // This server frees the slot (its own write): the lookup kept for m-1 must not answer again.
  expect((await licenses.deactivate(k!.key, 'm-1')).code).toBe('DEACTIVATED');
  expect((await licenses.validate({ key: k!.key, machine_id: 'm-1' })).code).toBe('MACHINE_NOT_ACTIVATED');
  // Another instance on the same file (its own connection) activates m-2, which this one had looked up unactivated.
  expect((await licenses.validate({ key: k!.key, machine_id: 'm-2' })).code).toBe('MACHINE_NOT_ACTIVATED');
  const other = new Licenses({ store: admin.store, clock: systemClock, hashSecret: loadKeyHashSecret(dir, {}), keyring: await keyringOf(admin), issuer: 'mkt-marketplace' });
  expect((await other.verify(k!.key, 'm-2')).valid).toBe(true);
  expect((await licenses.validate({ key: k!.key, machine_id: 'm-2' })).valid).toBe(true);
});

it('SQLite: a floating key is read at each lookup (its leases run out with the clock)', async () => {
  const { stores, admin } = await serverAndAdmin();
  await admin.createItem({ id: 'seats', name: 'Seats', licenseTemplate: null, maxActivations: 2, verification: true, activation: 'floating', leaseSeconds: 60 });
  const [k] = await admin.issueKeys({ itemId: 'seats', count: 1, expiresAt: null, licensee: null });
  const prefix = parseLicenseKey(k!.key)!.prefix;
  const first = await stores.license.findKeys(prefix, 'm-1');
  expect(first).toHaveLength(1);
  expect(await stores.license.findKeys(prefix, 'm-1')).not.toBe(first);
});

it('PostgreSQL: nothing is kept; another instance\'s revoke is seen', async () => {
  const { stores, licenses, admin } = await serverAndAdmin(await freshDatabaseUrl());
  await admin.createItem({ id: 'app', name: 'App', licenseTemplate: null, maxActivations: 2, verification: true });
  const [k] = await admin.issueKeys({ itemId: 'app', count: 1, expiresAt: null, licensee: null });
  const prefix = parseLicenseKey(k!.key)!.prefix;
  expect(await stores.license.keysByPrefix(prefix)).not.toBe(await stores.license.keysByPrefix(prefix));
  expect((await licenses.status(k!.key)).code).toBe('VALID');
  await admin.revoke(k!.key);
  expect((await licenses.status(k!.key)).code).toBe('REVOKED');
});

async function keyringOf(admin: LicenseAdmin): Promise<SigningKeyring> {
  const ring = await SigningKeyring.open({ store: admin.store, now: () => Date.now(), keepMs: 7 * 86_400_000, pollMs: 3_600_000 });
  cleanups.push(() => ring.close());
  return ring;
}
