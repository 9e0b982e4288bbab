// Key-rotation routes (spec "Key rotation" table): begin or resume, the entries still sealed with
// an old key up to target_seq, re-sealed batches, complete (409 while any remain) and the
// cancel of a rotation idle for more than 24 hours (404 otherwise), on the service clock.
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import {
  BeginRotationRequestSchema,
  BeginRotationResponseSchema,
  CompleteRotationRequestSchema,
  MAX_PULL_LIMIT,
  RotationBatchRequestSchema,
  RotationBatchResponseSchema,
  RotationEntriesRequestSchema,
  RotationEntriesResponseSchema,
} from '../../../../../src/schemas/sync.js';
import { ErrorSchema } from '../../../../../src/schemas/common.js';
import { HttpError } from '../../../../plugins/errors.js';
import { BEARER, TAGS, bearerErrors, owner, type BearerRouteDeps } from './common.js';
import { DEFAULT_PULL_LIMIT } from './changelog.js';
import { beginRotation, cancelStaleRotation, completeRotation, rotationBatch, rotationEntries } from '../rotation.js';

/** A rotation with no begin, entries, batch or complete call for longer than this is stale. */
export const ROTATION_STALE_MS = 24 * 60 * 60 * 1000;
const NOT_FOUND = 'no rotation in progress with this rotation_id';

export async function rotationRoutes(app: FastifyInstance, deps: BearerRouteDeps): Promise<void> {
  const { store, clock } = deps;

  app.post<{ Body: Static<typeof BeginRotationRequestSchema> }>(
    '/api/v1/sync/keys/rotate',
    {
      schema: {
        operationId: 'begin_rotation',
        summary: 'Starts a key rotation, or resumes the caller device’s own',
        description:
          'Needs expected_key_version to be the stored version. A rotation in progress is resumed (same rotation_id, target_seq, new_key_id) when the same device asks with the same new envelope; any other begin answers 409. target_seq is the newest sequence number when the rotation started; new_key_id is one more than any key id used before.',
        tags: TAGS,
        security: BEARER,
        body: BeginRotationRequestSchema,
        response: { 200: BeginRotationResponseSchema, ...bearerErrors, 403: ErrorSchema, 409: ErrorSchema },
      },
    },
    async (req) => {
      const b = req.body;
      const r = await beginRotation(store, owner(req), { deviceId: b.device_id, newEncryptedKey: b.new_encrypted_key, expectedVersion: b.expected_key_version, nowMs: clock.now() });
      switch (r.kind) {
        case 'ok':
          return { rotation_id: r.rotation_id, target_seq: r.target_seq, new_key_id: r.new_key_id };
        case 'no_key':
          throw new HttpError(409, 'no key stored to rotate (PUT /api/v1/sync/keys first)');
        case 'unknown_device':
          throw new HttpError(403, `device ${JSON.stringify(b.device_id)} is not registered (POST /api/v1/sync/devices)`);
        case 'version_mismatch':
          throw new HttpError(409, `key version mismatch: the stored version is ${r.current}, not ${b.expected_key_version}`);
        case 'in_progress':
          throw new HttpError(
            409,
            r.same_device
              ? 'a rotation with another new key is in progress on this device: resume it with its pending key (GET /api/v1/sync/keys)'
              : 'a rotation is in progress on another device: finish it there, or cancel it after 24 hours without activity',
          );
      }
    },
  );

  app.delete(
    '/api/v1/sync/keys/rotate',
    {
      schema: {
        operationId: 'cancel_rotation',
        summary: 'Cancels a stale rotation (more than 24 hours without activity)',
        description: 'The current key stays current. Entries already sealed with the abandoned key keep it: its envelope is listed in retired_keys of GET /api/v1/sync/keys until a later rotation re-seals them.',
        tags: TAGS,
        security: BEARER,
        response: { 204: Type.Null(), ...bearerErrors, 404: ErrorSchema },
      },
    },
    async (req, reply) => {
      const now = clock.now();
      if (!(await cancelStaleRotation(store, owner(req), { idleSinceMs: now - ROTATION_STALE_MS - 1, nowMs: now }))) {
        throw new HttpError(404, 'no stale rotation: a rotation can be cancelled after 24 hours without activity');
      }
      return reply.code(204).send();
    },
  );

  app.post<{ Body: Static<typeof RotationEntriesRequestSchema> }>(
    '/api/v1/sync/keys/rotate/entries',
    {
      schema: {
        operationId: 'rotation_entries',
        summary: 'Entries up to target_seq still sealed with an old key, after after_seq, paged',
        description: `At most \`limit\` entries (default ${DEFAULT_PULL_LIMIT}, at most ${MAX_PULL_LIMIT}); \`remaining\` counts every entry of the rotation not yet re-sealed.`,
        tags: TAGS,
        security: BEARER,
        body: RotationEntriesRequestSchema,
        response: { 200: RotationEntriesResponseSchema, ...bearerErrors, 404: ErrorSchema },
      },
    },
    async (req) => {
      const b = req.body;
      const r = await rotationEntries(store, owner(req), { rotationId: b.rotation_id, afterSeq: b.after_seq ?? 0, limit: b.limit ?? DEFAULT_PULL_LIMIT, nowMs: clock.now() });
      if (r.kind === 'not_found') throw new HttpError(404, NOT_FOUND);
      return { entries: r.entries, has_more: r.has_more, remaining: r.remaining };
    },
  );

  app.post<{ Body: Static<typeof RotationBatchRequestSchema> }>(
    '/api/v1/sync/keys/rotate/batch',
    {
      schema: {
        operationId: 'rotation_batch',
        summary: 'Replaces the ciphertext of entries of the rotation with their re-sealed form, all or none',
        description: 'Each seq must be an entry at or below the rotation’s target_seq (409 names the first that is not, and nothing changes). The entries then carry the new key id. Sending an entry again is harmless.',
        tags: TAGS,
        security: BEARER,
        body: RotationBatchRequestSchema,
        response: { 200: RotationBatchResponseSchema, ...bearerErrors, 404: ErrorSchema, 409: ErrorSchema },
      },
    },
    async (req) => {
      const b = req.body;
      const r = await rotationBatch(store, owner(req), { rotationId: b.rotation_id, entries: b.entries, nowMs: clock.now() });
      if (r.kind === 'not_found') throw new HttpError(404, NOT_FOUND);
      if (r.kind === 'not_in_rotation') throw new HttpError(409, `entry ${r.seq} is not part of this rotation (it does not exist or is newer than target_seq); nothing was changed`);
      return { updated: r.updated, remaining: r.remaining };
    },
  );

  app.post<{ Body: Static<typeof CompleteRotationRequestSchema> }>(
    '/api/v1/sync/keys/rotate/complete',
    {
      schema: {
        operationId: 'complete_rotation',
        summary: 'Makes the new key current once no entry needs re-encryption',
        description: 'The pending envelope becomes the stored one, key_id becomes new_key_id and key_version goes up by one. 409 while entries remain. Completing a rotation already completed answers 204 again.',
        tags: TAGS,
        security: BEARER,
        body: CompleteRotationRequestSchema,
        response: { 204: Type.Null(), ...bearerErrors, 404: ErrorSchema, 409: ErrorSchema },
      },
    },
    async (req, reply) => {
      const r = await completeRotation(store, owner(req), { rotationId: req.body.rotation_id, nowMs: clock.now() });
      if (r.kind === 'not_found') throw new HttpError(404, NOT_FOUND);
      if (r.kind === 'remaining') throw new HttpError(409, `${r.remaining} entries still need re-encryption`);
      return reply.code(204).send();
    },
  );
}
