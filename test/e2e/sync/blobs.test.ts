// Spec marketplace-sync, blob rules 2-3 and endpoint rules 1-2: one-shot upload through a real
// pre-signed PUT, confirm (authoritative size, idempotent, missing object, storage cap), download.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { blobEnv, get, put, randomHash, sha256hex, type BlobEnv } from './blob-helpers.js';

describe('sync one-shot blobs', () => {
  let env: BlobEnv;
  beforeEach(async () => {
    env = await blobEnv({ pricing: { free_bytes: 4096 }, flags: { syncUrlTtlSeconds: 60 } });
  });
  afterEach(async () => env.srv.close());

  async function uploadUrl(hash: string, size: number, token = env.token) {
    return env.srv.call<{ upload_url: string; already_exists: boolean; expires_in: number }>('POST', '/api/v1/sync/blobs/upload', { token, body: { hash, size_bytes: size } });
  }

  it('uploads through the signed URL, confirms idempotently, short-circuits the same hash and downloads the bytes', async () => {
    const body = randomBytes(1000);
    const hash = sha256hex(randomBytes(8));
    const u = await uploadUrl(hash, body.length);
    expect(u.status).toBe(200);
    expect(u.body.already_exists).toBe(false);
    expect(u.body.expires_in).toBeGreaterThan(0);
    expect(u.body.upload_url).toMatch(/X-Mkt-Signature=/);
    const p = await put(u.body.upload_url, body);
    expect(p.status).toBe(200);
    expect(p.etag).toMatch(/^".+"$/);

    expect((await env.srv.call('POST', '/api/v1/sync/blobs/confirm', { token: env.token, body: { hash } })).status).toBe(204);
    // Rule 2: repeating confirm succeeds without a duplicate.
    expect((await env.srv.call('POST', '/api/v1/sync/blobs/confirm', { token: env.token, body: { hash } })).status).toBe(204);
    const again = await uploadUrl(hash, body.length);
    expect(again.body).toMatchObject({ already_exists: true, upload_url: '' });

    const d = await env.srv.call<{ download_url: string; size_bytes: number }>('POST', '/api/v1/sync/blobs/download', { token: env.token, body: { hash } });
    expect(d.status).toBe(200);
    expect(d.body.size_bytes).toBe(1000);
    const g = await get(d.body.download_url);
    expect(g.status).toBe(200);
    expect(g.body.equals(body)).toBe(true);

    const status = await env.srv.call<{ blob_count: number; storage_used_bytes: number }>('GET', '/api/v1/sync/status', { token: env.token });
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ blob_count: 1, storage_used_bytes: 1000 });
  });

  it('a PUT without a Content-Type (curl -T) is stored too', async () => {
    const hash = randomHash();
    const body = randomBytes(300);
    const { upload_url } = (await uploadUrl(hash, 300)).body;
    const res = await fetch(upload_url, { method: 'PUT', body });
    expect(res.status).toBe(200);
    expect((await env.srv.call('POST', '/api/v1/sync/blobs/confirm', { token: env.token, body: { hash } })).status).toBe(204);
  });

  it('blobs are unique per (app, user, hash): another user uploads the same hash separately', async () => {
    const body = randomBytes(10);
    const hash = randomHash();
    await put((await uploadUrl(hash, 10)).body.upload_url, body);
    expect((await env.srv.call('POST', '/api/v1/sync/blobs/confirm', { token: env.token, body: { hash } })).status).toBe(204);
    const theirs = await uploadUrl(hash, 10, env.otherToken);
    expect(theirs.body.already_exists).toBe(false);
    expect((await env.srv.call('POST', '/api/v1/sync/blobs/download', { token: env.otherToken, body: { hash } })).status).toBe(404);
  });

  it('the signed URL enforces the exact Content-Length, its signature and its expiry', async () => {
    const hash = randomHash();
    const { upload_url } = (await uploadUrl(hash, 100)).body;
    const short = await put(upload_url, randomBytes(99));
    expect(short.status).toBe(403);
    expect(short.error).toMatch(/Content-Length 99 does not match the signed length 100/);
    const tampered = upload_url.replace(/X-Mkt-Length=100/, 'X-Mkt-Length=99');
    expect((await put(tampered, randomBytes(99))).status).toBe(403);
    env.srv.clock.advance(61 * 1000);
    const late = await put(upload_url, randomBytes(100));
    expect(late.status).toBe(403);
    expect(late.error).toMatch(/expired/);
    // Nothing was stored by the refused PUTs.
    expect((await env.srv.call('POST', '/api/v1/sync/blobs/confirm', { token: env.token, body: { hash } })).status).toBe(409);
  });

  it('a checksum header that does not match the body is rejected at write time', async () => {
    const hash = randomHash();
    const body = randomBytes(64);
    const { upload_url } = (await uploadUrl(hash, 64)).body;
    const bad = await put(upload_url, body, { 'x-amz-checksum-sha256': Buffer.alloc(32).toString('base64') });
    expect(bad.status).toBe(400);
    expect(bad.error).toMatch(/BadDigest/);
  });

  it('confirm of a hash never uploaded is a clear 409; download of an unknown blob is 404', async () => {
    const hash = randomHash();
    const c = await env.srv.call<{ error: string }>('POST', '/api/v1/sync/blobs/confirm', { token: env.token, body: { hash } });
    expect(c.status).toBe(409);
    expect(c.body.error).toMatch(/no object was uploaded/);
    const d = await env.srv.call<{ error: string }>('POST', '/api/v1/sync/blobs/download', { token: env.token, body: { hash } });
    expect(d.status).toBe(404);
    expect(d.body.error).toMatch(/not found/);
  });

  it('the storage cap (free allowance here) applies at upload start, counting pending uploads, and at confirm', async () => {
    const over = await uploadUrl(randomHash(), 5000);
    expect(over.status).toBe(413);
    expect((over.body as unknown as { error: string }).error).toMatch(/storage cap exceeded/);
    // Two uploads each fit on their own; the second is refused at signing, as the first reserves its size.
    const [h1, h2] = [randomHash(), randomHash()];
    const u1 = await uploadUrl(h1, 3000);
    expect(u1.status).toBe(200);
    const u2 = await uploadUrl(h2, 3000);
    expect(u2.status).toBe(413);
    expect((u2.body as unknown as { error: string }).error).toMatch(/3000 bytes used \(3000 of them reserved by pending uploads\) \+ 3000 for this upload would pass the cap of 4096/);
    expect((await put(u1.body.upload_url, randomBytes(3000))).status).toBe(200);
    expect((await env.srv.call('POST', '/api/v1/sync/blobs/confirm', { token: env.token, body: { hash: h1 } })).status).toBe(204);
    // Nothing of the refused upload was stored; the recorded blob is served from its own object.
    expect(existsSync(join(env.srv.dataDir, 'objects', 'blobs', env.appId, env.userId))).toBe(true);
    const status = await env.srv.call<{ storage_used_bytes: number }>('GET', '/api/v1/sync/status', { token: env.token });
    expect(status.body.storage_used_bytes).toBe(3000);
  });

  it('every blob route needs a bearer token', async () => {
    for (const path of ['/api/v1/sync/blobs/upload', '/api/v1/sync/blobs/confirm', '/api/v1/sync/blobs/download']) {
      const r = await env.srv.call('POST', path, { body: { hash: randomHash(), size_bytes: 1 } });
      expect(r.status).toBe(401);
    }
  });
});
