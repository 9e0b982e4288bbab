// The `local` object store: files under `<data-dir>/objects`, written and read through
// HMAC-signed, expiring URLs served by the marketplace itself (like S3 pre-signed URLs: the
// exact Content-Length and an optional SHA-256 checksum are bound into the signature).
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync } from 'node:fs';
import { link, mkdir, readdir, readFile, rename, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { signGrant, verifyGrant, type UrlGrant } from '../crypto/hmac-url.js';
import { isSafeKey, ObjectStoreError, type ObjectStore, type PutGrantOptions, type StoredPart } from './store.js';

/** Where the marketplace serves local objects. */
export const LOCAL_OBJECTS_PATH = '/api/v1/sync/objects';
const CHECKSUM_HEADER = 'x-amz-checksum-sha256';
/** The in-place file of a multipart upload, and the marker of a verified part: `<n>-<offset>-<size>-<etag>`. */
const DATA_FILE = 'data';
const MARKER = /^(\d+)-(\d+)-(\d+)-([0-9a-f]+)$/;
/**
 * Guards between processes (instances sharing the data dir): `.completing` while an upload is
 * assembled, `.writing-<n>` while part n is written. Each side creates its own file exclusively,
 * then looks for the other's, so of a racing part write and completion at least one sees the other.
 */
const COMPLETING = '.completing';
const writingGuard = (n: number): string => `.writing-${n}`;
/** A guard whose process cannot be checked (another host) counts as abandoned after this long. */
const GUARD_ABANDONED_MS = 24 * 3600 * 1000;

export interface LocalPutRequest {
  key: string;
  query: Record<string, string | undefined>;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
}

function header(h: LocalPutRequest['headers'], name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

export class LocalObjectStore implements ObjectStore {
  readonly kind = 'local';
  private readonly root: string;
  private readonly urlKey: Buffer;
  /** Parts being written now (`<upload>/<n>`). */
  private readonly writing = new Set<string>();
  /**
   * Multipart uploads being completed. A part PUT writes in place through its own file handle, so
   * one that opened the data file before completion renamed it would go on writing into the
   * finished object: completion and part writes of one upload exclude each other, within this
   * process through these sets and across instances sharing the data dir through guard files.
   */
  private readonly completing = new Set<string>();

  /** `urlKey` signs the URLs: a key used for nothing else. */
  constructor(
    dataDir: string,
    urlKey: Buffer,
    private readonly nowSeconds: () => number,
  ) {
    this.root = join(dataDir, 'objects');
    mkdirSync(join(this.root, '.tmp'), { recursive: true, mode: 0o700 });
    this.urlKey = urlKey;
  }

  private objectPath(key: string): string {
    if (!isSafeKey(key)) throw new ObjectStoreError(400, 'malformed object key');
    return join(this.root, 'blobs', ...key.split('/'));
  }

  private uploadDir(storeUploadId: string): string {
    if (!/^[0-9a-f-]{36}$/.test(storeUploadId)) throw new ObjectStoreError(404, 'no such multipart upload');
    return join(this.root, '.multipart', storeUploadId);
  }

  private url(baseUrl: string, key: string, grant: UrlGrant, extra?: URLSearchParams): string {
    const q = extra ? `${extra.toString()}&` : '';
    return `${baseUrl}${LOCAL_OBJECTS_PATH}/${key}?${q}${signGrant(this.urlKey, grant)}`;
  }

  private expiry(expiresIn: number): number {
    return this.nowSeconds() + expiresIn;
  }

  async presignPut(baseUrl: string, key: string, opts: PutGrantOptions): Promise<string> {
    this.objectPath(key);
    return this.url(baseUrl, key, { method: 'PUT', key, expires: this.expiry(opts.expiresIn), length: opts.length, checksum: opts.checksum });
  }

  async presignGet(baseUrl: string, key: string, expiresIn: number): Promise<string> {
    this.objectPath(key);
    return this.url(baseUrl, key, { method: 'GET', key, expires: this.expiry(expiresIn) });
  }

  async head(key: string): Promise<{ size: number } | undefined> {
    try {
      const st = await stat(this.objectPath(key));
      return st.isFile() ? { size: st.size } : undefined;
    } catch {
      return undefined;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.objectPath(key), { force: true });
  }

  async createMultipart(key: string): Promise<string> {
    this.objectPath(key);
    const id = randomUUID();
    await mkdir(this.uploadDir(id), { recursive: true, mode: 0o700 });
    // Parts are written in place into one file at their offsets, so completing is a rename, not a copy.
    await writeFile(join(this.uploadDir(id), DATA_FILE), '', { flag: 'wx', mode: 0o600 });
    return id;
  }

  async presignPart(baseUrl: string, key: string, storeUploadId: string, partNumber: number, opts: PutGrantOptions): Promise<string> {
    this.objectPath(key);
    const offset = opts.offset ?? 0;
    const extra = new URLSearchParams({ partNumber: String(partNumber), uploadId: storeUploadId, offset: String(offset) });
    const grant: UrlGrant = { method: 'PUT', key: partGrantKey(key, storeUploadId, partNumber, offset), expires: this.expiry(opts.expiresIn), length: opts.length, checksum: opts.checksum };
    return this.url(baseUrl, key, grant, extra);
  }

  async listParts(_key: string, storeUploadId: string): Promise<StoredPart[]> {
    let names: string[];
    try {
      names = await readdir(this.uploadDir(storeUploadId));
    } catch {
      return [];
    }
    const parts: StoredPart[] = [];
    for (const name of names) {
      const m = MARKER.exec(name);
      if (m) parts.push({ partNumber: Number(m[1]), size: Number(m[3]), etag: `"${m[4]}"` });
    }
    return parts.sort((a, b) => a.partNumber - b.partNumber);
  }

  async completeMultipart(key: string, storeUploadId: string, parts: { partNumber: number; etag: string }[]): Promise<void> {
    const dir = this.uploadDir(storeUploadId);
    if (this.completing.has(storeUploadId)) throw new ObjectStoreError(409, 'this multipart upload is already being completed');
    for (const slot of this.writing) {
      if (slot.startsWith(`${storeUploadId}/`)) throw new ObjectStoreError(409, `part ${slot.slice(storeUploadId.length + 1)} is still being uploaded; complete after it finishes`);
    }
    this.completing.add(storeUploadId);
    try {
      // Instances sharing the data dir: their part writes are invisible to the sets above.
      if (!(await takeGuard(join(dir, COMPLETING)))) throw new ObjectStoreError(409, 'this multipart upload is already being completed');
      try {
        const writing = (await readdir(dir)).filter((n) => n.startsWith('.writing-'));
        for (const name of writing) {
          if (await guardHeld(join(dir, name))) throw new ObjectStoreError(409, `part ${name.slice('.writing-'.length)} is still being uploaded; complete after it finishes`);
        }
        await this.assemble(key, storeUploadId, dir, parts);
      } finally {
        // Gone with the directory after assembly; released here when completion was refused.
        await rm(join(dir, COMPLETING), { force: true });
      }
    } finally {
      this.completing.delete(storeUploadId);
    }
  }

  private async assemble(key: string, storeUploadId: string, dir: string, parts: { partNumber: number; etag: string }[]): Promise<void> {
    const stored = new Map((await this.listParts(key, storeUploadId)).map((p) => [p.partNumber, p]));
    let total = 0;
    for (const p of parts) {
      const have = stored.get(p.partNumber);
      if (!have || unquote(have.etag) !== unquote(p.etag)) throw new ObjectStoreError(409, `part ${p.partNumber} is not stored with ETag ${p.etag}`);
      total += have.size;
    }
    const data = join(dir, DATA_FILE);
    // A longer file would mean a part written at the wrong offset; the geometry rules that out, truncate guards it.
    await truncate(data, total);
    const dest = this.objectPath(key);
    await mkdir(dirname(dest), { recursive: true, mode: 0o700 });
    await rename(data, dest);
    await rm(dir, { recursive: true, force: true });
  }

  async abortMultipart(_key: string, storeUploadId: string): Promise<void> {
    await rm(this.uploadDir(storeUploadId), { recursive: true, force: true });
  }

  async promote(from: string, to: string): Promise<void> {
    const src = this.objectPath(from);
    const dest = this.objectPath(to);
    // A hard link: no copy, and a later PUT to `from` renames a new file over that name only.
    await rm(dest, { force: true });
    await mkdir(dirname(dest), { recursive: true, mode: 0o700 });
    try {
      await link(src, dest);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new ObjectStoreError(409, 'no object was uploaded');
      throw err;
    }
  }

  async close(): Promise<void> {}

  /** Awaited after a part is stored (before the PUT is answered), so whoever bills parts counts it at once. */
  onPartStored?: (storeUploadId: string) => Promise<void>;

  /**
   * Serves a signed PUT (a whole object, or a part when `partNumber`, `uploadId` and `offset` are
   * in the query): checks the grant, the exact Content-Length and the checksum while streaming
   * to disk. A whole object goes to a temporary file moved into place only when every check
   * passed; a part is written at its offset and counts as stored only once its marker exists.
   * Returns the ETag.
   */
  async acceptPut(req: LocalPutRequest): Promise<string> {
    const { partNumber, uploadId, offset } = req.query;
    const isPart = partNumber !== undefined || uploadId !== undefined;
    if (isPart && (!uploadId || !/^[1-9]\d{0,4}$/.test(partNumber ?? '') || !/^\d{1,16}$/.test(offset ?? ''))) throw new ObjectStoreError(400, 'malformed partNumber, uploadId or offset');
    const grantKey = isPart ? partGrantKey(req.key, uploadId!, Number(partNumber), Number(offset)) : req.key;
    const check = verifyGrant(this.urlKey, 'PUT', grantKey, req.query, this.nowSeconds());
    if (!check.ok) throw new ObjectStoreError(check.status, check.reason);
    const { grant } = check;
    const lengthHeader = header(req.headers, 'content-length');
    if (lengthHeader === undefined) throw new ObjectStoreError(411, 'Content-Length is required');
    const length = Number(lengthHeader);
    if (grant.length !== undefined && length !== grant.length) throw new ObjectStoreError(403, `Content-Length ${length} does not match the signed length ${grant.length}`);
    const given = header(req.headers, CHECKSUM_HEADER);
    if (grant.checksum !== undefined && given !== grant.checksum) throw new ObjectStoreError(403, `the ${CHECKSUM_HEADER} header does not match the signed checksum`);
    const expected = given ?? grant.checksum;
    return isPart ? this.putPart(req, uploadId!, Number(partNumber), Number(offset), length, expected) : this.putObject(req, length, expected);
  }

  private async putObject(req: LocalPutRequest, length: number, expected: string | undefined): Promise<string> {
    const dest = this.objectPath(req.key);
    const tmp = join(this.root, '.tmp', randomUUID());
    try {
      const etag = await receive(req.body, createWriteStream(tmp, { flags: 'wx', mode: 0o600 }), length, expected);
      await mkdir(dirname(dest), { recursive: true, mode: 0o700 });
      await rename(tmp, dest);
      return etag;
    } finally {
      await rm(tmp, { force: true });
    }
  }

  private async putPart(req: LocalPutRequest, uploadId: string, n: number, offset: number, length: number, expected: string | undefined): Promise<string> {
    const dir = this.uploadDir(uploadId);
    const slot = `${uploadId}/${n}`;
    // Two writers of one part would interleave bytes in place.
    if (this.writing.has(slot)) throw new ObjectStoreError(409, `part ${n} is being uploaded by another request`);
    if (this.completing.has(uploadId)) throw new ObjectStoreError(409, 'this multipart upload is being completed; its parts can no longer change');
    this.writing.add(slot);
    let guarded = false;
    try {
      // Across instances sharing the data dir: the part's own guard, then no completion under way.
      try {
        guarded = await takeGuard(join(dir, writingGuard(n)));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new ObjectStoreError(404, 'no such multipart upload (completed or aborted)');
        throw err;
      }
      if (!guarded) throw new ObjectStoreError(409, `part ${n} is being uploaded by another request`);
      if (await guardHeld(join(dir, COMPLETING))) throw new ObjectStoreError(409, 'this multipart upload is being completed; its parts can no longer change');
      let names: string[];
      try {
        names = await readdir(dir);
      } catch {
        throw new ObjectStoreError(404, 'no such multipart upload (completed or aborted)');
      }
      // Writing in place invalidates the part's earlier upload until this one is verified.
      for (const name of names) if (MARKER.exec(name)?.[1] === String(n)) await rm(join(dir, name), { force: true });
      // A missing file (aborted meanwhile) fails inside receive() as ENOENT: 404.
      const etag = await receive(req.body, createWriteStream(join(dir, DATA_FILE), { flags: 'r+', start: offset }), length, expected);
      await writeFile(join(dir, `${n}-${offset}-${length}-${etag.slice(1, -1)}`), '', { mode: 0o600 }).catch(() => {
        throw new ObjectStoreError(404, 'no such multipart upload (completed or aborted)');
      });
      await this.onPartStored?.(uploadId);
      return etag;
    } finally {
      if (guarded) await rm(join(dir, writingGuard(n)), { force: true });
      this.writing.delete(slot);
    }
  }

  /** Serves a signed GET: the object's size and a stream of its bytes. */
  async openGet(key: string, query: Record<string, string | undefined>): Promise<{ size: number; body: Readable }> {
    const check = verifyGrant(this.urlKey, 'GET', key, query, this.nowSeconds());
    if (!check.ok) throw new ObjectStoreError(check.status, check.reason);
    const file = this.objectPath(key);
    const st = await stat(file).catch(() => undefined);
    if (!st?.isFile()) throw new ObjectStoreError(404, 'no such object');
    return { size: st.size, body: createReadStream(file) };
  }
}

/** Who holds a guard: this host and process, since when. */
function guardText(): string {
  return JSON.stringify({ host: hostname(), pid: process.pid, at: Date.now() });
}

/**
 * Creates the guard file exclusively; false when another live holder has it. A guard left by a
 * process that died (on this host), or older than GUARD_ABANDONED_MS, is taken over.
 */
async function takeGuard(file: string): Promise<boolean> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(file, guardText(), { flag: 'wx', mode: 0o600 });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (await guardHeld(file)) return false;
      await rm(file, { force: true });
    }
  }
  return false;
}

