// A blob over the storage the account may use: the server answers 413 and `blob put` exits 1
// with a pointer to `mkt sync plan`; nothing is left half-stored and a blob that fits still goes.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSyncWorld, type Device, type SyncWorld } from './harness.js';

let w: SyncWorld;
let a: Device;

beforeAll(async () => {
  w = await startSyncWorld({ appArgs: ['--free', '1MiB'] });
  a = w.device('a');
  expect((await a.mkt(['login', '--app-key', w.appKey, '--email', w.email], `${w.password}\n`)).code).toBe(0);
  expect((await a.mkt(['key', 'init'], `${w.password}\n`)).code).toBe(0);
});
afterAll(async () => w?.close());

describe('mkt sync blob put over the storage cap', () => {
  it('exits 1 with the server reason and a hint; a blob that fits is stored', async () => {
    writeFileSync(join(a.home, 'big.bin'), randomBytes(2 * 1024 * 1024));
    const r = await a.mkt(['blob', 'put', 'big.bin']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/storage/);
    expect(r.err).toMatch(/hint: .*mkt sync plan/);
    const st = JSON.parse((await a.mkt(['status', '--json'])).out) as { server: { blob_count: number } };
    expect(st.server.blob_count).toBe(0);
    writeFileSync(join(a.home, 'small.bin'), randomBytes(100_000));
    expect((await a.mkt(['blob', 'put', 'small.bin'])).code).toBe(0);
  });
});
