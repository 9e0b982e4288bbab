// `blob put` and `blob get`: hash the plaintext, seal it chunk by chunk, upload one-shot or
// multipart (several parts in flight, per-part SHA-256, a resumable session on disk), confirm;
// download, open every chunk, re-hash, and only then move the file into place. Memory is
// bounded whatever the file size: the sealed bytes waiting for the network (BUFFER_BYTES), two
// chunks of read-ahead, and the cipher's garbage between two scavenges.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { open, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { NegativeError, UsageError } from '../cli/errors.js';
import { ApiError } from '../client/http.js';
import { putStreamToSignedUrl } from '../client/signed-put.js';
import { getFromSignedUrl } from '../client/sync.js';
import { BlobSealer, ciphertextSize, DEFAULT_CHUNK_SIZE, openBlobStream } from '../crypto/sync-blob.js';
import { keyFingerprint } from '../crypto/sync-keys.js';
import type { SyncSession } from './session.js';
import { PartBody, SlabFiller, SlabPool, Slots, Stop } from './part-buffers.js';
import type { UploadSession } from './state.js';
import { collectYoungGarbage } from './young-gc.js';

/** Ciphertext at or below this goes in one PUT; above it, multipart. */
export const ONE_SHOT_MAX = 16 * 1024 * 1024;
/** Part PUTs at once. */
export const PARTS_IN_FLIGHT = 3;
const MIB = 1024 * 1024;
/**
 * Sealed bytes waiting for the network, at most. A part is sealed whole before its PUT (the URL
 * is signed with its checksum): this holds one 8 MiB part and the start of the next while the
 * first drains into the kernel. Parts larger than this (blobs over 117 GiB) are sealed twice
 * instead: once for the checksum, then into the PUT as it sends.
 */
export const BUFFER_BYTES = 12 * MIB;
/** The unit those bytes wait in: a slab is reused as soon as the kernel has sent it. */
const SLAB_BYTES = 1 * MIB;
/** Sealed bytes between two scavenges: the cipher's garbage never exceeds this (see young-gc.ts). */
export const GC_EVERY_BYTES = 4 * MIB;
/** Plaintext `blob get` queues for the file at most. */
export const WRITE_QUEUE_BYTES = 1 * MIB;
/** Part numbers start at 1, like S3. */
const FIRST_PART = 1;

export interface BlobProgress {
  phase: 'hash' | 'upload' | 'download';
  done: number;
  total: number;
}

export interface PutReport {
  hash: string;
  size: number;
  size_bytes: number;
  mode: 'one-shot' | 'multipart';
  already_exists: boolean;
  resumed_parts: number;
}

/** Two file read buffers of a chunk each: the hashing pass reads through them, then the sealing pass. */
function readBuffers(): [Buffer, Buffer] {
  return [Buffer.allocUnsafe(DEFAULT_CHUNK_SIZE), Buffer.allocUnsafe(DEFAULT_CHUNK_SIZE)];
}

/**
 * SHA-256 of a file, read through two reused buffers: the next read runs (in libuv's pool) while
 * the main thread hashes the last one.
 */
export async function sha256File(file: string, onBytes?: (n: number) => void, bufs: readonly [Buffer, Buffer] = readBuffers()): Promise<string> {
  const h = createHash('sha256');
  const fh = await open(file, 'r');
  let next: Promise<{ bytesRead: number; buffer: Buffer }> | undefined;
  try {
    next = fh.read(bufs[0], 0, DEFAULT_CHUNK_SIZE, null);
    for (let i = 1; ; i++) {
      const { bytesRead, buffer } = await next;
      next = undefined;
      if (bytesRead === 0) break;
      // Reads without a position follow one another in the order they were issued.
      next = fh.read(bufs[i % 2]!, 0, DEFAULT_CHUNK_SIZE, null);
      h.update(buffer.subarray(0, bytesRead));
      onBytes?.(bytesRead);
    }
  } finally {
    await next?.catch(() => undefined);
    await fh.close();
  }
  return h.digest('hex');
}

