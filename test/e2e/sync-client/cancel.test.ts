// Spec "Key rotation" states: a rotation left over 24 hours without activity can be cancelled
// (`mkt sync key cancel-rotation`, DELETE /keys/rotate), not before (404 -> exit 1). Entries
// pushed under the abandoned key stay readable through its retired envelope (`key unlock`), and
// the next rotation starts afresh and re-seals them too. The server runs on a manual clock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/util/clock.js';
import { rotateKey } from '../../../src/sync/rotation.js';
import { startSyncWorld, type Device, type SyncWorld } from './harness.js';

const clock = new ManualClock(Date.now());
let w: SyncWorld;
let a: Device;
let b: Device;

beforeAll(async () => {
  w = await startSyncWorld({ clock });
  a = w.device('a');
  b = w.device('b');
  expect((await a.mkt(['login', '--app-key', w.appKey, '--email', w.email, '--device', 'a'], `${w.password}\n`)).code).toBe(0);
  expect((await a.mkt(['key', 'init'], `${w.password}\n`)).code).toBe(0);
  expect((await a.mkt(['push'], '{"table":"notes","op":"upsert","row_id":"before","data":"sealed with key 1"}\n')).code).toBe(0);
});
afterAll(async () => w?.close());

describe('mkt sync key cancel-rotation', () => {
  it('a stale rotation is cancelled after 24 idle hours; its entries stay readable; a new rotation works', async () => {
    // A rotation that begins, then is abandoned (killed) after an entry was pushed with its key.
    await expect(
      rotateKey(await a.session(), {
        password: w.password,
        scrypt: { logN: 10, r: 8, p: 1 },
        checkpoint: (step) => {
          if (step === 'begun') throw new Error('killed');
        },
      }),
    ).rejects.toThrow('killed');
    const during = await a.mkt(['push', '--json'], '{"table":"notes","op":"upsert","row_id":"during","data":"sealed with key 2"}\n');
    expect(JSON.parse(during.out)).toMatchObject({ key_id: 2 });

    const early = await a.mkt(['key', 'cancel-rotation']);
    expect(early.code).toBe(1);
    expect(early.err).toMatch(/no stale rotation/);

    clock.advance(25 * 3600 * 1000);
    // The token has expired meanwhile: sign in again, then cancel.
    expect((await a.mkt(['status'])).code).toBe(4);
    expect((await a.mkt(['login', '--app-key', w.appKey, '--email', w.email, '--device', 'a'], `${w.password}\n`)).code).toBe(0);
    const cancel = await a.mkt(['key', 'cancel-rotation']);
    expect(cancel.code, cancel.err).toBe(0);
    expect((JSON.parse((await a.mkt(['status', '--json'])).out) as { server: { rotation_in_progress: boolean; key_id: number } }).server).toMatchObject({ rotation_in_progress: false, key_id: 1 });

    // A device that never saw key 2 gets it from the retired envelope.
    expect((await b.mkt(['login', '--app-key', w.appKey, '--email', w.email, '--device', 'b'], `${w.password}\n`)).code).toBe(0);
    const pulled = await b.mkt(['pull']);
    expect(pulled.code, pulled.err).toBe(0);
    expect(pulled.out.trim().split('\n').map((l) => (JSON.parse(l) as { data: string }).data)).toEqual(['sealed with key 1', 'sealed with key 2']);

    // The next rotation is a new one (key id 3) and re-seals both entries.
    const rot = await a.mkt(['key', 'rotate', '--json'], `${w.password}\n`);
    expect(rot.code, rot.err).toBe(0);
    expect(JSON.parse(rot.out)).toMatchObject({ new_key_id: 3, resumed: false, resealed: 2 });
    expect((await b.mkt(['key', 'unlock'], `${w.password}\n`)).code).toBe(0);
    expect((await b.mkt(['pull', '--since', '0'])).out.trim().split('\n')).toHaveLength(2);
  });
});
