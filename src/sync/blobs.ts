// `blob put` and `blob get`: hash the plaintext, seal it chunk by chunk, upload one-shot or
// multipart (several parts in flight, per-part SHA-256, a resumable session on disk), confirm;
// download, open every chunk, re-hash, and only then move the file into place.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { open, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { NegativeError, UsageError } from '../cli/errors.js';
import { ApiError } from '../client/http.js';
import { getFromSignedUrl, putToSignedUrl } from '../client/sync.js';
import { BlobSealer, ciphertextSize, openBlobStream } from '../crypto/sync-blob.js';
import { keyFingerprint } from '../crypto/sync-keys.js';
import type { SyncSession } from './session.js';
import type { UploadSession } from './state.js';

/** Ciphertext at or below this goes in one PUT; above it, multipart. */
export const ONE_SHOT_MAX = 16 * 1024 * 1024;
/** Parts uploading at once. */
export const PARTS_IN_FLIGHT = 3;
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

/** SHA-256 of a file, read through one reused buffer (no garbage per read). */
export async function sha256File(file: string, onBytes?: (n: number) => void): Promise<string> {
  const h = createHash('sha256');
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(1024 * 1024);
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      h.update(buf.subarray(0, bytesRead));
      onBytes?.(bytesRead);
    }
  } finally {
    await fh.close();
  }
  return h.digest('hex');
}

export async function putBlob(s: SyncSession, file: string, opts: { onProgress?: (p: BlobProgress) => void; oneShotMax?: number; inFlight?: number } = {}): Promise<PutReport> {
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
  const hash = await sha256File(file, (n) => opts.onProgress?.({ phase: 'hash', done: (hashed += n), total: st.size }));
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
      await putToSignedUrl(res.upload_url, await sealer.rangePieces(0, sealer.size));
      opts.onProgress?.({ phase: 'upload', done: sealer.size, total: sealer.size });
    } else {
      const r = await multipart(s, file, sealer, opts);
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
async function multipart(s: SyncSession, file: string, sealer: BlobSealer, opts: { onProgress?: (p: BlobProgress) => void; inFlight?: number }): Promise<number | 'exists'> {
  const saved = s.state.upload(s.server, sealer.hashHex);
  if (saved) {
    try {
      return await multipartRun(s, saved, sealer, opts);
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
  return multipartRun(s, session, sealer, opts);
}

async function multipartRun(s: SyncSession, sess: UploadSession, sealer: BlobSealer, opts: { onProgress?: (p: BlobProgress) => void; inFlight?: number }): Promise<number> {
  const resumed = Object.keys(sess.etags).length;
  const todo: number[] = [];
  for (let n = FIRST_PART; n < FIRST_PART + sess.part_count; n++) if (!sess.etags[String(n)]) todo.push(n);
  let done = Math.min(resumed * sess.part_size, sess.size_bytes);
  opts.onProgress?.({ phase: 'upload', done, total: sess.size_bytes });

  const worker = async (): Promise<void> => {
    // One part buffer per worker, reused: memory stays at (parts in flight × part size).
    const partBuf = Buffer.allocUnsafe(sess.part_size);
    for (let n = todo.shift(); n !== undefined; n = todo.shift()) {
      const start = (n - FIRST_PART) * sess.part_size;
      const body = await sealer.rangeInto(start, Math.min(sess.size_bytes, start + sess.part_size), partBuf);
      const length = body.length;
      const checksum = createHash('sha256').update(body).digest('base64');
      const urls = await s.client.multipartParts({ hash: sess.hash, upload_id: sess.upload_id, size_bytes: sess.size_bytes, first_part: n, count: 1, checksums: [checksum] });
      const part = urls.parts.find((p) => p.part_number === n);
      if (!part) throw new NegativeError(`the server sent no URL for part ${n}`);
      if (part.content_length !== length) throw new NegativeError(`part ${n}: the server expects ${part.content_length} bytes, this client built ${length} (different part geometry)`);
      sess.etags[String(n)] = await putToSignedUrl(part.url, body, { checksum });
      s.state.saveUpload(sess);
      done += length;
      opts.onProgress?.({ phase: 'upload', done, total: sess.size_bytes });
    }
  };
  // Several parts in flight; the first failure stops the others from taking new parts.
  const workers = Array.from({ length: Math.min(opts.inFlight ?? PARTS_IN_FLIGHT, Math.max(1, todo.length)) }, () =>
    worker().catch((err: unknown) => {
      todo.length = 0;
      throw err;
    }),
  );
  const results = await Promise.allSettled(workers);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
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
export async function getBlob(s: SyncSession, hash: string, out: string, opts: { onProgress?: (p: BlobProgress) => void } = {}): Promise<GetReport> {
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
  const tmp = join(dirname(out), `.${hash.slice(0, 12)}.${process.pid}.mkt-partial`);
  let size = 0;
  let received = 0;
  const total = res.size ?? 0;
  async function* counted(): AsyncGenerator<Buffer> {
    for await (const b of res.body) {
      received += b.length;
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
  try {
    // A write stream lets the next chunk be opened while the previous one is written.
    await pipeline(plaintext(), createWriteStream(tmp, { flags: 'wx', mode: 0o600, highWaterMark: 4 * 1024 * 1024 }));
    await rename(tmp, out);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  return { hash, size, file: out };
}

export { ciphertextSize };
