// Crash safety of license activations (issue 11, regression): machines activated concurrently,
// the marketplace SIGKILLed mid-write and restarted on the same data dir: every acknowledged
// activation is there (the machine validates, and the key's count includes it).
import { afterEach, describe, expect, it } from 'vitest';
import { LicenseAdmin } from '../../../daemon/services/marketplace/license/admin.js';
import { tempDir } from '../../helpers/tmp.js';
import { send, serve, writeUntilKilled } from './harness.js';
import { marketplaceEnvFor } from '../../helpers/pg.js';

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
});
