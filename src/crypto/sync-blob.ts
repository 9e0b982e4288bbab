// The encrypted blob format: a 24-byte header, then fixed-size plaintext chunks each sealed with
// AES-256-GCM under (hash, chunk index, chunk count) as associated data. Sizes are derived from
// the plaintext size alone, and any byte range of the ciphertext can be rebuilt on its own
// (deterministic nonces), so multipart parts can be built in any order and rebuilt on resume.
import { createCipheriv, createDecipheriv, createHash } from 'node:crypto';
import { blobKey, keyFingerprint } from './sync-keys.js';
import type { Keyring } from './envelope.js';

export const BLOB_MAGIC = Buffer.from('MKB1', 'ascii');
export const HEADER_BYTES = 24;
export const TAG_BYTES = 16;
/** Plaintext bytes per chunk: 1 MiB keeps memory small and overhead at 16 B per MiB. */
export const DEFAULT_CHUNK_SIZE = 1024 * 1024;
const MAX_CHUNK_SIZE = 64 * 1024 * 1024;

export class BlobIntegrityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BlobIntegrityError';
  }
}

export interface BlobHeader {
  fingerprint: string;
  chunkSize: number;
  plainSize: number;
}

export function chunkCount(plainSize: number, chunkSize = DEFAULT_CHUNK_SIZE): number {
  return Math.max(1, Math.ceil(plainSize / chunkSize));
}

/** `size_bytes` of the upload calls: what the ciphertext of `plainSize` bytes will weigh. */
export function ciphertextSize(plainSize: number, chunkSize = DEFAULT_CHUNK_SIZE): number {
  return HEADER_BYTES + plainSize + chunkCount(plainSize, chunkSize) * TAG_BYTES;
}

export function encodeHeader(h: BlobHeader): Buffer {
  const b = Buffer.alloc(HEADER_BYTES);
  BLOB_MAGIC.copy(b, 0);
  Buffer.from(h.fingerprint, 'hex').copy(b, 4);
  b.writeUInt32BE(h.chunkSize, 12);
  b.writeBigUInt64BE(BigInt(h.plainSize), 16);
  return b;
}

export function decodeHeader(b: Buffer): BlobHeader {
  if (b.length < HEADER_BYTES || !b.subarray(0, 4).equals(BLOB_MAGIC)) throw new BlobIntegrityError('not an mkt encrypted blob (bad header)');
  const chunkSize = b.readUInt32BE(12);
  const plainSize = Number(b.readBigUInt64BE(16));
  if (chunkSize < 1 || chunkSize > MAX_CHUNK_SIZE || !Number.isSafeInteger(plainSize)) throw new BlobIntegrityError('damaged blob header');
  return { fingerprint: b.subarray(4, 12).toString('hex'), chunkSize, plainSize };
}

function nonce(index: number): Buffer {
  const n = Buffer.alloc(12);
  n.writeUInt32BE(index, 8);
  return n;
}

function chunkAad(header: Buffer, hash: Buffer, index: number, count: number): Buffer {
  const tail = Buffer.alloc(8);
  tail.writeUInt32BE(index, 0);
  tail.writeUInt32BE(count, 4);
  return Buffer.concat([header, hash, tail]);
}

/**
 * Supplies `length` plaintext bytes at `offset`. It may read into `scratch` (at least `length`
 * bytes, reused by the caller once the chunk is sealed) and return a view of it.
 */
export type PlainReader = (offset: number, length: number, scratch: Buffer) => Promise<Buffer>;

/**
 * Plaintext bytes per cipher call. node:crypto returns each call's output in a fresh buffer: a
 * 1 MiB one is mapped and page-faulted in anew every time (two thirds of the sealing time went
 * to the kernel), a 64 KiB one comes from the allocator's free lists, already resident.
 */
export const SEAL_SLICE = 64 * 1024;

/** Seals the chunks of one blob; `readPlain` supplies plaintext on demand. */
export class BlobSealer {
  readonly header: Buffer;
  readonly count: number;
  readonly size: number;
  private readonly key: Buffer;
  private readonly hash: Buffer;

