// Blob format (issue 7 "Blobs", spec blob rules 4-5): chunks sealed with (hash, index, count),
// ciphertext size derived from the plaintext size, and every corruption detected.
import { describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { newMasterKey } from '../../../src/crypto/envelope.js';
import { BlobIntegrityError, BlobSealer, ciphertextSize, HEADER_BYTES, openBlobStream, SEAL_SLICE, TAG_BYTES } from '../../../src/crypto/sync-blob.js';

const CS = 1000;
const master = newMasterKey();
const ring = { keys: [master] };

function sealerFor(plain: Buffer, key = master, chunkSize = CS): BlobSealer {
  const hash = createHash('sha256').update(plain).digest('hex');
  return new BlobSealer(key, hash, plain.length, async (o, l) => plain.subarray(o, o + l), chunkSize);
}
async function openAll(ct: Buffer, hash: string, pieces = 7): Promise<Buffer> {
  const parts: Buffer[] = [];
  for (let i = 0; i < ct.length; i += pieces) parts.push(ct.subarray(i, i + pieces));
  if (ct.length === 0) parts.push(Buffer.alloc(0));
  const out: Buffer[] = [];
  for await (const p of openBlobStream(parts, ring, hash)) out.push(p);
  return Buffer.concat(out);
}

describe('sync blob format', () => {
  it('spec rule 5: the ciphertext size is derived from the plaintext size', async () => {
    for (const n of [0, 1, CS - 1, CS, CS + 1, 5 * CS + 17]) {
      const s = sealerFor(randomBytes(n));
      const ct = await s.range(0, s.size);
      expect(ct.length).toBe(ciphertextSize(n, CS));
      expect(ct.length).toBe(HEADER_BYTES + n + Math.max(1, Math.ceil(n / CS)) * TAG_BYTES);
    }
  });

  it('round-trips, including empty and exact-multiple sizes, whatever the read sizes', async () => {
    for (const n of [0, 1, CS, 3 * CS, 3 * CS + 5]) {
      const plain = randomBytes(n);
      const s = sealerFor(plain);
      expect((await openAll(await s.range(0, s.size), s.hashHex, 333)).equals(plain)).toBe(true);
    }
  });

  it('any byte range rebuilds identical bytes (multipart parts in any order, resumed uploads)', async () => {
    const plain = randomBytes(4 * CS + 100);
    const s = sealerFor(plain);
    const whole = await s.range(0, s.size);
    const again = sealerFor(plain);
    const ps = 777;
    const parts: Buffer[] = [];
    for (let i = Math.ceil(s.size / ps) - 1; i >= 0; i--) parts[i] = await again.range(i * ps, Math.min(s.size, (i + 1) * ps));
    expect(Buffer.concat(parts).equals(whole)).toBe(true);
  });

  it('chunks sealed in several cipher calls: any range, cut anywhere, gives the same bytes and opens', async () => {
    // Chunks of 2.5 slices: ranges that start and end inside a slice, a chunk or a tag.
    const cs = 2 * SEAL_SLICE + SEAL_SLICE / 2;
    const plain = randomBytes(3 * cs + 1234);
    const s = sealerFor(plain, master, cs);
    const whole = await s.range(0, s.size);
    expect(whole.length).toBe(ciphertextSize(plain.length, cs));
    expect((await openAll(whole, s.hashHex, 50_000)).equals(plain)).toBe(true);
    const cuts = [0, 5, HEADER_BYTES, HEADER_BYTES + SEAL_SLICE - 3, HEADER_BYTES + cs + 7, HEADER_BYTES + cs + TAG_BYTES - 4, HEADER_BYTES + 2 * (cs + TAG_BYTES) + SEAL_SLICE + 9, s.size - 10, s.size];
    for (let a = 0; a < cuts.length; a++) {
      for (let b = a; b < cuts.length; b++) expect((await s.range(cuts[a]!, cuts[b]!)).equals(whole.subarray(cuts[a], cuts[b])), `${cuts[a]}-${cuts[b]}`).toBe(true);
    }
  });

  it('tampered ciphertext fails loudly', async () => {
    const s = sealerFor(randomBytes(3 * CS));
    const ct = await s.range(0, s.size);
    ct[HEADER_BYTES + CS + 20] ^= 1;
    await expect(openAll(ct, s.hashHex)).rejects.toThrow(/chunk 1 of 3 failed to open/);
  });

  it('reordered chunks fail loudly', async () => {
    const s = sealerFor(randomBytes(3 * CS));
    const ct = await s.range(0, s.size);
    const a = HEADER_BYTES;
    const sz = CS + TAG_BYTES;
    const swapped = Buffer.concat([ct.subarray(0, a), ct.subarray(a + sz, a + 2 * sz), ct.subarray(a, a + sz), ct.subarray(a + 2 * sz)]);
    await expect(openAll(swapped, s.hashHex)).rejects.toThrow(BlobIntegrityError);
  });

  it('a chunk moved between blobs fails loudly', async () => {
    const s1 = sealerFor(randomBytes(2 * CS));
    const s2 = sealerFor(randomBytes(2 * CS));
    const c1 = await s1.range(0, s1.size);
    const c2 = await s2.range(0, s2.size);
    const a = HEADER_BYTES + CS + TAG_BYTES;
    await expect(openAll(Buffer.concat([c1.subarray(0, a), c2.subarray(a)]), s1.hashHex)).rejects.toThrow(/chunk 1 of 2/);
  });

  it('a wrong key fails loudly, naming the key fingerprint', async () => {
    const other = newMasterKey();
    const s = sealerFor(randomBytes(100), other);
    await expect(openAll(await s.range(0, s.size), s.hashHex)).rejects.toThrow(/not in this keyring/);
    // Same fingerprint slot, different key: authentication fails.
    const forged = await s.range(0, s.size);
    sealerFor(Buffer.alloc(0)).header.copy(forged, 4, 4, 12);
    await expect(openAll(forged, s.hashHex)).rejects.toThrow(/failed to open/);
  });

  it('a truncated stream, trailing bytes, a lying header or a wrong hash label fail', async () => {
    const plain = randomBytes(2 * CS + 1);
    const s = sealerFor(plain);
    const ct = await s.range(0, s.size);
    await expect(openAll(ct.subarray(0, ct.length - TAG_BYTES - 1), s.hashHex)).rejects.toThrow(/ended after 2 of 3/);
    await expect(openAll(ct.subarray(0, 10), s.hashHex)).rejects.toThrow(/inside its header/);
    await expect(openAll(Buffer.concat([ct, Buffer.from('x')]), s.hashHex)).rejects.toThrow(/after its last chunk/);
    const lie = Buffer.from(ct);
    lie.writeBigUInt64BE(BigInt(2 * CS), 16);
    await expect(openAll(lie, s.hashHex)).rejects.toThrow(BlobIntegrityError);
    await expect(openAll(ct, createHash('sha256').update('other').digest('hex'))).rejects.toThrow(/failed to open/);
  });
});

describe('BlobSealer reading ahead', () => {
  it('a read ahead that fails while a piece is being written is thrown by sealRange, never left unhandled', async () => {
    const plain = randomBytes(3 * CS);
    const hash = createHash('sha256').update(plain).digest('hex');
    const shrank = new Error('the file became shorter');
    // Chunk 1 fails at once; chunk 0's pieces are written slowly (as to a network that pushes back).
    const sealer = new BlobSealer(master, hash, plain.length, async (o, l) => (o === 0 ? plain.subarray(o, o + l) : Promise.reject(shrank)), CS);
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const slowWrite = async (): Promise<void> => {
        // Past the microtask checkpoint at which node reports a rejection nobody handles.
        for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
      };
      await expect(sealer.sealRange(0, sealer.size, slowWrite)).rejects.toBe(shrank);
      await new Promise((r) => setImmediate(r));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
