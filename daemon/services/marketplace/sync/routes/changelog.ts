// Changelog routes (sync_push, sync_pull): encrypted entries appended atomically per request with
// per-(user, app) sequence numbers, a retried batch applied once, and pages after a cursor.
import type { FastifyInstance } from 'fastify';
import type { Static } from '@sinclair/typebox';
import { PullRequestSchema, PullResponseSchema, PushRequestSchema, PushResponseSchema } from '../../../../../src/schemas/sync.js';
import { ErrorSchema } from '../../../../../src/schemas/common.js';
import { timestampNow } from '../../../../../src/util/time.js';
import { HttpError } from '../../../../plugins/errors.js';
import { fits } from '../quota.js';
import { overCap } from './uploads.js';
import { push } from '../changelog.js';
import { DEFAULT_PULL_LIMIT, pullText, type PullDeps } from '../pull-answer.js';
import { BEARER, TAGS, bearerErrors, owner, type BearerRouteDeps } from './common.js';

export { DEFAULT_PULL_LIMIT };

export async function changelogRoutes(app: FastifyInstance, deps: BearerRouteDeps & PullDeps): Promise<void> {
  const { store, clock } = deps;

  app.post<{ Body: Static<typeof PushRequestSchema> }>(
    '/api/v1/sync/push',
    {
      schema: {
        operationId: 'sync_push',
        summary: 'Appends encrypted changelog entries from a device; answers the new cursor',
        description:
          'All entries of a request are stored or none; 413 (nothing stored) when their bytes would pass the storage cap, which counts changelog ciphertext with blobs. A batch id the device used before answers the first result (duplicate: true) and stores nothing. The entries must be sealed with the current key, or with the pending key while a rotation runs (409 otherwise). The device must be registered (403 otherwise).',
        tags: TAGS,
        security: BEARER,
        body: PushRequestSchema,
        response: { 200: PushResponseSchema, ...bearerErrors, 403: ErrorSchema, 409: ErrorSchema, 413: ErrorSchema },
      },
    },
    async (req) => {
      const b = req.body;
      // The storage cap counts changelog ciphertext too; decided inside the push transaction.
      const r = await push(store, owner(req), { deviceId: b.device_id, batchId: b.batch_id, keyId: b.key_id, entries: b.entries, now: timestampNow(clock), admit: (u, added) => fits(u, added) });
      if (r.kind === 'over_cap') throw overCap(r.usage, r.added, `the ${b.entries.length} changelog entries of this push`);
      if (r.kind === 'unknown_device') throw new HttpError(403, `device ${JSON.stringify(b.device_id)} is not registered (POST /api/v1/sync/devices)`);
      if (r.kind === 'wrong_key') {
        throw new HttpError(409, r.expected === null ? 'no sync key stored yet (PUT /api/v1/sync/keys first)' : `entries must be sealed with key ${r.expected}, not ${b.key_id} (GET /api/v1/sync/keys)`);
      }
      return { cursor: r.cursor, accepted: r.accepted, duplicate: r.duplicate };
    },
  );

  app.post<{ Body: Static<typeof PullRequestSchema> }>(
    '/api/v1/sync/pull',
    {
      schema: {
        operationId: 'sync_pull',
        summary: 'Changelog entries after a cursor, oldest first, paged',
        description: `At most \`limit\` entries (default ${DEFAULT_PULL_LIMIT}); \`cursor\` in the answer is the last entry's sequence number (the request's cursor when none), \`has_more\` whether more follow.`,
        tags: TAGS,
        security: BEARER,
        body: PullRequestSchema,
        response: { 200: PullResponseSchema, ...bearerErrors },
      },
    },
    async (req, reply) => {
      const b = req.body;
      const text = await pullText(deps, owner(req), { cursor: b.cursor, limit: b.limit, deviceId: b.device_id });
      // Text with a JSON type is sent as it is: the schema above documents it, pullAnswer writes it.
      return reply.type('application/json; charset=utf-8').send(text);
    },
  );
}
