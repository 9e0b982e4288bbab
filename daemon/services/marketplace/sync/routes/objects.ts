// HTTP face of the `local` object store: the pre-signed PUT and GET URLs it hands out are
// served here, outside bearer auth (the signature is the credential), streaming to and from disk.
import type { FastifyInstance } from 'fastify';
import { LOCAL_OBJECTS_PATH, type LocalObjectStore } from '../../../../../src/sync-objects/local.js';
import { ObjectStoreError } from '../../../../../src/sync-objects/store.js';
import { HttpError } from '../../../../plugins/errors.js';

function flatQuery(q: unknown): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries((q ?? {}) as Record<string, unknown>)) if (typeof v === 'string') out[k] = v;
  return out;
}

function asHttp(err: unknown): unknown {
  return err instanceof ObjectStoreError ? new HttpError(err.status, err.message) : err;
}

export async function localObjectRoutes(app: FastifyInstance, store: LocalObjectStore): Promise<void> {
  await app.register(async (scope) => {
    // Bodies are streamed to disk by the store, never buffered or parsed.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req, _payload, done) => done(null));

    scope.put<{ Params: { '*': string } }>(
      `${LOCAL_OBJECTS_PATH}/*`,
      { schema: { hide: true } },
      async (req, reply) => {
        try {
          const etag = await store.acceptPut({ key: req.params['*'], query: flatQuery(req.query), headers: req.headers, body: req.raw });
          return reply.code(200).header('etag', etag).send();
        } catch (err) {
          // The client may still be sending: without this the socket would stall on the unread body.
          if (!req.raw.readableEnded) reply.header('connection', 'close');
          throw asHttp(err);
        }
      },
    );

    scope.get<{ Params: { '*': string } }>(`${LOCAL_OBJECTS_PATH}/*`, { schema: { hide: true } }, async (req, reply) => {
      try {
        const { size, body } = await store.openGet(req.params['*'], flatQuery(req.query));
        return reply.type('application/octet-stream').header('content-length', String(size)).send(body);
      } catch (err) {
        throw asHttp(err);
      }
    });
  });
}
