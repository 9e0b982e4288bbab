// LicenseStore conformance on both engines: items, keys (hash only, issued in batches, found with
// their item's switch and one machine's activation), revocation, activations and their count, the
// signing-key rows and version; and the activation rule of the license domain on top of it: 40
// concurrent activations of a max-3 key give exactly 3, of one machine exactly 1.
import { expect, it } from 'vitest';
import { SqlLicenseStore } from '../../../src/store/license-sql.js';
import type { LicenseItem, NewLicenseKey } from '../../../src/store/license.js';
import { Licenses } from '../../../daemon/services/marketplace/license/licenses.js';
import type { SigningKeyring } from '../../../src/crypto/signing.js';
import { ManualClock } from '../../../src/util/clock.js';
import { describeEngines } from '../../helpers/engines.js';

const item: LicenseItem = {
  id: 'font-pro',
  name: 'Font Pro',
  license_template: 'T {{licensee}}',
  max_activations: 3,
  verification_enabled: true,
  created_at: '2026-03-01T00:00:00.000Z',
  activation_policy: 'node-locked',
  lease_seconds: null,
  max_deactivations: null,
  deactivation_window_seconds: null,
};

function key(i: number, over: Partial<NewLicenseKey> = {}): NewLicenseKey {
  return { id: `lk_${String(i).padStart(4, '0')}`, item_id: 'font-pro', key_prefix: `P${i % 7}`, key_hash: `h${i}`, licensee: null, max_activations: 3, expires_at: null, created_at: '2026-03-01T00:00:00.000Z', ...over };
}