export async function putBlob(s: SyncSession, file: string, opts: MultipartOptions & { oneShotMax?: number } = {}): Promise<PutReport> {
  let st;
  try {
    st = await stat(file);
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (!st.isFile()) throw new UsageError(`${file} is not a regular file`);
  const info = await s.client.getKey();
  if (!info) throw new NegativeError('this account has no sync key yet', 'run `mkt sync key init` first');
  const ring = await s.keyring();
  let hashed = 0;
  const scratch = readBuffers();
  const hash = await sha256File(file, (n) => opts.onProgress?.({ phase: 'hash', done: (hashed += n), total: st.size }), scratch);
  // A resumed upload must seal with the key its stored parts were sealed with (a rotation may
  // have happened since); new blobs use the current key, never a pending one a rotation could drop.
  const saved = s.state.upload(s.server, hash);
  const savedKey = saved ? ring.keys.find((k) => keyFingerprint(k) === saved.key_fingerprint) : undefined;
  if (saved && (!savedKey || saved.plain_size !== st.size)) await dropUpload(s, saved);
  const master = savedKey && saved?.plain_size === st.size ? savedKey : await s.keyFor(info.key_id, ring);
  const fh = await open(file, 'r');
  try {
    const readPlain = async (offset: number, length: number, scratch: Buffer): Promise<Buffer> => {
      const b = scratch.subarray(0, length);
      let got = 0;
      while (got < length) {
        const { bytesRead } = await fh.read(b, got, length - got, offset + got);
        if (bytesRead === 0) throw new NegativeError(`${file} changed while uploading (it became shorter)`);
        got += bytesRead;
      }
      return b;
    };
    const sealer = new BlobSealer(master, hash, st.size, readPlain);
    const report: PutReport = { hash, size: st.size, size_bytes: sealer.size, mode: 'one-shot', already_exists: false, resumed_parts: 0 };
    if (sealer.size <= (opts.oneShotMax ?? ONE_SHOT_MAX) && !s.state.upload(s.server, hash)) {
      const res = await s.client.blobUploadUrl({ hash, size_bytes: sealer.size });
      if (res.already_exists) return { ...report, already_exists: true };
      await oneShot(res.upload_url, sealer, scratch, opts.bufferBytes ?? BUFFER_BYTES);
      opts.onProgress?.({ phase: 'upload', done: sealer.size, total: sealer.size });
    } else {
      const r = await multipart(s, file, sealer, scratch, opts);
      if (r === 'exists') return { ...report, mode: 'multipart', already_exists: true };
      report.mode = 'multipart';
      report.resumed_parts = r;
    }
    // A file written to while it was hashed or sealed would be stored under a hash it does not
    // have (and fail every download): refuse to confirm it.
    const after = await stat(file);
    if (after.size !== st.size || after.mtimeMs !== st.mtimeMs) {
      s.state.removeUpload(s.server, hash);
      throw new NegativeError(`${file} changed while it was being uploaded; nothing was stored, run the command again`);
    }
    await s.client.blobConfirm(hash);
    s.state.removeUpload(s.server, hash);
    return report;
  } finally {
    await fh.close();
  }
}

/** Counts sealed bytes; a scavenge every GC_EVERY_BYTES of them. */
function garbageTicker(): (bytes: number) => void {
  let since = 0;
  return (bytes) => {
    since += bytes;
    if (since >= GC_EVERY_BYTES) {
      since = 0;
      collectYoungGarbage();
    }
  };
}

/** The one-shot PUT, sealed into it as it sends (no checksum: the URL is signed without). */
async function oneShot(url: string, sealer: BlobSealer, scratch: readonly [Buffer, Buffer], bufferBytes: number): Promise<void> {
  const stop = new Stop();
  const slabBytes = Math.min(SLAB_BYTES, sealer.size);
  const pool = new SlabPool(Math.max(1, Math.floor(bufferBytes / slabBytes)), slabBytes, stop);
  const body = new PartBody(pool, stop);
  const filler = new SlabFiller(pool);
  const sealed = garbageTicker();
  const put = putStreamToSignedUrl(url, { length: sealer.size, body, flushed: body.flushed });
  put.catch((err: unknown) => stop.fail(err));
  try {
    let left = sealer.size;
    const intoPut = async (piece: Buffer): Promise<void> => {
      left -= await filler.fill(body, piece, left);
      sealed(piece.length);
    };
    await sealer.sealRange(0, sealer.size, intoPut, scratch);
    body.end();
  } catch (err) {
    stop.fail(err);
  }
  // The PUT's own failure first: a sealing pass stopped by it only repeats it.
  await put;
  if (stop.error) throw stop.error.cause;
}

/** Aborts a saved multipart session on the server (best effort) and forgets it locally. */
async function dropUpload(s: SyncSession, u: UploadSession): Promise<void> {
  await s.client.multipartAbort(u.hash, u.upload_id).catch(() => undefined);
  s.state.removeUpload(s.server, u.hash);
}

/** The server no longer knows the upload session (aborted, reaped, or completed and confirmed elsewhere). */
function sessionGone(err: unknown): boolean {
  return err instanceof ApiError && (err.status === 404 || err.status === 410);
}

/** Runs (or resumes) a multipart upload; returns how many parts an earlier run had stored. */
interface MultipartOptions {
  onProgress?: (p: BlobProgress) => void;
  /** PUTs at once (PARTS_IN_FLIGHT). */
  inFlight?: number;
  /** Sealed bytes held for the network (BUFFER_BYTES). */
  bufferBytes?: number;
}

async function multipart(s: SyncSession, file: string, sealer: BlobSealer, scratch: readonly [Buffer, Buffer], opts: MultipartOptions): Promise<number | 'exists'> {
  const saved = s.state.upload(s.server, sealer.hashHex);
  if (saved) {
    try {
      return await multipartRun(s, saved, sealer, scratch, opts);
    } catch (err) {
      if (!sessionGone(err)) throw err;
      // Start over once with a fresh session.
      s.state.removeUpload(s.server, sealer.hashHex);
    }
  }
  const started = await s.client.multipartStart({ hash: sealer.hashHex, size_bytes: sealer.size });
  if (started.already_exists) return 'exists';
  const session: UploadSession = {
    server: s.server,
    hash: sealer.hashHex,
    file,
    plain_size: sealer.plainSize,
    size_bytes: sealer.size,
    upload_id: started.upload_id,
    key_fingerprint: keyFingerprint(sealer.master),
    part_size: started.part_size,
    part_count: started.part_count,
    etags: {},
    started_at: new Date().toISOString(),
  };
  s.state.saveUpload(session);
  return multipartRun(s, session, sealer, scratch, opts);
}

async function multipartRun(s: SyncSession, sess: UploadSession, sealer: BlobSealer, scratch: readonly [Buffer, Buffer], opts: MultipartOptions): Promise<number> {
  const resumed = Object.keys(sess.etags).length;
  const todo: number[] = [];
  for (let n = FIRST_PART; n < FIRST_PART + sess.part_count; n++) if (!sess.etags[String(n)]) todo.push(n);
  let done = Math.min(resumed * sess.part_size, sess.size_bytes);
  opts.onProgress?.({ phase: 'upload', done, total: sess.size_bytes });

  const stop = new Stop();
  const slabBytes = Math.min(SLAB_BYTES, sess.part_size);
  const pool = new SlabPool(Math.max(1, Math.floor((opts.bufferBytes ?? BUFFER_BYTES) / slabBytes)), slabBytes, stop);
  const puts = new Slots(opts.inFlight ?? PARTS_IN_FLIGHT, stop);
  const uploads = new Set<Promise<void>>();
  const partStart = (n: number): number => (n - FIRST_PART) * sess.part_size;
  const partLength = (n: number): number => Math.min(sess.part_size, sess.size_bytes - partStart(n));
  const sealed = garbageTicker();

  /** Takes a PUT slot and sends part `n` from `body` (which may still be filling). */
  const send = async (n: number, body: PartBody, checksum: string): Promise<void> => {
    await puts.take();
    const p = (async () => {
      const length = partLength(n);
      const urls = await s.client.multipartParts({ hash: sess.hash, upload_id: sess.upload_id, size_bytes: sess.size_bytes, first_part: n, count: 1, checksums: [checksum] });
      const part = urls.parts.find((x) => x.part_number === n);
      if (!part) throw new NegativeError(`the server sent no URL for part ${n}`);
      if (part.content_length !== length) throw new NegativeError(`part ${n}: the server expects ${part.content_length} bytes, this client built ${length} (different part geometry)`);
      s.state.recordPart(sess, n, await putStreamToSignedUrl(part.url, { length, checksum, body, flushed: body.flushed }));
      done += length;
      opts.onProgress?.({ phase: 'upload', done, total: sess.size_bytes });
    })().then(
      () => puts.give(),
      // The first failure stops the sealing; parts already on their way finish.
      (err: unknown) => stop.fail(err),
    );
    uploads.add(p);
    void p.finally(() => uploads.delete(p));
  };

  const filler = new SlabFiller(pool);

  try {
    if (Math.ceil(sess.part_size / slabBytes) <= pool.count) {
      // Each run of consecutive missing parts in one sealing pass (a chunk that straddles two
      // parts is sealed once); a part's PUT starts when its last byte, and so its checksum, is in.
      for (let i = 0; i < todo.length; ) {
        let j = i + 1;
        while (j < todo.length && todo[j] === todo[j - 1]! + 1) j++;
        const last = todo[j - 1]!;
        let n = todo[i]!;
        let left = partLength(n);
        let body = new PartBody(pool, stop);
        let sum = createHash('sha256');
        const intoParts = async (piece: Buffer): Promise<void> => {
          for (let off = 0; off < piece.length; ) {
            const view = piece.subarray(off);
            const k = await filler.fill(body, view, left);
            // The checksum is taken from the piece while it is still in cache.
            sum.update(view.subarray(0, k));
            off += k;
            left -= k;
            if (left === 0) {
              body.end();
              await send(n, body, sum.digest('base64'));
              n++;
              if (n <= last) {
                left = partLength(n);
                body = new PartBody(pool, stop);
                sum = createHash('sha256');
              }
            }
          }
          sealed(piece.length);
        };
        await sealer.sealRange(partStart(todo[i]!), partStart(last) + partLength(last), intoParts, scratch);
        i = j;
      }
    } else {
      // Parts too large to hold: seal each twice, for its checksum, then into its PUT.
      for (const n of todo) {
        const sum = createHash('sha256');
        const intoSum = (piece: Buffer): void => {
          sum.update(piece);
          sealed(piece.length);
        };
        await sealer.sealRange(partStart(n), partStart(n) + partLength(n), intoSum, scratch);
        const body = new PartBody(pool, stop);
        await send(n, body, sum.digest('base64'));
        let left = partLength(n);
        const intoPut = async (piece: Buffer): Promise<void> => {
          left -= await filler.fill(body, piece, left);
          sealed(piece.length);
        };
        await sealer.sealRange(partStart(n), partStart(n) + partLength(n), intoPut, scratch);
        body.end();
      }
    }
  } catch (err) {
    stop.fail(err);
  }
  while (uploads.size > 0) await Promise.allSettled([...uploads]);
  if (stop.error) throw stop.error.cause;
  const parts = Object.entries(sess.etags)
    .map(([n, etag]) => ({ part_number: Number(n), etag }))
    .sort((a, b) => a.part_number - b.part_number);
  await s.client.multipartComplete({ hash: sess.hash, upload_id: sess.upload_id, parts });
  return resumed;
}

export interface GetReport {
  hash: string;
  size: number;
  file: string;
}

/** Downloads, opens and re-hashes into a temporary file beside `out`; renames only when all is well. */
/**
 * Downloads, opens and re-hashes blob `hash` into the file `out`, which appears only once all of
 * it opened; or into a stream (stdout for `-o -`): every chunk written there has passed its
 * authentication tag, and a blob cut short or altered later throws after what was written.
 */
export async function getBlob(s: SyncSession, hash: string, out: string | NodeJS.WritableStream, opts: { onProgress?: (p: BlobProgress) => void } = {}): Promise<GetReport> {
  if (!/^[0-9a-f]{64}$/.test(hash)) throw new UsageError('HASH must be the 64-character hex SHA-256 of the plaintext');
  const ring = await s.keyring();
  let url: string;
  try {
    url = (await s.client.blobDownloadUrl(hash)).download_url;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) throw new NegativeError(`no blob ${hash}`);
    throw err;
  }
  const res = await getFromSignedUrl(url);
  let size = 0;
  let received = 0;
  const total = res.size ?? 0;
  const opened = garbageTicker();
  async function* counted(): AsyncGenerator<Buffer> {
    for await (const b of res.body) {
      received += b.length;
      opened(b.length);
      opts.onProgress?.({ phase: 'download', done: received, total });
      yield b;
    }
  }
  async function* plaintext(): AsyncGenerator<Buffer> {
    for await (const plain of openBlobStream(counted(), ring, hash)) {
      size += plain.length;
      yield plain;
    }
  }
  if (typeof out !== 'string') {
    await pipeline(plaintext(), out, { end: false });
    return { hash, size, file: '-' };
  }
  const tmp = join(dirname(out), `.${hash.slice(0, 12)}.${process.pid}.mkt-partial`);
  // A write stream lets the next chunk be opened while the previous one is written; a chunk
  // of queue is enough for that (a larger one only holds more memory).
  const file = createWriteStream(tmp, { flags: 'wx', mode: 0o600, highWaterMark: WRITE_QUEUE_BYTES });
  try {
    await pipeline(plaintext(), file);
    await rename(tmp, out);
  } catch (err) {
    // pipeline rejects at the first error without waiting for the file's open to finish: remove
    // the partial file only once the stream has closed, or a late open creates it again.
    if (!file.closed) await new Promise<void>((r) => file.once('close', () => r()));
    await rm(tmp, { force: true });
    throw err;
  }
  return { hash, size, file: out };
}

export { ciphertextSize };
