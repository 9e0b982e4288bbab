// Issue 7 "resumable local session state": a multipart `blob put` stopped after some parts
// (a throw from its progress callback, as a kill would stop it) leaves its session file; the
// next `mkt sync blob put` of the same file sends only the missing parts — sealed with the key
// the stored parts used, even after a rotation — and a session the server forgot starts over.
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putBlob } from '../../../src/sync/blobs.js';
import { rotateKey } from '../../../src/sync/rotation.js';
import { startSyncWorld, twoSignedInDevices, type Device, type SyncWorld } from './harness.js';

const MIB = 1024 * 1024;
let w: SyncWorld;
let a: Device;
let b: Device;

beforeAll(async () => {
  w = await startSyncWorld();
  ({ a, b } = await twoSignedInDevices(w));
});
afterAll(async () => w?.close());

class Killed extends Error {}

/** Starts `blob put FILE` on device A and stops it once `parts` parts are stored. */
async function putUntil(file: string, parts: number): Promise<void> {
  const s = await a.session();
  let stored = 0;
  await expect(
    putBlob(s, join(a.home, file), {
      inFlight: 1,
      onProgress: (p) => {
        if (p.phase === 'upload' && p.done > 0 && ++stored === parts) throw new Killed();
      },
    }),
  ).rejects.toBeInstanceOf(Killed);
}

async function roundTrip(file: string, plain: Buffer, resumedParts: number): Promise<string> {
  const put = await a.mkt(['blob', 'put', file, '--json']);
  expect(put.code, put.err).toBe(0);
  const r = JSON.parse(put.out) as { hash: string; mode: string; resumed_parts: number };
  expect(r).toMatchObject({ hash: createHash('sha256').update(plain).digest('hex'), mode: 'multipart', resumed_parts: resumedParts });
  const get = await b.mkt(['blob', 'get', r.hash, '-o', `back-${file}`]);
  expect(get.code, get.err).toBe(0);
  expect(readFileSync(join(b.home, `back-${file}`)).equals(plain)).toBe(true);
  return r.hash;
}

describe('mkt sync blob put resumes an interrupted multipart upload', () => {
  it('stopped after 2 of 4 parts: the session is on disk, `status` lists it, the rerun sends the rest', async () => {
    const plain = randomBytes(26 * MIB);
    writeFileSync(join(a.home, 'video.bin'), plain);
    await putUntil('video.bin', 2);
    const st = await a.mkt(['status', '--json']);
    const local = (JSON.parse(st.out) as { local: { unfinished_uploads: string[] } }).local;
    expect(local.unfinished_uploads).toEqual([createHash('sha256').update(plain).digest('hex')]);
    await roundTrip('video.bin', plain, 2);
    expect((JSON.parse((await a.mkt(['status', '--json'])).out) as { local: { unfinished_uploads: string[] } }).local.unfinished_uploads).toEqual([]);
  });

  it('a key rotation between the runs: the remaining parts are sealed with the key of the stored ones', async () => {
    const plain = randomBytes(17 * MIB);
    writeFileSync(join(a.home, 'db.bin'), plain);
    await putUntil('db.bin', 1);
    // The engine directly, with a cheap scrypt for the new envelope (the CLI's is 2^17).
    await rotateKey(await a.session(), { password: w.password, scrypt: { logN: 10, r: 8, p: 1 } });
    expect((await b.mkt(['key', 'unlock'], `${w.password}\n`)).code).toBe(0);
    await roundTrip('db.bin', plain, 1);
  });

  it('a session the server no longer knows (aborted) starts over once', async () => {
    const plain = randomBytes(17 * MIB);
    writeFileSync(join(a.home, 'gone.bin'), plain);
    await putUntil('gone.bin', 1);
    const s = await a.session();
    const [u] = s.state.uploads(s.server);
    await s.client.multipartAbort(u!.hash, u!.upload_id);
    await roundTrip('gone.bin', plain, 0);
  });

  it('a file written to during the upload is not confirmed (it would not have its hash)', async () => {
    const plain = randomBytes(2 * MIB);
    const file = join(a.home, 'moving.bin');
    writeFileSync(file, plain);
    const s = await a.session();
    let touched = false;
    const put = putBlob(s, file, {
      onProgress: (p) => {
        if (p.phase === 'upload' && !touched) {
          touched = true;
          utimesSync(file, new Date(), new Date(Date.now() + 5000));
        }
      },
    });
    await expect(put).rejects.toThrow(/changed while it was being uploaded/);
    const get = await b.mkt(['blob', 'get', createHash('sha256').update(plain).digest('hex'), '-o', 'moving.bin']);
    expect(get.code).toBe(1);
    expect(get.err).toMatch(/no blob/);
  });
});