describeEngines('LicenseStore', (open) => {
  it('items: created once, read back with their settings', async () => {
    const s = await SqlLicenseStore.open(await open());
    expect(await s.createItem(item)).toBe(true);
    expect(await s.createItem({ ...item, name: 'Other' })).toBe(false);
    expect(await s.getItem('font-pro')).toEqual(item);
    await s.createItem({ ...item, id: 'plain', license_template: null, max_activations: null, verification_enabled: false });
    expect(await s.getItem('plain')).toMatchObject({ license_template: null, max_activations: null, verification_enabled: false });
    expect(await s.getItem('missing')).toBeUndefined();
  });

  it('keys: 250 issued in one transaction, found by prefix, listed in order without their hash, revoked once', async () => {
    const s = await SqlLicenseStore.open(await open());
    await s.createItem(item);
    await s.transaction((tx) => tx.addKeys(Array.from({ length: 250 }, (_, i) => key(i, { licensee: i === 3 ? 'Ada' : null }))));
    const byPrefix = await s.keysByPrefix('P3');
    expect(byPrefix.map((k) => k.key_hash).sort()).toContain('h3');
    expect(byPrefix.find((k) => k.id === 'lk_0003')).toMatchObject({ licensee: 'Ada', activation_count: 0, revoked_at: null, max_activations: 3 });
    const list = await s.listKeys('font-pro');
    expect(list).toHaveLength(250);
    expect(list[0]!.id).toBe('lk_0000');
    expect(list[0]).not.toHaveProperty('key_hash');
    expect(await s.revokeKey('lk_0003', '2026-03-02T00:00:00.000Z')).toBe(true);
    expect(await s.revokeKey('lk_0003', '2026-03-03T00:00:00.000Z')).toBe(true);
    expect((await s.keysByPrefix('P3')).find((k) => k.id === 'lk_0003')!.revoked_at).toBe('2026-03-02T00:00:00.000Z');
    expect(await s.revokeKey('lk_none', '2026-03-02T00:00:00.000Z')).toBe(false);
    // A batch that fails is not half stored.
    await expect(s.transaction((tx) => tx.addKeys([key(900), key(901, { key_hash: 'h0' })]))).rejects.toThrow();
    expect(await s.listKeys('font-pro')).toHaveLength(250);
  });

  it('activations: added once and counted, found by the lookup, removed and uncounted; the lock reads the state', async () => {
    const s = await SqlLicenseStore.open(await open());
    await s.createItem(item);
    await s.createItem({ ...item, id: 'offline-off', verification_enabled: false });
    await s.addKeys([key(1), key(8, { item_id: 'offline-off', key_prefix: 'PX' })]);
    const at = '2026-03-01T00:00:00.000Z';
    await s.transaction(async (tx) => {
      expect(await tx.lockKey('lk_0001')).toEqual({ max_activations: 3, activation_count: 0 });
      expect(await tx.addActivation('lk_0001', 'm1', 'laptop', at)).toBe(true);
      expect(await tx.addActivation('lk_0001', 'm1', 'laptop', at)).toBe(false);
      expect(await tx.lockKey('missing')).toBeUndefined();
    });
    expect(await s.isActivated('lk_0001', 'm1')).toBe(true);
    expect(await s.isActivated('lk_0001', 'm2')).toBe(false);
    const found = (machine: string) => s.findKeys('P1', machine);
    expect(await found('m1')).toEqual([expect.objectContaining({ id: 'lk_0001', key_hash: 'h1', activation_count: 1, max_activations: 3, verification_enabled: true, machine_activated: true })]);
    expect((await found('m2'))[0]!.machine_activated).toBe(false);
    expect(await s.keysByPrefix('P1')).toEqual([expect.objectContaining({ id: 'lk_0001', activation_count: 1 })]);
    expect((await s.findKeys('PX', 'm1'))[0]).toMatchObject({ id: 'lk_0008', verification_enabled: false, machine_activated: false });
    await s.transaction(async (tx) => {
      await tx.lockKey('lk_0001');
      expect(await tx.removeActivation('lk_0001', 'm2')).toBe(false);
      expect(await tx.removeActivation('lk_0001', 'm1')).toBe(true);
    });
    expect(await found('m1')).toEqual([expect.objectContaining({ activation_count: 0, machine_activated: false })]);
  });

  it('the activation rule: 40 concurrent activations of a max-3 key give exactly 3; a known machine is not counted twice; deactivation frees a slot', async () => {
    const s = await SqlLicenseStore.open(await open());
    await s.createItem(item);
    await s.addKeys([key(1)]);
    const licenses = new Licenses({ store: s, clock: new ManualClock(Date.parse('2026-03-01T00:00:00Z')), hashSecret: Buffer.alloc(32), keyring: {} as SigningKeyring, issuer: 't' });
    const k1 = { id: 'lk_0001', item_id: 'font-pro', max_activations: 3 };
    const rs = await Promise.all(Array.from({ length: 40 }, (_, i) => licenses.activate(k1, `m${i}`, null)));
    expect(rs.filter((r) => r.kind === 'created')).toHaveLength(3);
    expect(rs.filter((r) => r.kind === 'full')).toHaveLength(37);
    const state = async () => {
      const [k] = await s.keysByPrefix('P1');
      return { max_activations: k!.max_activations, activation_count: k!.activation_count };
    };
    expect(await state()).toEqual({ max_activations: 3, activation_count: 3 });
    const winner = `m${rs.findIndex((r) => r.kind === 'created')}`;
    expect(await licenses.activate(k1, winner, null)).toEqual({ kind: 'existing', count: 3 });
    await s.transaction(async (tx) => {
      await tx.lockKey('lk_0001');
      expect(await tx.removeActivation('lk_0001', winner)).toBe(true);
    });
    expect(await licenses.activate(k1, 'late', null)).toEqual({ kind: 'created', count: 3 });
    // One machine activating many times at once takes one slot; the others find it taken by itself.
    await s.addKeys([key(2)]);
    const k2 = { id: 'lk_0002', item_id: 'font-pro', max_activations: 3 };
    const same = await Promise.all(Array.from({ length: 20 }, () => licenses.activate(k2, 'twin', null)));
    expect(same.filter((r) => r.kind === 'created')).toHaveLength(1);
    expect(same.filter((r) => r.kind === 'existing')).toHaveLength(19);
    expect((await s.keysByPrefix('P2'))[0]!.activation_count).toBe(1);
  });

  it('a key without a maximum: concurrent activations and releases keep the count in step without the lock; a limited key is refused that way', async () => {
    const s = await SqlLicenseStore.open(await open());
    await s.createItem(item);
    await s.addKeys([key(3, { max_activations: null }), key(4)]);
    const licenses = new Licenses({ store: s, clock: new ManualClock(Date.parse('2026-03-01T00:00:00Z')), hashSecret: Buffer.alloc(32), keyring: {} as SigningKeyring, issuer: 't' });
    const k3 = { id: 'lk_0003', item_id: 'font-pro', max_activations: null };
    const rs = await Promise.all(Array.from({ length: 30 }, (_, i) => licenses.activate(k3, `m${i % 20}`, null)));
    expect(rs.filter((r) => r.kind === 'created').map((r) => r.count).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(rs.filter((r) => r.kind === 'existing')).toHaveLength(10);
    // Releases (under the key lock) racing new activations (without it).
    const deactivate = (m: string) => s.transaction(async (tx) => (await tx.lockKey('lk_0003'), tx.removeActivation('lk_0003', m)));
    await Promise.all([...Array.from({ length: 10 }, (_, i) => deactivate(`m${i}`)), ...Array.from({ length: 10 }, (_, i) => licenses.activate(k3, `n${i}`, null))]);
    const [k] = await s.keysByPrefix('P3');
    expect(k!.activation_count).toBe(20);
    expect(await s.addUnlimitedActivation('lk_0003', 'n0', null, '2026-03-01T00:00:00.000Z')).toBeUndefined();
    expect(await s.addUnlimitedActivation('lk_0004', 'x', null, '2026-03-01T00:00:00.000Z')).toBeUndefined();
    expect(await s.addUnlimitedActivation('lk_none', 'x', null, '2026-03-01T00:00:00.000Z')).toBeUndefined();
    expect(await s.isActivated('lk_0004', 'x')).toBe(false);
    expect((await s.keysByPrefix('P4'))[0]!.activation_count).toBe(0);
  });

  it('signing-key rows: ordered by position, retired without their private half, deleted; the version moves', async () => {
    const s = await SqlLicenseStore.open(await open());
    expect(await s.signingKeys()).toEqual([]);
    expect(await s.signingKeysVersion()).toBe(0);
    const row = (kid: string, position: number) => ({ kid, position, created_at: '2026-03-01T00:00:00.000Z', retired_at: null, private_key: 'secret', public_jwk: `{"kid":"${kid}"}` });
    await s.transaction(async (tx) => {
      await tx.lockSigningKeys();
      await tx.addSigningKey(row('b', 2));
      await tx.addSigningKey(row('a', 1));
      await tx.setSigningKeysVersion(1);
    });
    expect((await s.signingKeys()).map((k) => k.kid)).toEqual(['a', 'b']);
    await s.retireSigningKey('a', '2026-03-02T00:00:00.000Z');
    expect((await s.signingKeys())[0]).toEqual({ ...row('a', 1), retired_at: '2026-03-02T00:00:00.000Z', private_key: null });
    await s.deleteSigningKey('a');
    expect((await s.signingKeys()).map((k) => k.kid)).toEqual(['b']);
    await s.setSigningKeysVersion(1_767_225_600_000);
    expect(await s.signingKeysVersion()).toBe(1_767_225_600_000);
  });

  it('announcements reach listeners on the database', async () => {
    const s = await SqlLicenseStore.open(await open());
    let heard = 0;
    const off = await s.onSigningKeysAnnounced(() => heard++);
    await s.announceSigningKeys(7);
    await expect.poll(() => heard, { timeout: 5_000 }).toBe(1);
    off();
  });
});
