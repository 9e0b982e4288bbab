// Crash safety of sync push (issue 11, regression): batches pushed concurrently, the marketplace
// SIGKILLed mid-write and restarted on the same data dir: every acknowledged entry is pulled back,
// each under one seq.
import { afterEach, describe, expect, it } from 'vitest';
import { SyncAdmin } from '../../../daemon/services/marketplace/sync/admin.js';
import { AccountsAdmin } from '../../../daemon/services/marketplace/accounts/admin.js';
import { tempDir } from '../../helpers/tmp.js';
import { send, serve, writeUntilKilled } from './harness.js';
import { marketplaceEnvFor } from '../../helpers/pg.js';

const TS = '2026-03-01T12:00:00.000Z';
const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((c) => c()));

describe('sync push survives SIGKILL', () => {
  it('every entry of a push answered 200 before the kill is pulled after a restart on the same data dir', async () => {
    const dir = tempDir('mkt-crash-sync-');
    cleanups.push(() => dir.remove());
    const sync = await SyncAdmin.open({ dataDir: dir.path, databaseUrl: (await marketplaceEnvFor(dir.path)).MKT_DATABASE_URL });
    const { apiKey } = (await sync.createApp('Notes'))!;
    await sync.close();
    const accounts = await AccountsAdmin.open({ dataDir: dir.path, databaseUrl: (await marketplaceEnvFor(dir.path)).MKT_DATABASE_URL });
    await accounts.addUser({ name: 'ana', email: 'ana@example.com', password: 'pw-ana-long' });
    await accounts.close();

    const first = await serve('marketplace', dir.path);
    cleanups.push(() => first.child.kill('SIGKILL'));
    const signIn = async (url: string): Promise<Record<string, string>> => {
      const r = await send(`${url}/api/v1/sync/auth`, 'POST', { api_key: apiKey, email: 'ana@example.com', password: 'pw-ana-long' });
      expect(r.status).toBe(200);
      return { authorization: `Bearer ${r.body.token as string}` };
    };
    const auth = await signIn(first.url);
    expect((await send(`${first.url}/api/v1/sync/keys`, 'PUT', { encrypted_key: 'ENVELOPE-1', expected_key_version: 0 }, auth)).status).toBe(204);
    const device = (await send(`${first.url}/api/v1/sync/devices`, 'POST', { name: 'laptop' }, auth)).body.id as string;

    const run = await writeUntilKilled(first, {
      workers: 8,
      minAcks: 40,
      minMs: 1_000,
      write: async (w, i) => {
        const rows = [`w${w}-${i}-a`, `w${w}-${i}-b`];
        const entries = rows.map((row_id) => ({ table: 'notes', op: 'insert', row_id, timestamp: TS, data: { sealed: 'c'.repeat(1000) } }));
        const r = await send(`${first.url}/api/v1/sync/push`, 'POST', { device_id: device, batch_id: `w${w}-${i}`, key_id: 1, entries }, auth);
        return r.status === 200 ? rows : undefined;
      },
    });
    expect(run.acknowledged.length).toBeGreaterThanOrEqual(40);
    expect(run.cutOff).toBeGreaterThan(0);

    const second = await serve('marketplace', dir.path);
    cleanups.push(() => second.child.kill('SIGKILL'));
    const again = await signIn(second.url);
    const pulled: { seq: number; row_id: string }[] = [];
    for (let cursor = 0, more = true; more; ) {
      const page = await send(`${second.url}/api/v1/sync/pull`, 'POST', { cursor }, again);
      expect(page.status).toBe(200);
      const entries = page.body.entries as { seq: number; row_id: string }[];
      pulled.push(...entries);
      cursor = page.body.cursor as number;
      more = page.body.has_more as boolean;
    }
    const rows = new Set(pulled.map((e) => e.row_id));
    for (const r of run.acknowledged.flat()) expect(rows.has(r), r).toBe(true);
    // A batch is all or nothing, and no seq is given twice.
    for (const e of pulled) expect(rows.has(e.row_id.replace(/-[ab]$/, e.row_id.endsWith('-a') ? '-b' : '-a')), e.row_id).toBe(true);
    expect(new Set(pulled.map((e) => e.seq)).size).toBe(pulled.length);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });
});
