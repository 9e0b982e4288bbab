// Master-key envelope routes (get_sync_key, put_sync_key): the envelope with its key_version and
// key_id, the pending key while a rotation runs, and version-checked replacement (409 on mismatch).
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { GetKeyResponseSchema, PutKeyRequestSchema } from '../../../../../src/schemas/sync.js';
import { ErrorSchema } from '../../../../../src/schemas/common.js';
import { timestampNow } from '../../../../../src/util/time.js';
import { HttpError } from '../../../../plugins/errors.js';
import { getKey, putKey } from '../keys.js';
import { BEARER, TAGS, bearerErrors, owner, type BearerRouteDeps } from './common.js';

export async function keyRoutes(app: FastifyInstance, deps: BearerRouteDeps): Promise<void> {
  const { store, clock } = deps;

  app.get(
    '/api/v1/sync/keys',
    {
      schema: {
        operationId: 'get_sync_key',
        summary: 'The master-key envelope, its version and key id, and the pending key of a rotation in progress',
        tags: TAGS,
        security: BEARER,
        response: { 200: GetKeyResponseSchema, ...bearerErrors, 404: ErrorSchema },
      },
    },
    async (req) => {
      const k = await getKey(store, owner(req));
      if (!k) throw new HttpError(404, 'no key stored');
      return k;
    },
  );

  app.put<{ Body: Static<typeof PutKeyRequestSchema> }>(
    '/api/v1/sync/keys',
    {
      schema: {
        operationId: 'put_sync_key',
        summary: 'Stores the envelope if expected_key_version is the stored version (0 for the first)',
        description: 'The first envelope gets key_version 1 and key_id 1; each later put (a re-wrapped key, say a new password) increments key_version and keeps key_id. 409 on a version mismatch and while a rotation is in progress.',
        tags: TAGS,
        security: BEARER,
        body: PutKeyRequestSchema,
        response: { 204: Type.Null(), ...bearerErrors, 409: ErrorSchema },
      },
    },
    async (req, reply) => {
      const r = await putKey(store, owner(req), { encryptedKey: req.body.encrypted_key, expectedVersion: req.body.expected_key_version, now: timestampNow(clock) });
      if (r.kind === 'version_mismatch') throw new HttpError(409, `key version mismatch: the stored version is ${r.current}, not ${req.body.expected_key_version}`);
      if (r.kind === 'rotating') throw new HttpError(409, 'a key rotation is in progress: complete it (or cancel it when stale) first');
      return reply.code(204).send();
    },
  );
}
