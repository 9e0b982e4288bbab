// Issue 7 "rotation interrupted at each phase resumes correctly": the rotation engine is stopped
// (a throw from its checkpoint hook, as a kill would stop it) right after the server accepted
// begin, after the device saved the rotation, after a re-sealed batch, and after complete; the
// next `mkt sync key rotate` finishes with every entry readable under the new key and none lost.
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rotateKey, type RotateOptions } from '../../../src/sync/rotation.js';
import { startSyncWorld, type Device, type SyncWorld } from './harness.js';

let w: SyncWorld;
let a: Device;
let b: Device;
const FAST = { logN: 10, r: 8, p: 1 };
const N = 23;
const BLOB = randomBytes(3 * 1024 * 1024 + 7);
let blobHash = '';

beforeAll(async () => {
  w = await startSyncWorld();
  a = w.device('a');
  b = w.device('b');
  expect((await a.mkt(['login', '--app-key', w.appKey, '--email', w.email, '--device', 'a'], `${w.password}\n`)).code).toBe(0);
  expect((await a.mkt(['key', 'init'], `${w.password}\n`)).code).toBe(0);
  const input = Array.from({ length: N }, (_, i) => JSON.stringify({ table: 'notes', op: 'upsert', row_id: `n${i}`, data: { i, text: `note ${i}` } })).join('\n');
  expect((await a.mkt(['push'], input)).code).toBe(0);
  writeFileSync(join(a.home, 'before.bin'), BLOB);
  blobHash = (await a.mkt(['blob', 'put', 'before.bin'])).out.trim();
  expect((await b.mkt(['login', '--app-key', w.appKey, '--email', w.email, '--device', 'b'], `${w.password}\n`)).code).toBe(0);
});
afterAll(async () => w?.close());

class Killed extends Error {}

/** Runs the engine on device A and "kills" it at the n-th time it reaches `at`. */
async function rotateUntil(at: NonNullable<Parameters<NonNullable<RotateOptions['checkpoint']>>[0]>, nth = 1): Promise<void> {
  const s = await a.session();
  let seen = 0;
  const opts: RotateOptions = {
    password: w.password,
    pageSize: 5,
    scrypt: FAST,
    checkpoint: (step) => {
      if (step === at && ++seen === nth) throw new Killed(step);
    },
  };
  await expect(rotateKey(s, opts)).rejects.toBeInstanceOf(Killed);
}

/** Every entry, pulled from scratch on `d`, with its decrypted data. */
async function everything(d: Device): Promise<{ seq: number; row_id: string; data: unknown }[]> {
  const r = await d.mkt(['pull', '--since', '0']);
  expect(r.code, r.err).toBe(0);
  return r.out
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { seq: number; row_id: string; data: unknown });
}

async function keyId(d: Device): Promise<{ key_id: number; rotation_in_progress: boolean; entry_count: number }> {
  const st = await d.mkt(['status', '--json']);
  return (JSON.parse(st.out) as { server: { key_id: number; rotation_in_progress: boolean; entry_count: number } }).server;
}

async function resumeWithCli(expectResumed: boolean): Promise<{ new_key_id: number; resealed: number }> {
  const r = await a.mkt(['key', 'rotate', '--json'], `${w.password}\n`);
  expect(r.code, r.err).toBe(0);
  const rep = JSON.parse(r.out) as { new_key_id: number; resealed: number; resumed: boolean; already_complete: boolean };
  expect(rep.resumed).toBe(expectResumed);
  return rep;
}

async function allReadable(total: number, key: number): Promise<void> {
  const st = await keyId(a);
  expect(st).toMatchObject({ key_id: key, rotation_in_progress: false, entry_count: total });
  const seen = await everything(a);
  expect(seen.map((e) => e.seq)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
  expect(seen.slice(0, N).map((e) => e.data)).toEqual(Array.from({ length: N }, (_, i) => ({ i, text: `note ${i}` })));
}

describe('mkt sync key rotate: resumes after being killed at any phase', () => {
  it('killed after the server accepted begin (device saved nothing): the run resumes the same rotation', async () => {
    await rotateUntil('begun-remote');
    expect(await keyId(a)).toMatchObject({ key_id: 1, rotation_in_progress: true });
    const rep = await resumeWithCli(true);
    expect(rep).toMatchObject({ new_key_id: 2, resealed: N });
    await allReadable(N, 2);
  });

  it('killed after begin was saved locally; entries pushed meanwhile use the pending key and need no re-seal', async () => {
    await rotateUntil('begun');
    // A holds the pending key now: its push is sealed with it.
    const push = await a.mkt(['push', '--json'], '{"table":"notes","op":"upsert","row_id":"during","data":"pushed mid-rotation"}\n');
    expect(push.code, push.err).toBe(0);
    expect(JSON.parse(push.out)).toMatchObject({ key_id: 3 });
    // B does not hold it: its push fails loudly until it unlocks.
    const bPush = await b.mkt(['push'], '{"table":"notes","op":"upsert","row_id":"b1","data":1}\n');
    expect(bPush.code).toBe(1);
    expect(bPush.err).toMatch(/does not hold sync key 3/);
    expect((await b.mkt(['key', 'unlock'], `${w.password}\n`)).code).toBe(0);
    expect((await b.mkt(['push'], '{"table":"notes","op":"upsert","row_id":"b1","data":1}\n')).code).toBe(0);
    // Another device cannot take over a running rotation.
    const other = await b.mkt(['key', 'rotate'], `${w.password}\n`);
    expect(other.code).toBe(1);
    expect(other.err).toMatch(/another device is rotating/);
    const rep = await resumeWithCli(true);
    expect(rep).toMatchObject({ new_key_id: 3, resealed: N });
    await allReadable(N + 2, 3);
  });

  it('killed after the second re-sealed batch: the rest is re-sealed, nothing twice, nothing lost', async () => {
    await rotateUntil('batch', 2);
    const st = await a.mkt(['status', '--json']);
    expect(JSON.parse(st.out)).toMatchObject({ server: { rotation_in_progress: true }, local: { rotation_in_progress: expect.any(String) } });
    const rep = await resumeWithCli(true);
    expect(rep).toMatchObject({ new_key_id: 4, resealed: N + 2 - 10 });
    await allReadable(N + 2, 4);
  });

  it('killed after complete, before the device forgot its rotation: the next run only tidies up', async () => {
    await rotateUntil('completed');
    expect(await keyId(a)).toMatchObject({ key_id: 5, rotation_in_progress: false });
    const r = await a.mkt(['key', 'rotate', '--json'], `${w.password}\n`);
    expect(JSON.parse(r.out)).toMatchObject({ already_complete: true, new_key_id: 5, resealed: 0 });
    await allReadable(N + 2, 5);
    // A fresh rotation after that is a normal one.
    const again = await resumeWithCli(false);
    expect(again.new_key_id).toBe(6);
  });

  it('the other device learns the new key with `key unlock`; blobs sealed before a rotation stay readable', async () => {
    const stale = await b.mkt(['pull', '--since', '0']);
    expect(stale.code).toBe(1);
    expect(stale.err).toMatch(/does not hold sync key 6.*\n.*key unlock/s);
    expect((await b.mkt(['key', 'unlock'], `${w.password}\n`)).code).toBe(0);
    expect((await everything(b)).length).toBe(N + 2);
    // Blobs are not re-encrypted: the keyring keeps every older key for them.
    const get = await b.mkt(['blob', 'get', blobHash, '-o', 'after.bin']);
    expect(get.code, get.err).toBe(0);
    expect(readFileSync(join(b.home, 'after.bin')).equals(BLOB)).toBe(true);
  });
});
