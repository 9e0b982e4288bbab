// One-shot blob routes (spec: blob_upload_url, blob_confirm_upload, blob_download_url). Signing
// reserves the upload's size against the cap; confirm (../uploads.ts) promotes one upload's bytes
// and records them at their authoritative size.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, preHandlerHookHandler } from 'fastify';
import {
  BlobDownloadUrlResponseSchema,
  BlobHashRequestSchema,
  BlobUploadUrlRequestSchema,
  BlobUploadUrlResponseSchema,
} from '../../../../../src/schemas/sync.js';
import { ErrorSchema } from '../../../../../src/schemas/common.js';
import { uploadObjectKey } from '../../../../../src/sync-objects/store.js';
import { MAX_ONE_SHOT_BYTES } from '../../../../../src/sync-objects/geometry.js';
import { timestampNow } from '../../../../../src/util/time.js';
import { HttpError } from '../../../../plugins/errors.js';
import { syncCaller } from '../auth.js';
import type { StorageContext } from '../storage-context.js';
import { BEARER, TAGS } from './common.js';
import { blobObject, grantTarget } from '../uploads.js';
import { confirmBlob, reserveUpload } from './uploads.js';

const errors = { 400: ErrorSchema, 401: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema, 413: ErrorSchema };

export async function blobRoutes(app: FastifyInstance, c: StorageContext, auth: preHandlerHookHandler): Promise<void> {
  app.post<{ Body: { hash: string; size_bytes: number } }>(
    '/api/v1/sync/blobs/upload',
    {
      preValidation: auth,
      schema: {
        operationId: 'blob_upload_url',
        summary: 'A pre-signed URL for a one-shot blob upload',
        description: `The URL accepts a PUT of exactly size_bytes (ciphertext) bytes, up to ${MAX_ONE_SHOT_BYTES} (larger blobs go multipart), into an object of this upload alone. When the caller already has a blob with this hash, already_exists is true and upload_url is empty. The size is reserved against the storage cap until the upload is confirmed or its URL has expired: 413 when it would not fit beside what is stored and reserved; 409 when the blob already has 8 pending uploads.`,
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
      const id = randomUUID();
      const now = c.clock.now();
      const grant = {
        id, app_id: appId, user_id: userId, hash, size_bytes, part_size: size_bytes, part_count: 1, state: 'single' as const,
        store_upload_id: null, object_key: uploadObjectKey(appId, userId, hash, id), expires_ms: now + c.limits.urlTtlSeconds * 1000,
        created_at: timestampNow(c.clock), last_activity_ms: now,
      };
      if ((await reserveUpload(c, grant)) === 'exists') return { upload_url: '', already_exists: true, expires_in: 0 };
      const url = await c.objects.presignPut(c.baseUrl(req), grantTarget(grant), { length: size_bytes, expiresIn: c.limits.urlTtlSeconds });
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
          'Takes the newest upload of this hash whose bytes are stored, copies them into an object no signed URL can write, reads its size there and records the blob, applying the storage cap (413 when over it; the copy is then deleted). Idempotent: confirming a recorded blob answers 204 again. 409 when no object was uploaded for this hash (or the multipart upload was not completed).',
        tags: TAGS,
        security: BEARER,
        body: BlobHashRequestSchema,
        response: { 204: { type: 'null', description: 'recorded' }, ...errors },
      },
    },
    async (req, reply) => {
      const { userId, appId } = syncCaller(req);
      await confirmBlob(c, appId, userId, req.body.hash);
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
      const url = await c.objects.presignGet(c.baseUrl(req), blobObject(appId, userId, req.body.hash, blob), c.limits.urlTtlSeconds);
      return { download_url: url, size_bytes: blob.size_bytes, expires_in: c.limits.urlTtlSeconds };
    },
  );
}
