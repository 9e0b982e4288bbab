// Multipart blob routes (spec: blob_multipart_start/parts/complete/abort). They only move bytes:
// deterministic part geometry, bounded windows of exact-length part URLs, completion against
// what the object store holds (the rules: ../multipart.ts). A session reserves its full size
// against the cap from start until it is confirmed, aborted or reaped (../uploads.ts); its parts
// assemble into its own object.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, preHandlerHookHandler } from 'fastify';
import {
  BlobMultipartAbortRequestSchema,
  BlobMultipartCompleteRequestSchema,
  BlobMultipartPartsRequestSchema,
  BlobMultipartPartsResponseSchema,
  BlobMultipartStartRequestSchema,
  BlobMultipartStartResponseSchema,
  MAX_PART_WINDOW,
} from '../../../../../src/schemas/sync.js';
import { ErrorSchema } from '../../../../../src/schemas/common.js';
import { uploadObjectKey } from '../../../../../src/sync-objects/store.js';
import { MAX_BLOB_BYTES, partGeometry, partLength } from '../../../../../src/sync-objects/geometry.js';
import type { UploadSession } from '../../../../../src/store/sync-billing.js';
import { timestampNow } from '../../../../../src/util/time.js';
import { HttpError } from '../../../../plugins/errors.js';
import { syncCaller, type SyncCaller } from '../auth.js';
import type { StorageContext } from '../storage-context.js';
import { BEARER, TAGS } from './common.js';
import { moveUpload, touchUpload, uploadObject } from '../uploads.js';
import { assertRoom, reserveUpload } from './uploads.js';
import { completion, listedParts, ownSession, partsWindow } from '../multipart.js';

const errors = { 400: ErrorSchema, 401: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema, 410: ErrorSchema, 413: ErrorSchema };
const NO_CONTENT = { type: 'null', description: 'done' };

interface PartsBody {
  hash: string;
  upload_id: string;
  size_bytes: number;
  first_part: number;
  count: number;
  checksums?: string[] | null;
}
interface CompleteBody {
  hash: string;
  upload_id: string;
  parts: { part_number: number; etag: string }[];
}

