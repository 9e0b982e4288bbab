// Small license writes grouped per turn (daemon/services/marketplace/license/write-groups.ts): on
// SQLite, heartbeats arriving together share one transaction (lookup, renewal, event) and each
// gets its own renewed lease; on PostgreSQL each keeps its own transaction (a pool runs them side
// by side); verifies from new machines share theirs the same way; a group that fails is retried one by one, so only the write that fails is refused.
import { afterEach, expect, it } from 'vitest';
import { SqlLicenseStore } from '../../../../src/store/license-sql.js';
import { SigningKeyring } from '../../../../src/crypto/signing.js';
import { loadKeyHashSecret } from '../../../../src/crypto/license-key.js';
import { Licenses } from '../../../../daemon/services/marketplace/license/licenses.js';
import { LicenseAdmin } from '../../../../daemon/services/marketplace/license/admin.js';
import { WriteGroups } from '../../../../daemon/services/marketplace/license/write-groups.js';
import { systemClock } from '../../../../src/util/clock.js';
import { describeEngines } from '../../../helpers/engines.js';
import { tempDir } from '../../../helpers/tmp.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describeEngines('lease renewals', (open, engine) => {
  async function seated(machines: number): Promise<{ dir: string; store: SqlLicenseStore; licenses: Licenses; key: string; keyId: string; transactions: () => number }> {
    const dir = tempDir('mkt-renewals-');
    cleanups.push(() => dir.remove());
    const db = await open();
    const store = await SqlLicenseStore.open(db);
    const keyring = await SigningKeyring.open({ store, now: () => Date.now(), keepMs: 7 * 86_400_000, pollMs: 3_600_000 });
    cleanups.push(() => keyring.close());
    const licenses = new Licenses({ store, clock: systemClock, hashSecret: loadKeyHashSecret(dir.path, {}), keyring, issuer: 'mkt-marketplace' });
    const admin = new LicenseAdmin({ store, dataDir: dir.path, env: {} });
    await admin.createItem({ id: 'ci', name: 'ci', licenseTemplate: null, maxActivations: machines, verification: true, activation: 'floating', leaseSeconds: 60 });
    const [k] = await admin.issueKeys({ itemId: 'ci', count: 1, expiresAt: null, licensee: null });
    for (let i = 0; i < machines; i++) expect((await licenses.verify(k!.key, `m-${i}`)).valid).toBe(true);
    let n = 0;
    const tx = store.transaction.bind(store);
    store.transaction = ((fn) => {
      n++;
      return tx(fn);
    }) as typeof store.transaction;
    return { dir: dir.path, store, licenses, key: k!.key, keyId: k!.id, transactions: () => n };
  }

  it(`20 heartbeats at once: each renewed; ${engine === 'sqlite' ? 'one transaction' : 'a transaction each'}`, async () => {
    const s = await seated(20);
    const before = Date.now();
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => s.licenses.heartbeat(s.key, `m-${i}`)));
    for (const a of answers) {
      expect(a).toMatchObject({ success: true, code: 'RENEWED' });
      expect(Date.parse(a.lease_expires_at!)).toBeGreaterThanOrEqual(before + 59_000);
    }
    expect(s.transactions()).toBe(engine === 'sqlite' ? 1 : 20);
    // A machine of no seat in the same turn is refused, and does not spoil the others' group.
    const mixed = await Promise.all([s.licenses.heartbeat(s.key, 'm-0'), s.licenses.heartbeat(s.key, 'stranger'), s.licenses.heartbeat(s.key, 'm-1')]);
    expect(mixed.map((a) => a.code)).toEqual(['RENEWED', 'MACHINE_NOT_ACTIVATED', 'RENEWED']);
  });

  it(`20 verifies from new machines at once, node-locked: each activated, the maximum held; ${engine === 'sqlite' ? 'one transaction' : 'a transaction each'}`, async () => {
    const s = await seated(0);
    const admin = new LicenseAdmin({ store: s.store, dataDir: s.dir, env: {} });
    for (const max of [20, 15, null]) {
      await admin.createItem({ id: `locked-${max}`, name: 'locked', licenseTemplate: null, maxActivations: max, verification: true });
      const [k] = await admin.issueKeys({ itemId: `locked-${max}`, count: 1, expiresAt: null, licensee: null });
      const before = s.transactions();
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => s.licenses.verify(k!.key, `new-${i}`)));
      expect(answers.filter((a) => a.valid)).toHaveLength(max ?? 20);
      expect(answers.filter((a) => !a.valid).map((a) => a.code)).toEqual(Array(20 - (max ?? 20)).fill('TOO_MANY_ACTIVATIONS'));
      expect(s.transactions() - before).toBe(engine === 'sqlite' ? 1 : 20);
      expect((await admin.listKeys(`locked-${max}`))![0]!.activation_count).toBe(max ?? 20);
    }
  });

  it('a group that fails is retried one by one: only the failing write is refused, the others commit', async () => {
    const s = await seated(3);
    const groups = new WriteGroups(s.store);
    const renew = (machine: string) => async (tx: Parameters<Parameters<WriteGroups['run']>[0]>[0]) => {
      const lease = await tx.renewLease(s.keyId, machine, 120);
      if (machine === 'm-1') throw new Error('this one fails');
      return lease;
    };
    const results = await Promise.allSettled(['m-0', 'm-1', 'm-2'].map((m) => groups.run(renew(m))));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((results[1] as PromiseRejectedResult).reason)).toContain('this one fails');
    // m-0 and m-2 hold 120 s leases now; m-1's renewal rolled back with its failure (60 s from its verify).
    const lease = async (m: string) => Date.parse((await s.licenses.validate({ key: s.key, machine_id: m })).lease_expires_at!) - Date.now();
    expect(await lease('m-0')).toBeGreaterThan(100_000);
    expect(await lease('m-2')).toBeGreaterThan(100_000);
    expect(await lease('m-1')).toBeLessThan(61_000);
  });
});
