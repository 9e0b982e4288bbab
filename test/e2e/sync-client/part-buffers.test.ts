// The bounded upload paths of `blob put` against a real marketplace: parts larger than the sealed
// bytes it may hold are sealed twice (for the checksum, then into the PUT as it sends), a
// one-shot blob is sealed into its PUT as it sends, and a failure in the middle (the file
// shrinking under the sealing pass) ends the command with an error instead of a wait, with the
// parts already stored kept for a resume.
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getBlob, putBlob } from '../../../src/sync/blobs.js';
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

/** Writes `plain` on device A, puts it with `opts`, reads it back on device B. */
async function roundTrip(name: string, plain: Buffer, opts: Parameters<typeof putBlob>[2]): Promise<{ mode: string }> {
  const file = join(a.home, name);
  writeFileSync(file, plain);
  const r = await putBlob(await a.session(), file, opts);
  expect(r.hash).toBe(createHash('sha256').update(plain).digest('hex'));
  await getBlob(await b.session(), r.hash, join(b.home, name));
  expect(readFileSync(join(b.home, name)).equals(plain)).toBe(true);
  return r;
}

describe('blob put holds at most its buffer of sealed bytes', () => {
  it('parts larger than the buffer (8 MiB parts, 3 MiB held) are sealed twice and read back identical', async () => {
    const r = await roundTrip('large-parts.bin', randomBytes(19 * MIB + 12345), { bufferBytes: 3 * MIB, inFlight: 2 });
    expect(r.mode).toBe('multipart');
  });

  it('parts that fit, with one PUT at a time and the smallest buffer that holds a part', async () => {
    const r = await roundTrip('tight.bin', randomBytes(17 * MIB + 1), { bufferBytes: 8 * MIB, inFlight: 1 });
    expect(r.mode).toBe('multipart');
  });

  it('a one-shot blob is sealed into its PUT through a buffer smaller than itself', async () => {
    const r = await roundTrip('one-shot.bin', randomBytes(5 * MIB + 7), { bufferBytes: 1 * MIB });
    expect(r.mode).toBe('one-shot');
  });

  it('a file that shrinks while it is sealed fails the command (no wait), keeping the stored parts', async () => {
    const plain = randomBytes(40 * MIB);
    const file = join(a.home, 'shrinking.bin');
    writeFileSync(file, plain);
    const s = await a.session();
    let cut = false;
    const put = putBlob(s, file, {
      onProgress: (p) => {
        if (p.phase === 'upload' && p.done > 0 && !cut) {
          cut = true;
          truncateSync(file, 20 * MIB);
        }
      },
    });
    await expect(put).rejects.toThrow(/changed while uploading|changed while it was being uploaded/);
    const [u] = s.state.uploads(s.server);
    expect(u?.hash).toBe(createHash('sha256').update(plain).digest('hex'));
    expect(Object.keys(u!.etags).length).toBeGreaterThan(0);
  });
});