/** Whether a guard file exists and its holder may still be at work. */
async function guardHeld(file: string): Promise<boolean> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return false;
  }
  let holder: { host?: unknown; pid?: unknown; at?: unknown };
  try {
    holder = JSON.parse(text) as typeof holder;
  } catch {
    // Created and not yet written this instant: held, unless its writer died right there.
    const st = await stat(file).catch(() => undefined);
    return st !== undefined && Date.now() - st.mtimeMs < 60_000;
  }
  if (typeof holder.at === 'number' && Date.now() - holder.at > GUARD_ABANDONED_MS) return false;
  if (holder.host === hostname() && typeof holder.pid === 'number') {
    try {
      process.kill(holder.pid, 0);
    } catch (err) {
      return (err as NodeJS.ErrnoException).code !== 'ESRCH';
    }
  }
  return true;
}

function partGrantKey(key: string, uploadId: string, partNumber: number, offset: number): string {
  return `${key}?uploadId=${uploadId}&partNumber=${partNumber}&offset=${offset}`;
}

/** Streams `body` into `out`, counting and (when a checksum is expected) hashing; returns the ETag. */
async function receive(body: Readable, out: NodeJS.WritableStream, length: number, expected: string | undefined): Promise<string> {
  const hash = expected !== undefined ? createHash('sha256') : undefined;
  let received = 0;
  try {
    await pipeline(
      body,
      async function* (source: AsyncIterable<Buffer>) {
        for await (const chunk of source) {
          received += chunk.length;
          hash?.update(chunk);
          yield chunk;
        }
      },
      out,
    );
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new ObjectStoreError(404, 'no such multipart upload (completed or aborted)');
    throw new ObjectStoreError(400, `upload interrupted: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (received !== length) throw new ObjectStoreError(400, `received ${received} bytes, Content-Length said ${length}`);
  if (!hash) return `"${randomBytes(16).toString('hex')}"`;
  const digest = hash.digest();
  if (digest.toString('base64') !== expected) throw new ObjectStoreError(400, 'BadDigest: the body does not match its SHA-256 checksum');
  return `"${digest.toString('hex').slice(0, 32)}"`;
}

function unquote(etag: string): string {
  const e = etag.replace(/^"|"$/g, '');
  if (!/^[0-9a-f]{1,64}$/.test(e)) throw new ObjectStoreError(400, 'malformed ETag');
  return e;
}
