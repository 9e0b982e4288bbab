// Spec marketplace-sync, "Multipart blob upload" states and blob rules 5-7: deterministic part
// geometry, windows of exact-length part URLs with checksums bound in (a corrupted part is
// refused at write time), complete, abort, out-of-order calls, and abandoned sessions that bill
// until aborted or reaped by the cron job (idle time driven by the server's ManualClock).
import { afterEach, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../../helpers/wait.js';
import { blobEnv, get, put, randomHash, sha256b64, type BlobEnv } from './blob-helpers.js';

const MIB = 1024 * 1024;

interface Start {
  upload_id: string;
  part_size: number;
  part_count: number;
  already_exists: boolean;
}
interface Parts {
  parts: { part_number: number; content_length: number; url: string }[];
  expires_in: number;
}

describe('sync multipart uploads', () => {
  let env: BlobEnv;
  afterEach(async () => env?.srv.close());

  const call = <T,>(path: string, body: unknown) => env.srv.call<T & { error?: string }>('POST', `/api/v1/sync/blobs/multipart/${path}`, { token: env.token, body });
  const used = async () => (await env.srv.call<{ storage_used_bytes: number }>('GET', '/api/v1/sync/status', { token: env.token })).body.storage_used_bytes;

  it('uploads three parts through signed URLs with checksums, refuses a corrupted part, completes, confirms and downloads', async () => {
    env = await blobEnv();
    const blob = randomBytes(2 * 8 * MIB + 1000);
    const hash = randomHash();
    const start = await call<Start>('start', { hash, size_bytes: blob.length });
    expect(start.status).toBe(200);
    expect(start.body).toMatchObject({ part_size: 8 * MIB, part_count: 3, already_exists: false });
    const { upload_id } = start.body;
    const slices = [blob.subarray(0, 8 * MIB), blob.subarray(8 * MIB, 16 * MIB), blob.subarray(16 * MIB)];
    const checksums = slices.map(sha256b64);
    const win = await call<Parts>('parts', { hash, upload_id, size_bytes: blob.length, first_part: 1, count: 3, checksums });
    expect(win.status).toBe(200);
    expect(win.body.expires_in).toBeGreaterThan(0);
    expect(win.body.parts.map((p) => [p.part_number, p.content_length])).toEqual([
      [1, 8 * MIB],
      [2, 8 * MIB],
      [3, 1000],
    ]);

    // A corrupted part 2: same length, the signed checksum sent, the body does not match it.
    const corrupted = Buffer.from(slices[1]!);
    corrupted[12345] ^= 0xff;
    const bad = await put(win.body.parts[1]!.url, corrupted, { 'x-amz-checksum-sha256': checksums[1]! });
    expect(bad.status).toBe(400);
    expect(bad.error).toMatch(/BadDigest/);
    // Claiming the corrupted body's own checksum does not pass either: the URL is bound to the signed one.
    const lying = await put(win.body.parts[1]!.url, corrupted, { 'x-amz-checksum-sha256': sha256b64(corrupted) });
    expect(lying.status).toBe(403);

    const etags: { part_number: number; etag: string }[] = [];
    for (const [i, p] of win.body.parts.entries()) {
      const r = await put(p.url, slices[i]!, { 'x-amz-checksum-sha256': checksums[i]! });
      expect(r.status).toBe(200);
      etags.push({ part_number: p.part_number, etag: r.etag! });
    }
    // Parts bill while the session is open.
    expect(await used()).toBe(blob.length);
    expect((await call('complete', { hash, upload_id, parts: etags })).status).toBe(204);
    // A retried complete is harmless.
    expect((await call('complete', { hash, upload_id, parts: etags })).status).toBe(204);
    expect((await env.srv.call('POST', '/api/v1/sync/blobs/confirm', { token: env.token, body: { hash } })).status).toBe(204);
    expect(await used()).toBe(blob.length);

    const d = await env.srv.call<{ download_url: string }>('POST', '/api/v1/sync/blobs/download', { token: env.token, body: { hash } });
    const g = await get(d.body.download_url);
    expect(g.body.equals(blob)).toBe(true);
    // The parts are gone once assembled.
    expect(readdirSync(join(env.srv.dataDir, 'objects', '.multipart'))).toEqual([]);
    // Starting again for a recorded blob opens no session.
    expect((await call<Start>('start', { hash, size_bytes: blob.length })).body).toEqual({ upload_id: '', part_size: 0, part_count: 0, already_exists: true });
  });

  it('out-of-order calls are clear 4xx answers, and abort stops the billing of stored parts', async () => {
    env = await blobEnv();
    const size = 8 * MIB + 10;
    const hash = randomHash();
    const { upload_id } = (await call<Start>('start', { hash, size_bytes: size })).body;
    const p1 = randomBytes(8 * MIB);

    const wrongSize = await call('parts', { hash, upload_id, size_bytes: size + 1, first_part: 1, count: 1 });
    expect(wrongSize.status).toBe(409);
    expect(wrongSize.body.error).toMatch(/differs from the 8388618 given at start/);
    expect((await call('parts', { hash, upload_id, size_bytes: size, first_part: 2, count: 2 })).status).toBe(400);
    expect((await call('parts', { hash, upload_id, size_bytes: size, first_part: 0, count: 1 })).status).toBe(400);
    const fewer = await call('parts', { hash, upload_id, size_bytes: size, first_part: 1, count: 2, checksums: [sha256b64(p1)] });
    expect(fewer.status).toBe(400);
    expect(fewer.body.error).toMatch(/checksums has 1 entries for 2 parts/);
    expect((await call('parts', { hash: randomHash(), upload_id, size_bytes: size, first_part: 1, count: 1 })).status).toBe(404);
    expect((await env.srv.call('POST', '/api/v1/sync/blobs/multipart/parts', { token: env.otherToken, body: { hash, upload_id, size_bytes: size, first_part: 1, count: 1 } })).status).toBe(404);

    const win = await call<Parts>('parts', { hash, upload_id, size_bytes: size, first_part: 1, count: 2 });
    const r1 = await put(win.body.parts[0]!.url, p1);
    expect(r1.status).toBe(200);
    expect(await used()).toBe(8 * MIB);

    const early = await call('complete', { hash, upload_id, parts: [{ part_number: 1, etag: r1.etag! }] });
    expect(early.status).toBe(409);
    expect(early.body.error).toMatch(/1 of 2 parts are not uploaded or not listed \(2\)/);
    expect((await env.srv.call('POST', '/api/v1/sync/blobs/confirm', { token: env.token, body: { hash } })).status).toBe(409);

    expect((await call('abort', { hash, upload_id })).status).toBe(204);
    expect(await used()).toBe(0);
    expect((await call('abort', { hash, upload_id })).status).toBe(204);
    const after = await call('parts', { hash, upload_id, size_bytes: size, first_part: 2, count: 1 });
    expect(after.status).toBe(410);
    expect(after.body.error).toMatch(/aborted/);
    expect((await call('complete', { hash, upload_id, parts: [] })).status).toBe(410);
    // A URL issued before the abort no longer stores anything.
    expect((await put(win.body.parts[1]!.url, randomBytes(10))).status).toBe(404);
    expect((await call('abort', { hash, upload_id: '00000000-0000-4000-8000-000000000000' })).status).toBe(404);
  });

  it('an abandoned session bills its parts until the cron reaper aborts it after the idle time', async () => {
    env = await blobEnv({ flags: { syncUploadIdleHours: 0.5, syncReaperSchedule: '* * * * * *' } });
    const size = 8 * MIB + 10;
    const hash = randomHash();
    const { upload_id } = (await call<Start>('start', { hash, size_bytes: size })).body;
    const win = await call<Parts>('parts', { hash, upload_id, size_bytes: size, first_part: 2, count: 1 });
    expect((await put(win.body.parts[0]!.url, randomBytes(10))).status).toBe(200);
    expect(await used()).toBe(10);

    // Idle (30 minutes allowed here, 24 hours by default), but not for long enough: the reaper (every second) leaves it alone.
    env.srv.clock.advance(20 * 60 * 1000);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await call('parts', { hash, upload_id, size_bytes: size, first_part: 1, count: 1 })).status).toBe(200);
    expect(await used()).toBe(10);

    env.srv.clock.advance(30 * 60 * 1000 + 1000);
    // Polling the status (a parts call would be activity and keep the session alive).
    // The session is marked reaped before its parts are deleted: wait for both.
    const partsDir = join(env.srv.dataDir, 'objects', '.multipart');
    await waitFor(async () => (await used()) === 0 && readdirSync(partsDir).length === 0, 'the reaper to reap the idle session');
    const gone = await call('parts', { hash, upload_id, size_bytes: size, first_part: 1, count: 1 });
    expect(gone.status).toBe(410);
    expect(gone.body.error).toMatch(/idle too long and has been reaped/);
    expect(existsSync(partsDir)).toBe(true);
  });
});
