// The local object store: completing a multipart upload and writing one of its parts exclude
// each other, so no part write can land in an object after it was assembled; also between
// instances sharing one data dir (two stores here, each with its own in-process state).
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalObjectStore } from '../../../src/sync-objects/local.js';
import { tempDir } from '../../helpers/tmp.js';

const KEY = 'app/user/blob.upload';
let dir: ReturnType<typeof tempDir>;
afterEach(() => dir?.remove());

async function partQuery(store: LocalObjectStore, id: string, n: number, length: number, offset: number): Promise<Record<string, string>> {
  const url = new URL(await store.presignPart('http://127.0.0.1', KEY, id, n, { length, expiresIn: 600, offset }));
  return Object.fromEntries(url.searchParams);
}

function put(store: LocalObjectStore, query: Record<string, string>, body: Readable, length: number): Promise<string> {
  return store.acceptPut({ key: KEY, query, headers: { 'content-length': String(length) }, body });
}

describe('local multipart completion', () => {
  it('a part PUT that arrives while completion runs is refused (409) and the object holds the listed parts only', async () => {
    dir = tempDir();
    const store = new LocalObjectStore(dir.path, randomBytes(32), () => Math.floor(Date.now() / 1000));
    const id = await store.createMultipart(KEY);
    const q = await partQuery(store, id, 1, 4, 0);
    const etag = await put(store, q, Readable.from([Buffer.from('abcd')]), 4);
    const completing = store.completeMultipart(KEY, id, [{ partNumber: 1, etag }]);
    const late = put(store, q, Readable.from([Buffer.from('WXYZ')]), 4);
    await expect(late).rejects.toMatchObject({ status: 409 });
    await completing;
    expect(readFileSync(join(dir.path, 'objects', 'blobs', ...KEY.split('/')), 'utf8')).toBe('abcd');
  });

  it('completion while a part is still being uploaded is refused (409); it succeeds once the part is stored', async () => {
    dir = tempDir();
    const store = new LocalObjectStore(dir.path, randomBytes(32), () => Math.floor(Date.now() / 1000));
    const id = await store.createMultipart(KEY);
    const q1 = await partQuery(store, id, 1, 4, 0);
    const etag1 = await put(store, q1, Readable.from([Buffer.from('abcd')]), 4);
    const q2 = await partQuery(store, id, 2, 4, 4);
    const slow = new PassThrough();
    const inFlight = put(store, q2, slow, 4);
    slow.write('ef');
    await new Promise((r) => setTimeout(r, 20));
    await expect(store.completeMultipart(KEY, id, [{ partNumber: 1, etag: etag1 }])).rejects.toMatchObject({ status: 409 });
    slow.end('gh');
    const etag2 = await inFlight;
    await store.completeMultipart(KEY, id, [
      { partNumber: 1, etag: etag1 },
      { partNumber: 2, etag: etag2 },
    ]);
    expect(readFileSync(join(dir.path, 'objects', 'blobs', ...KEY.split('/')), 'utf8')).toBe('abcdefgh');
  });
});

describe('local multipart completion across instances sharing the data dir', () => {
  const pair = (): [LocalObjectStore, LocalObjectStore] => {
    dir = tempDir();
    const urlKey = randomBytes(32);
    const now = (): number => Math.floor(Date.now() / 1000);
    return [new LocalObjectStore(dir.path, urlKey, now), new LocalObjectStore(dir.path, urlKey, now)];
  };

  it('completion on one instance while a part is written through another is refused (409); it succeeds afterwards', async () => {
    const [a, b] = pair();
    const id = await a.createMultipart(KEY);
    const q1 = await partQuery(a, id, 1, 4, 0);
    const etag1 = await put(a, q1, Readable.from([Buffer.from('abcd')]), 4);
    const q2 = await partQuery(a, id, 2, 4, 4);
    const slow = new PassThrough();
    const inFlight = put(a, q2, slow, 4);
    slow.write('ef');
    await new Promise((r) => setTimeout(r, 20));
    await expect(b.completeMultipart(KEY, id, [{ partNumber: 1, etag: etag1 }])).rejects.toMatchObject({ status: 409 });
    // The same part through the other instance meanwhile would interleave bytes: refused too.
    await expect(put(b, q2, Readable.from([Buffer.from('XY')]), 4)).rejects.toMatchObject({ status: 409 });
    slow.end('gh');
    const etag2 = await inFlight;
    await b.completeMultipart(KEY, id, [
      { partNumber: 1, etag: etag1 },
      { partNumber: 2, etag: etag2 },
    ]);
    expect(readFileSync(join(dir.path, 'objects', 'blobs', ...KEY.split('/')), 'utf8')).toBe('abcdefgh');
  });

  it('a part PUT while another instance completes is refused; a guard left by a dead process is taken over', async () => {
    const [a, b] = pair();
    const id = await a.createMultipart(KEY);
    const q = await partQuery(a, id, 1, 4, 0);
    const guard = join(dir.path, 'objects', '.multipart', id, '.completing');
    // Another instance (a live process: this one) is completing.
    writeFileSync(guard, JSON.stringify({ host: 'elsewhere', pid: process.pid, at: Date.now() }));
    await expect(put(b, q, Readable.from([Buffer.from('abcd')]), 4)).rejects.toMatchObject({ status: 409 });
    await expect(a.completeMultipart(KEY, id, [])).rejects.toMatchObject({ status: 409 });
    // Abandoned: its holder is gone (the other host's guard is days old).
    writeFileSync(guard, JSON.stringify({ host: 'elsewhere', pid: 1, at: Date.now() - 3 * 86400_000 }));
    const etag = await put(b, q, Readable.from([Buffer.from('abcd')]), 4);
    await a.completeMultipart(KEY, id, [{ partNumber: 1, etag }]);
    expect(readFileSync(join(dir.path, 'objects', 'blobs', ...KEY.split('/')), 'utf8')).toBe('abcd');
  });
});