export async function multipartRoutes(app: FastifyInstance, c: StorageContext, auth: preHandlerHookHandler): Promise<void> {
  /** The caller's session for this hash: 404 when there is none, 410 once aborted or reaped. */
  async function session(caller: SyncCaller, hash: string, uploadId: string): Promise<UploadSession> {
    const s = ownSession(await c.store.upload(uploadId), caller, hash);
    if (!s) throw new HttpError(404, `no multipart upload ${uploadId} for blob ${hash}`);
    if (s.state === 'aborted') throw new HttpError(410, `multipart upload ${uploadId} was aborted: start a new one`);
    if (s.state === 'reaped') throw new HttpError(410, `multipart upload ${uploadId} was idle too long and has been reaped: start a new one`);
    return s;
  }

  app.post<{ Body: { hash: string; size_bytes: number } }>(
    '/api/v1/sync/blobs/multipart/start',
    {
      preValidation: auth,
      schema: {
        operationId: 'blob_multipart_start',
        summary: 'Open a multipart blob upload',
        description: `part_size is 8 MiB, or the smallest whole number of MiB that keeps part_count within 10,000; blobs up to ${MAX_BLOB_BYTES} bytes. When the blob exists, already_exists is true, no session is opened and the other fields are empty. The session reserves size_bytes against the storage cap until it is confirmed, aborted or reaped: 413 when it would not fit beside what is stored and reserved; 409 when the blob already has 8 pending uploads.`,
        tags: TAGS,
        security: BEARER,
        body: BlobMultipartStartRequestSchema,
        response: { 200: BlobMultipartStartResponseSchema, ...errors },
      },
    },
    async (req) => {
      const caller = syncCaller(req);
      const { hash, size_bytes } = req.body;
      if (await c.store.blob(caller.appId, caller.userId, hash)) return { upload_id: '', part_size: 0, part_count: 0, already_exists: true };
      if (size_bytes < 1 || size_bytes > MAX_BLOB_BYTES) throw new HttpError(400, `size_bytes must be 1..${MAX_BLOB_BYTES} for a multipart upload`);
      // Checked first so a refused start opens nothing; reserveUpload decides again atomically.
      assertRoom(await c.store.usage(caller.appId, caller.userId), size_bytes);
      const g = partGeometry(size_bytes);
      const id = randomUUID();
      const objectKey = uploadObjectKey(caller.appId, caller.userId, hash, id);
      const storeUploadId = await c.objects.createMultipart(objectKey);
      const session: UploadSession = {
        id,
        app_id: caller.appId,
        user_id: caller.userId,
        hash,
        size_bytes,
        part_size: g.part_size,
        part_count: g.part_count,
        state: 'open',
        store_upload_id: storeUploadId,
        object_key: objectKey,
        expires_ms: null,
        created_at: timestampNow(c.clock),
        last_activity_ms: c.clock.now(),
      };
      let outcome: 'reserved' | 'exists';
      try {
        outcome = await reserveUpload(c, session);
      } catch (err) {
        await c.objects.abortMultipart(objectKey, storeUploadId);
        throw err;
      }
      if (outcome === 'exists') {
        await c.objects.abortMultipart(objectKey, storeUploadId);
        return { upload_id: '', part_size: 0, part_count: 0, already_exists: true };
      }
      return { upload_id: id, part_size: g.part_size, part_count: g.part_count, already_exists: false };
    },
  );

  app.post<{ Body: PartsBody }>(
    '/api/v1/sync/blobs/multipart/parts',
    {
      preValidation: auth,
      schema: {
        operationId: 'blob_multipart_parts',
        summary: 'Pre-signed URLs for a window of parts',
        description: `Parts first_part .. first_part + count - 1 (numbered from 1, at most ${MAX_PART_WINDOW} per call), each URL signed for its exact content_length and, when checksums are given (one base64 SHA-256 per part), for that checksum. 409 when size_bytes differs from start or the upload was completed; 410 when it was aborted or reaped.`,
        tags: TAGS,
        security: BEARER,
        body: BlobMultipartPartsRequestSchema,
        response: { 200: BlobMultipartPartsResponseSchema, ...errors },
      },
    },
    async (req) => {
      const caller = syncCaller(req);
      const b = req.body;
      const s = await session(caller, b.hash, b.upload_id);
      const w = partsWindow(s, b);
      switch (w.kind) {
        case 'not_open':
          throw new HttpError(409, `multipart upload ${s.id} is already completed`);
        case 'size_differs':
          throw new HttpError(409, `size_bytes ${b.size_bytes} differs from the ${s.size_bytes} given at start`);
        case 'outside':
          throw new HttpError(400, `parts ${b.first_part}..${w.last} are outside 1..${s.part_count}`);
        case 'checksum_count':
          throw new HttpError(400, `checksums has ${b.checksums?.length} entries for ${b.count} parts`);
        case 'ok':
          break;
      }
      const key = uploadObject(s);
      // Billing follows what is stored: refresh the session's parts while it is active.
      const stored = await c.objects.listParts(key, s.store_upload_id!);
      await touchUpload(c.store, s.id, c.clock.now(), stored.map((p) => ({ part_number: p.partNumber, size_bytes: p.size, etag: p.etag })));
      const geometry = { part_size: s.part_size, part_count: s.part_count };
      const base = c.baseUrl(req);
      const parts = [];
      for (let i = 0; i < b.count; i++) {
        const n = b.first_part + i;
        const length = partLength(s.size_bytes, geometry, n);
        const checksum = b.checksums?.[i];
        const url = await c.objects.presignPart(base, key, s.store_upload_id!, n, { length, checksum, offset: (n - 1) * s.part_size, expiresIn: c.limits.urlTtlSeconds });
        parts.push({ part_number: n, content_length: length, url });
      }
      return { parts, expires_in: c.limits.urlTtlSeconds };
    },
  );

  app.post<{ Body: CompleteBody }>(
    '/api/v1/sync/blobs/multipart/complete',
    {
      preValidation: auth,
      schema: {
        operationId: 'blob_multipart_complete',
        summary: 'Assemble the uploaded parts',
        description:
          'Every part 1..part_count must be listed once with the ETag its upload returned, and be stored with its exact length; otherwise 409 naming the parts. Repeating a successful complete answers 204. The client then calls blob confirm.',
        tags: TAGS,
        security: BEARER,
        body: BlobMultipartCompleteRequestSchema,
        response: { 204: NO_CONTENT, ...errors },
      },
    },
    async (req, reply) => {
      const caller = syncCaller(req);
      const b = req.body;
      const s = await session(caller, b.hash, b.upload_id);
      if (s.state !== 'open') {
        if (s.state === 'rejected') throw new HttpError(409, `multipart upload ${s.id} was refused at confirm: start a new one`);
        return reply.code(204).send();
      }
      const listed = listedParts(s, b.parts);
      if (listed.kind === 'outside') throw new HttpError(400, `part ${listed.part} is outside 1..${s.part_count}`);
      if (listed.kind === 'twice') throw new HttpError(400, `part ${listed.part} is listed twice`);
      const key = uploadObject(s);
      const stored = new Map((await c.objects.listParts(key, s.store_upload_id!)).map((p) => [p.partNumber, p]));
      await touchUpload(c.store, s.id, c.clock.now(), [...stored.values()].map((p) => ({ part_number: p.partNumber, size_bytes: p.size, etag: p.etag })));
      const done = completion(s, listed.etags, stored);
      if (done.kind === 'missing') throw new HttpError(409, `cannot complete: ${done.parts.length} of ${s.part_count} parts are not uploaded or not listed (${listParts(done.parts)})`);
      if (done.kind === 'mismatched') throw new HttpError(409, `cannot complete: the ETag or size of parts ${listParts(done.parts)} does not match what is stored (uploaded again since?)`);
      await c.objects.completeMultipart(key, s.store_upload_id!, done.order);
      await moveUpload(c.store, s.id, ['open'], 'completed', c.clock.now());
      return reply.code(204).send();
    },
  );

  app.post<{ Body: { hash: string; upload_id: string } }>(
    '/api/v1/sync/blobs/multipart/abort',
    {
      preValidation: auth,
      schema: {
        operationId: 'blob_multipart_abort',
        summary: 'Abort a multipart upload and release its parts',
        description: 'Stops the billing of its parts. Aborting an aborted or reaped upload answers 204 again; a completed one 409.',
        tags: TAGS,
        security: BEARER,
        body: BlobMultipartAbortRequestSchema,
        response: { 204: NO_CONTENT, ...errors },
      },
    },
    async (req, reply) => {
      const caller = syncCaller(req);
      const s = ownSession(await c.store.upload(req.body.upload_id), caller, req.body.hash);
      if (!s) throw new HttpError(404, `no multipart upload ${req.body.upload_id} for blob ${req.body.hash}`);
      if (s.state === 'aborted' || s.state === 'reaped') return reply.code(204).send();
      if (s.state !== 'open') throw new HttpError(409, `multipart upload ${s.id} is already completed`);
      if (await moveUpload(c.store, s.id, ['open'], 'aborted', c.clock.now())) {
        await c.objects.abortMultipart(uploadObject(s), s.store_upload_id!);
      }
      return reply.code(204).send();
    },
  );
}

/** `1-3, 7` for a sorted list of part numbers (long lists shortened). */
function listParts(ns: number[]): string {
  const runs: string[] = [];
  for (let i = 0; i < ns.length; ) {
    let j = i;
    while (j + 1 < ns.length && ns[j + 1] === ns[j]! + 1) j++;
    runs.push(i === j ? String(ns[i]) : `${ns[i]}-${ns[j]}`);
    i = j + 1;
  }
  return runs.length > 10 ? `${runs.slice(0, 10).join(', ')}, ...` : runs.join(', ');
}

