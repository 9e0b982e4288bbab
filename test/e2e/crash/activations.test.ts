// Crash safety of license activations (issue 11, regression): machines activated concurrently,
// the marketplace SIGKILLed mid-write and restarted on the same data dir: every acknowledged
// activation is there (the machine validates, and the key's count includes it). Likewise every
// lease renewal a heartbeat acknowledged (issue 33; answered by the direct lane, grouped writes).
import { afterEach, describe, expect, it } from 'vitest';
import { LicenseAdmin } from '../../../daemon/services/marketplace/license/admin.js';
import { tempDir } from '../../helpers/tmp.js';
import { send, serve, writeUntilKilled } from './harness.js';
import { marketplaceEnvFor } from '../../helpers/pg.js';
import { openMarketplaceStores } from '../../../src/store/marketplace.js';

const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((c) => c()));

describe('license activations survive SIGKILL', () => {
  it('every machine activated before the kill is still activated after a restart on the same data dir', async () => {
    const dir = tempDir('mkt-crash-license-');
    cleanups.push(() => dir.remove());
    const admin = await LicenseAdmin.open({ dataDir: dir.path, databaseUrl: (await marketplaceEnvFor(dir.path)).MKT_DATABASE_URL });
    await admin.createItem({ id: 'tool', name: 'Tool', licenseTemplate: null, maxActivations: 100_000, verification: true });
    const key = (await admin.issueKeys({ itemId: 'tool', count: 1, expiresAt: null, licensee: null }))[0]!.key;
    await admin.close();

    const first = await serve('marketplace', dir.path);
    cleanups.push(() => first.child.kill('SIGKILL'));
    const run = await writeUntilKilled(first, {
      workers: 8,
      minAcks: 40,
      minMs: 1_000,
      write: async (w, i) => {
        const machine = `runner-${w}-${i}`;
        const r = await send(`${first.url}/api/v1/keys/validate`, 'POST', { key, machine_id: machine, machine_name: machine, activate: true });
        return r.status === 200 && r.body.activated === true ? machine : undefined;
      },
    });
    expect(run.acknowledged.length).toBeGreaterThanOrEqual(40);
    expect(run.cutOff).toBeGreaterThan(0);

    const second = await serve('marketplace', dir.path);
    cleanups.push(() => second.child.kill('SIGKILL'));
    for (const machine of run.acknowledged) {
      const r = await send(`${second.url}/api/v1/keys/validate`, 'POST', { key, machine_id: machine });
      expect(r.body, machine).toMatchObject({ valid: true, code: 'VALID' });
    }
    const status = await send(`${second.url}/api/v1/keys/status`, 'POST', { key });
    expect(status.status).toBe(200);
    const license = status.body.license as { activation_count: number };
    expect(license.activation_count).toBeGreaterThanOrEqual(run.acknowledged.length);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });

  it('every lease renewal a heartbeat acknowledged before the kill is stored after a restart', async () => {
    const dir = tempDir('mkt-crash-lease-');
    cleanups.push(() => dir.remove());
    const databaseUrl = (await marketplaceEnvFor(dir.path)).MKT_DATABASE_URL;
    const admin = await LicenseAdmin.open({ dataDir: dir.path, databaseUrl });
    await admin.createItem({ id: 'fleet', name: 'Fleet', licenseTemplate: null, maxActivations: 100, verification: true, activation: 'floating', leaseSeconds: 3600 });
    const [issued] = await admin.issueKeys({ itemId: 'fleet', count: 1, expiresAt: null, licensee: null });
    await admin.close();
    const { key, id } = issued!;

    const first = await serve('marketplace', dir.path);
    cleanups.push(() => first.child.kill('SIGKILL'));
    const WORKERS = 8;
    for (let w = 0; w < WORKERS; w++) expect((await send(`${first.url}/api/v1/keys/validate`, 'POST', { key, machine_id: `runner-${w}`, activate: true })).body).toMatchObject({ valid: true });
    const run = await writeUntilKilled(first, {
      workers: WORKERS,
      minAcks: 80,
      minMs: 1_000,
      write: async (w) => {
        const r = await send(`${first.url}/api/v1/license/heartbeat`, 'POST', { key, machine_fingerprint: `runner-${w}` });
        return r.status === 200 && r.body.code === 'RENEWED' ? { machine: `runner-${w}`, until: Date.parse(r.body.lease_expires_at as string) } : undefined;
      },
    });
    expect(run.acknowledged.length).toBeGreaterThanOrEqual(80);
    expect(run.cutOff).toBeGreaterThan(0);

    // What the database holds once the process is gone: no later renewal can have moved it.
    const stores = await openMarketplaceStores({ dataDir: dir.path, databaseUrl });
    try {
      const stored = new Map<string, number>();
      for (let w = 0; w < WORKERS; w++) {
        const mine = (await stores.license.transaction((tx) => tx.seats(id, `runner-${w}`))).mine_ms;
        stored.set(`runner-${w}`, Number(mine));
      }
      for (const a of run.acknowledged) expect(stored.get(a.machine)!, a.machine).toBeGreaterThanOrEqual(a.until);
    } finally {
      await stores.close();
    }
    const second = await serve('marketplace', dir.path);
    cleanups.push(() => second.child.kill('SIGKILL'));
    for (let w = 0; w < WORKERS; w++) expect((await send(`${second.url}/api/v1/license/heartbeat`, 'POST', { key, machine_fingerprint: `runner-${w}` })).body).toMatchObject({ success: true, code: 'RENEWED' });
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });
});
