// One-shot blob routes (spec: blob_upload_url, blob_confirm_upload, blob_download_url). Confirm
// is where quota and billing apply: it reads the authoritative size from the object store.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, preHandlerHookHandler } from 'fastify';
import {
  BlobDownloadUrlResponseSchema,
  BlobHashRequestSchema,
  BlobUploadUrlRequestSchema,
  BlobUploadUrlResponseSchema,
  ErrorSchema,
} from '../../../../src/schemas/sync.js';
import { blobKey } from '../../../../src/sync-objects/store.js';
import { MAX_ONE_SHOT_BYTES } from '../../../../src/sync-objects/geometry.js';
import { HttpError } from '../../../plugins/errors.js';
import { syncCaller } from './auth.js';
import { assertRoom, nowIso, overCap, type StorageContext } from './storage-context.js';

const TAGS = ['sync'];
const BEARER = [{ bearer: [] }];
const errors = { 400: ErrorSchema, 401: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema, 413: ErrorSchema };

export async function blobRoutes(app: FastifyInstance, c: StorageContext, auth: preHandlerHookHandler): Promise<void> {
  app.post<{ Body: { hash: string; size_bytes: number } }>(
    '/api/v1/sync/blobs/upload',
    {
      preValidation: auth,
      schema: {
        operationId: 'blob_upload_url',
        summary: 'A pre-signed URL for a one-shot blob upload',
        description: `The URL accepts one PUT of exactly size_bytes (ciphertext) bytes, up to ${MAX_ONE_SHOT_BYTES} (larger blobs go multipart). When the caller already has a blob with this hash, already_exists is true and upload_url is empty. Answers 413 when the blob would not fit the storage cap.`,
        tags: TAGS,
        security: BEARER,
        body: BlobUploadUrlRequestSchema,
        response: { 200: BlobUploadUrlResponseSchema, ...errors },
      },
    },
    async (req) => {
      const { userId, appId } = syncCaller(req);
      const { hash, size_bytes } = req.body;
      if (await c.store.blob(appId, userId, hash)) return { upload_url: '', already_exists: true, expires_in: 0 };
      if (size_bytes > MAX_ONE_SHOT_BYTES) throw new HttpError(400, `size_bytes ${size_bytes} is over the one-shot limit of ${MAX_ONE_SHOT_BYTES} bytes: use a multipart upload`);
      assertRoom(await c.store.usage(appId, userId), size_bytes);
      await c.store.noteSingleUpload({ id: randomUUID(), app_id: appId, user_id: userId, hash, size_bytes, at: nowIso(c.clock), now_ms: c.clock.now() });
      const url = await c.objects.presignPut(c.baseUrl(req), blobKey(appId, userId, hash), { length: size_bytes, expiresIn: c.limits.urlTtlSeconds });
      return { upload_url: url, already_exists: false, expires_in: c.limits.urlTtlSeconds };
    },
  );

  app.post<{ Body: { hash: string } }>(
    '/api/v1/sync/blobs/confirm',
    {
      preValidation: auth,
      schema: {
        operationId: 'blob_confirm_upload',
        summary: 'Record an uploaded blob',
        description:
          'Reads the object size from object storage and records the blob, applying the storage cap (413 when over it; the object is then deleted). Idempotent: confirming a recorded blob answers 204 again. 409 when no object was uploaded for this hash (or the multipart upload was not completed).',
        tags: TAGS,
        security: BEARER,
        body: BlobHashRequestSchema,
        response: { 204: { type: 'null', description: 'recorded' }, ...errors },
      },
    },
    async (req, reply) => {
      const { userId, appId } = syncCaller(req);
      const { hash } = req.body;
      if (await c.store.blob(appId, userId, hash)) return reply.code(204).send();
      const key = blobKey(appId, userId, hash);
      const head = await c.objects.head(key);
      if (!head) throw new HttpError(409, `no object was uploaded for blob ${hash}: upload it (or complete its multipart upload) before confirming`);
      const res = await c.store.confirmBlob({ app_id: appId, user_id: userId, hash, size_bytes: head.size, at: nowIso(c.clock), now_ms: c.clock.now() });
      if (res.kind === 'over_cap') {
        // Unrecorded bytes are neither reachable nor billed: do not keep them.
        await c.objects.delete(key);
        throw overCap(res.usage, head.size);
      }
      return reply.code(204).send();
    },
  );

  app.post<{ Body: { hash: string } }>(
    '/api/v1/sync/blobs/download',
    {
      preValidation: auth,
      schema: {
        operationId: 'blob_download_url',
        summary: 'A pre-signed URL to download a blob',
        tags: TAGS,
        security: BEARER,
        body: BlobHashRequestSchema,
        response: { 200: BlobDownloadUrlResponseSchema, ...errors },
      },
    },
    async (req) => {
      const { userId, appId } = syncCaller(req);
      const blob = await c.store.blob(appId, userId, req.body.hash);
      if (!blob) throw new HttpError(404, `blob ${req.body.hash} not found`);
      const url = await c.objects.presignGet(c.baseUrl(req), blobKey(appId, userId, req.body.hash), c.limits.urlTtlSeconds);
      return { download_url: url, size_bytes: blob.size_bytes, expires_in: c.limits.urlTtlSeconds };
    },
  );
}
