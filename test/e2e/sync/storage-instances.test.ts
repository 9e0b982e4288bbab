// Sync storage with several instances on one PostgreSQL database (issue 12): a multipart upload
// whose start, part URLs, completion and confirm go through different instances with s3rver as
// the object store; 30 concurrent upload grants of one user across two instances never pass the
// cap; the upload reaper runs once per period with two instances up.
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabaseUrl } from '../../helpers/pg.js';
import { startListingS3rver, startStorageInstances, type ListingS3, type StorageCluster } from '../../helpers/storage-instances.js';
import { get, put, sha256b64, sha256hex } from './blob-helpers.js';

const MIB = 1024 * 1024;

describe('sync storage across instances on one PostgreSQL database', () => {
  let s3: ListingS3;
  beforeAll(async () => {
    s3 = await startListingS3rver();
  });
  afterAll(async () => {
    await s3.close();
  });

  it('completes a multipart upload whose calls go through different instances (s3 object store)', async () => {
    const cluster: StorageCluster = await startStorageInstances({ databaseUrl: await freshDatabaseUrl(), count: 2, flags: s3.flags });
    try {
      await cluster.addApp('app1', 100 * MIB);
      const token = cluster.token('app1', 'ada');
      const blob = randomBytes(8 * MIB + 1000);
      const hash = sha256hex(blob);
      const [a, b] = cluster.instances as [StorageCluster['instances'][0], StorageCluster['instances'][0]];

      const started = await a.call<{ upload_id: string; part_size: number; part_count: number }>('POST', '/api/v1/sync/blobs/multipart/start', { token, body: { hash, size_bytes: blob.length } });
      expect(started.status).toBe(200);
      expect(started.body.part_count).toBe(2);
      const { upload_id, part_size } = started.body;
      const chunks = [blob.subarray(0, part_size), blob.subarray(part_size)];

      // Part URLs from the other instance, one window each.
      const etags: { part_number: number; etag: string }[] = [];
      for (const [i, chunk] of chunks.entries()) {
        const inst = i === 0 ? b : a;
        const w = await inst.call<{ parts: { part_number: number; url: string; content_length: number }[] }>('POST', '/api/v1/sync/blobs/multipart/parts', {
          token,
          body: { hash, upload_id, size_bytes: blob.length, first_part: i + 1, count: 1, checksums: [sha256b64(chunk)] },
        });
        expect(w.status, JSON.stringify(w.body)).toBe(200);
        expect(w.body.parts[0]!.url.startsWith(s3.endpoint)).toBe(true);
        const r = await put(w.body.parts[0]!.url, chunk, { 'x-amz-checksum-sha256': sha256b64(chunk) });
        expect(r.status).toBe(200);
        etags.push({ part_number: i + 1, etag: r.etag! });
      }
      // Either instance sees the stored parts (they bill from the database).
      expect((await b.call('POST', '/api/v1/sync/blobs/multipart/complete', { token, body: { hash, upload_id, parts: etags } })).status).toBe(204);
      expect((await a.call('POST', '/api/v1/sync/blobs/multipart/complete', { token, body: { hash, upload_id, parts: etags } })).status).toBe(204);
      expect((await a.call('POST', '/api/v1/sync/blobs/confirm', { token, body: { hash } })).status).toBe(204);
      const d = await b.call<{ download_url: string; size_bytes: number }>('POST', '/api/v1/sync/blobs/download', { token, body: { hash } });
      expect(d.status).toBe(200);
      expect(d.body.size_bytes).toBe(blob.length);
      const got = await get(d.body.download_url);
      expect(createHash('sha256').update(got.body).digest('hex')).toBe(hash);
    } finally {
      await cluster.close();
    }
  });

  it('never grants past the cap: 30 concurrent one-shot grants across two instances', async () => {
    const cluster = await startStorageInstances({ databaseUrl: await freshDatabaseUrl(), count: 2, flags: s3.flags });
    try {
      await cluster.addApp('app1', 10_000);
      const token = cluster.token('app1', 'ada');
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) => cluster.next().call('POST', '/api/v1/sync/blobs/upload', { token, body: { hash: sha256hex(Buffer.from(`blob ${i}`)), size_bytes: 1000 } })),
      );
      const statuses = answers.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(10);
      expect(statuses.filter((s) => s === 413)).toHaveLength(20);
      const reserved = await cluster.instances[1]!.sql.value<number>(`SELECT COALESCE(SUM(size_bytes), 0) FROM sync_uploads WHERE app_id = ? AND user_id = ?`, ['app1', 'ada']);
      expect(reserved).toBe(10_000);
    } finally {
      await cluster.close();
    }
  });

  it('runs the reaper once per period with two instances up', async () => {
    // Every second; both instances' timers fire each tick.
    const cluster = await startStorageInstances({ databaseUrl: await freshDatabaseUrl(), count: 2, flags: { ...s3.flags, syncReaperSchedule: '* * * * * *', syncUploadIdleHours: 1 } });
    try {
      await cluster.addApp('app1', 10_000);
      const token = cluster.token('app1', 'ada');
      const grant = await cluster.instances[0]!.call<{ upload_url: string }>('POST', '/api/v1/sync/blobs/upload', { token, body: { hash: sha256hex(Buffer.from('idle')), size_bytes: 10 } });
      expect(grant.status).toBe(200);
      for (const i of cluster.instances) i.clock.advance(2 * 3600 * 1000);
      await new Promise((r) => setTimeout(r, 4_500));
      const runs = cluster.instances.flatMap((i) =>
        i.log().split('\n').filter((l) => l.includes('"upload reaper run"')).map((l) => (JSON.parse(l) as { period: string }).period),
      );
      // Four or five ticks in 4.5 s, each swept by exactly one of the two instances.
      expect(runs.length).toBeGreaterThanOrEqual(3);
      expect(runs.length).toBeLessThanOrEqual(5);
      expect(new Set(runs).size).toBe(runs.length);
      // The idle grant was reaped once, by whichever instance swept first.
      expect(await cluster.instances[1]!.sql.value(`SELECT state FROM sync_uploads WHERE app_id = ?`, ['app1'])).toBe('reaped');
      const reapedLines = cluster.instances.flatMap((i) => i.log().split('\n').filter((l) => l.includes('"reaped idle uploads"')));
      expect(reapedLines).toHaveLength(1);
    } finally {
      await cluster.close();
    }
  });
});