  constructor(
    readonly master: Uint8Array,
    readonly hashHex: string,
    readonly plainSize: number,
    private readonly readPlain: PlainReader,
    readonly chunkSize = DEFAULT_CHUNK_SIZE,
  ) {
    this.header = encodeHeader({ fingerprint: keyFingerprint(master), chunkSize, plainSize });
    this.count = chunkCount(plainSize, chunkSize);
    this.size = ciphertextSize(plainSize, chunkSize);
    this.key = blobKey(master, hashHex);
    this.hash = Buffer.from(hashHex, 'hex');
  }

  /**
   * Seals ciphertext bytes [start, end) in order and hands them to `write`, in pieces valid only
   * until `write` returns (or its promise settles): the caller copies them where they go. The
   * plaintext is read one chunk ahead into two scratch buffers, so the file read overlaps the
   * encryption. A range that starts inside a chunk encrypts that chunk's head too (its tag
   * covers the whole chunk); one that ends inside a chunk stops encrypting there. `scratch`, two
   * buffers of a chunk each, saves making them (the caller's hashing pass used them already).
   */
  async sealRange(start: number, end: number, write: (piece: Buffer) => void | Promise<void>, scratch?: readonly [Buffer, Buffer]): Promise<void> {
    if (start < 0 || end > this.size || start > end) throw new RangeError(`bad ciphertext range ${start}-${end} of ${this.size}`);
    if (start < HEADER_BYTES && end > start) await write(this.header.subarray(start, Math.min(end, HEADER_BYTES)));
    if (end <= HEADER_BYTES) return;
    const sealedSize = this.chunkSize + TAG_BYTES;
    const first = Math.max(0, Math.floor((start - HEADER_BYTES) / sealedSize));
    const last = Math.min(this.count - 1, Math.floor((end - 1 - HEADER_BYTES) / sealedSize));
    const scratchSize = Math.min(this.chunkSize, Math.max(1, this.plainSize));
    const bufs = scratch && scratch[0].length >= scratchSize && scratch[1].length >= scratchSize ? scratch : ([Buffer.allocUnsafe(scratchSize), Buffer.allocUnsafe(scratchSize)] as const);
    const read = (i: number): Promise<Buffer> => {
      const off = i * this.chunkSize;
      const p = this.readPlain(off, Math.min(this.chunkSize, this.plainSize - off), bufs[i % 2]!);
      // The next chunk is read while this one's pieces are written, and a write may wait on the
      // network: a read that fails meanwhile (the file shrank) has no awaiter yet, and would be
      // an unhandled rejection. It is marked handled here; the loop's await still throws it.
      p.catch(() => undefined);
      return p;
    };
    let next: Promise<Buffer> | undefined = read(first);
    try {
      for (let i = first; i <= last; i++) {
        const plain: Buffer = await next!;
        next = i < last ? read(i + 1) : undefined;
        const cStart = HEADER_BYTES + i * sealedSize;
        const from = Math.max(start, cStart) - cStart;
        const to = Math.min(end, cStart + plain.length + TAG_BYTES) - cStart;
        const c = createCipheriv('aes-256-gcm', this.key, nonce(i), { authTagLength: TAG_BYTES });
        c.setAAD(chunkAad(this.header, this.hash, i, this.count));
        for (let o = 0; o < plain.length && o < to; o += SEAL_SLICE) {
          const sliceEnd = Math.min(plain.length, o + SEAL_SLICE);
          const ct = c.update(plain.subarray(o, sliceEnd));
          if (sliceEnd > from) await write(ct.subarray(Math.max(from, o) - o, Math.min(to, sliceEnd) - o));
        }
        if (to > plain.length) {
          c.final();
          await write(c.getAuthTag().subarray(Math.max(0, from - plain.length), to - plain.length));
        }
      }
    } finally {
      // A read still running must finish (or fail) before its scratch buffer is forgotten.
      await next?.catch(() => undefined);
    }
  }

