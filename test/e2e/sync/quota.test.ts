// Issue 11 defects 1 and 2, the storage cap under hostile use: a confirmed blob's bytes cannot be
// changed through any signed URL; pending uploads (one-shot grants, open multipart sessions)
// reserve their size when signed, even under concurrency, until confirmed or expired; changelog
// ciphertext counts toward the cap, and a push over it stores nothing.
import { afterEach, describe, expect, it } from 'vitest';
import { randomBytes, randomUUID } from 'node:crypto';
import { waitFor } from '../../helpers/wait.js';
import { blobEnv, get, put, randomHash, type BlobEnv } from './blob-helpers.js';

let env: BlobEnv;
afterEach(async () => env?.srv.close());

type Url = { upload_url: string; error: string };
const upload = (hash: string, size: number) => env.srv.call<Url>('POST', '/api/v1/sync/blobs/upload', { token: env.token, body: { hash, size_bytes: size } });
const confirm = (hash: string) => env.srv.call<{ error: string }>('POST', '/api/v1/sync/blobs/confirm', { token: env.token, body: { hash } });
const status = async () => (await env.srv.call<{ storage_used_bytes: number; storage_cap_bytes: number }>('GET', '/api/v1/sync/status', { token: env.token })).body;

describe('a confirmed blob is immutable (local object store)', () => {
  it('asking twice for one hash (1 byte, then 900,000): the second URL cannot change what the confirmed blob serves', async () => {
    env = await blobEnv({ pricing: { free_bytes: 1_000_000 } });
    const hash = randomHash();
    const first = await upload(hash, 1);
    const second = await upload(hash, 900_000);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect((await put(first.body.upload_url, Buffer.from('a'))).status).toBe(200);
    expect((await confirm(hash)).status).toBe(204);
    // The second URL still accepts its bytes, but only into its own staging object.
    await put(second.body.upload_url, randomBytes(900_000));
    expect((await confirm(hash)).status).toBe(204);
    const d = await env.srv.call<{ download_url: string; size_bytes: number }>('POST', '/api/v1/sync/blobs/download', { token: env.token, body: { hash } });
    expect(d.body.size_bytes).toBe(1);
    const served = await get(d.body.download_url);
    expect(served.body.equals(Buffer.from('a'))).toBe(true);
    // And the first URL, still valid, cannot rewrite it either.
    await put(first.body.upload_url, Buffer.from('b'));
    expect((await get(d.body.download_url)).body.equals(Buffer.from('a'))).toBe(true);
    expect((await status()).storage_used_bytes).toBe(1);
  });
});

describe('pending uploads count against the cap when a URL is signed', () => {
  it('unconfirmed one-shot URLs reserve their size: the fifth 1000-byte URL under a 4096-byte cap is refused', async () => {
    env = await blobEnv({ pricing: { free_bytes: 4096 } });
    for (let i = 0; i < 4; i++) expect((await upload(randomHash(), 1000)).status).toBe(200);
    const fifth = await upload(randomHash(), 1000);
    expect(fifth.status).toBe(413);
    expect(fifth.body.error).toMatch(/4000 of them reserved by pending uploads.*cap of 4096 bytes/);
  });

  it('30 concurrent requests never reserve past the cap', async () => {
    env = await blobEnv({ pricing: { free_bytes: 4096 } });
    const answers = await Promise.all(Array.from({ length: 30 }, () => upload(randomHash(), 1000)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(4);
    expect(answers.filter((a) => a.status === 413)).toHaveLength(26);
  });

  it('an open multipart session reserves its full size before any part is stored', async () => {
    env = await blobEnv({ pricing: { free_bytes: 10_000 } });
    const s = await env.srv.call('POST', '/api/v1/sync/blobs/multipart/start', { token: env.token, body: { hash: randomHash(), size_bytes: 8000 } });
    expect(s.status).toBe(200);
    expect((await upload(randomHash(), 3000)).status).toBe(413);
    expect((await env.srv.call('POST', '/api/v1/sync/blobs/multipart/start', { token: env.token, body: { hash: randomHash(), size_bytes: 3000 } })).status).toBe(413);
  });

  it('one blob has at most 8 pending uploads; an expired, unused grant stops counting once the reaper settles it', async () => {
    env = await blobEnv({ pricing: { free_bytes: 4096 }, flags: { syncUrlTtlSeconds: 60, syncReaperSchedule: '* * * * * *' } });
    const hash = randomHash();
    for (let i = 0; i < 8; i++) expect((await upload(hash, 1)).status).toBe(200);
    const ninth = await upload(hash, 1);
    expect(ninth.status).toBe(409);
    expect(ninth.body.error).toMatch(/already has 8 pending uploads/);
    const big = randomHash();
    expect((await upload(big, 4000)).status).toBe(200);
    expect((await upload(randomHash(), 4000)).status).toBe(413);
    // Past the URL's expiry and the grace for PUTs still arriving: nothing was stored, so the reservations end.
    env.srv.clock.advance(60_000 + 15 * 60_000 + 1000);
    await waitFor(async () => (await upload(randomHash(), 4000)).status === 200, 'the reaper to release expired grants');
  });
});

describe('changelog bytes count toward the cap', () => {
  async function device(): Promise<string> {
    expect((await env.srv.call('PUT', '/api/v1/sync/keys', { token: env.token, body: { encrypted_key: 'ENVELOPE-1', expected_key_version: 0 } })).status).toBe(204);
    return (await env.srv.call<{ id: string }>('POST', '/api/v1/sync/devices', { token: env.token, body: { name: 'laptop' } })).body.id;
  }
  const entry = (data: string) => ({ table: 't', op: 'upsert', row_id: 'r1', timestamp: '2026-03-01T12:00:00.000Z', data });
  const push = (deviceId: string, data: string) =>
    env.srv.call<{ cursor: number; error: string }>('POST', '/api/v1/sync/push', { token: env.token, body: { device_id: deviceId, batch_id: randomUUID(), key_id: 1, entries: [entry(data)] } });

  it('pushes fill the cap; the one that would pass it gets 413 naming the cap and stores nothing', async () => {
    env = await blobEnv({ pricing: { free_bytes: 1000 } });
    const d = await device();
    const ciphertext = 'x'.repeat(398); // 400 bytes as JSON, plus table, op, row_id and timestamp
    expect((await push(d, ciphertext)).status).toBe(200);
    expect((await push(d, ciphertext)).status).toBe(200);
    const used = (await status()).storage_used_bytes;
    expect(used).toBe(2 * (400 + 1 + 6 + 2 + 24));
    const third = await push(d, ciphertext);
    expect(third.status).toBe(413);
    expect(third.body.error).toMatch(/storage cap exceeded: 866 bytes used \+ 433 for the 1 changelog entries of this push would pass the cap of 1000 bytes/);
    const pulled = await env.srv.call<{ entries: unknown[]; cursor: number }>('POST', '/api/v1/sync/pull', { token: env.token, body: { cursor: 0 } });
    expect(pulled.body.entries).toHaveLength(2);
    expect(pulled.body.cursor).toBe(2);
    expect((await status()).storage_used_bytes).toBe(used);
    // Changelog bytes leave less room for blobs too.
    expect((await upload(randomHash(), 200)).status).toBe(413);
    expect((await upload(randomHash(), 100)).status).toBe(200);
  });
});
