// The local object store: completing a multipart upload and writing one of its parts exclude
// each other, so no part write can land in an object after it was assembled.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalObjectStore } from '../../src/sync-objects/local.js';
import { tempDir } from '../helpers/tmp.js';

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