  /** Ciphertext bytes [start, end) as one buffer. */
  async range(start: number, end: number): Promise<Buffer> {
    const out = Buffer.allocUnsafe(end - start);
    let at = 0;
    await this.sealRange(start, end, (piece) => {
      at += piece.copy(out, at);
    });
    return out;
  }
}

/**
 * Opens a blob stream chunk by chunk, yielding plaintext (a chunk's slices, once its tag has
 * proved all of it). Throws BlobIntegrityError for a bad header, a chunk that fails
 * authentication (tampered, reordered, moved from another blob, wrong key), a short or long
 * stream, or a plaintext whose SHA-256 is not `hashHex`.
 */
export async function* openBlobStream(source: AsyncIterable<Buffer | Uint8Array> | Iterable<Buffer | Uint8Array>, ring: Keyring, hashHex: string): AsyncGenerator<Buffer> {
  const hash = Buffer.from(hashHex, 'hex');
  const hasher = createHash('sha256');
  const header = Buffer.alloc(HEADER_BYTES);
  let headerLen = 0;
  let h: BlobHeader | undefined;
  let key: Buffer | undefined;
  let count = 0;
  let index = 0;
  // One buffer assembles each sealed chunk from the pieces the network delivers.
  let acc = Buffer.alloc(0);
  let accLen = 0;
  const sealedLen = (i: number): number => Math.min(h!.chunkSize, h!.plainSize - i * h!.chunkSize) + TAG_BYTES;
  // Opened in slices (see SEAL_SLICE); released only once the tag has proved the whole chunk.
  const open = (sealed: Buffer): Buffer[] => {
    const d = createDecipheriv('aes-256-gcm', key!, nonce(index), { authTagLength: TAG_BYTES });
    d.setAAD(chunkAad(header, hash, index, count));
    d.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    const ct = sealed.subarray(0, sealed.length - TAG_BYTES);
    const plain: Buffer[] = [];
    try {
      for (let o = 0; o < ct.length; o += SEAL_SLICE) plain.push(d.update(ct.subarray(o, o + SEAL_SLICE)));
      d.final();
      return plain;
    } catch {
      throw new BlobIntegrityError(`chunk ${index} of ${count} failed to open: altered, reordered, from another blob, or the wrong key`);
    }
  };
  for await (const piece of source) {
    let b = Buffer.isBuffer(piece) ? piece : Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    if (!h) {
      const n = Math.min(HEADER_BYTES - headerLen, b.length);
      b.copy(header, headerLen, 0, n);
      headerLen += n;
      b = b.subarray(n);
      if (headerLen < HEADER_BYTES) continue;
      h = decodeHeader(header);
      const master = ring.keys.find((k) => keyFingerprint(k) === h!.fingerprint);
      if (!master) throw new BlobIntegrityError(`the blob was sealed with key ${h.fingerprint}, which is not in this keyring (wrong account or key)`);
      key = blobKey(master, hashHex);
      count = chunkCount(h.plainSize, h.chunkSize);
      acc = Buffer.allocUnsafe(Math.min(h.chunkSize, Math.max(0, h.plainSize)) + TAG_BYTES);
    }
    while (b.length > 0) {
      if (index >= count) throw new BlobIntegrityError('the blob has bytes after its last chunk');
      const want = sealedLen(index);
      const n = Math.min(want - accLen, b.length);
      b.copy(acc, accLen, 0, n);
      accLen += n;
      b = b.subarray(n);
      if (accLen < want) break;
      const plain = open(acc.subarray(0, want));
      accLen = 0;
      index++;
      for (const p of plain) {
        hasher.update(p);
        yield p;
      }
    }
  }
  if (!h) throw new BlobIntegrityError('the blob ended inside its header');
  if (index < count) throw new BlobIntegrityError(`the blob ended after ${index} of ${count} chunks`);
  if (!hasher.digest().equals(hash)) throw new BlobIntegrityError('the decrypted blob does not have the SHA-256 it was stored under');
}
