// sync_pull taken before fastify (daemon/json-lane.ts): a device pulls at every sync, and fastify's
// routing, hooks, validation and reply cost a page of ten entries about as much as the page itself
// (bench/README.md, "sync_pull taken before fastify"). The lane answers only a request the route in
// routes/changelog.ts would answer 200, with the same bytes and request line: `Authorization:
// Bearer` with a token the bearer check accepts for a caller it knows already (SyncBearer.
// knownCaller: no statement, no promise), and a body of exactly the schema's fields with values it
// takes as they are. Anything else it declines before reading (no token or another spelling of the
// header, a refused token, a caller not seen yet) or hands to fastify with the bytes read (another
// field, a string for a number, a limit out of range), and fastify answers as from the start.
import { MAX_PULL_LIMIT } from '../../../../src/schemas/sync.js';
import { MAX_CREDENTIAL_LENGTH } from '../../../plugins/auth.js';
import type { DirectRoutes, Lane } from '../../../direct-routes.js';
import { jsonLane, jsonObject, type JsonLaneDeps } from '../../../json-lane.js';
import type { SyncBearer } from './auth.js';
import { pullText, type PullDeps, type PullFields } from './pull-answer.js';

export const PULL_PATH = '/api/v1/sync/pull';
/** The schema's bound on a device id, in code points; a string within it in UTF-16 units is within it in code points too. */
const DEVICE_ID_MAX_LENGTH = 200;

/**
 * The fields of a body PullRequestSchema takes as it is: an object of `cursor` (an integer from 0)
 * and optionally `limit` (1 to MAX_PULL_LIMIT) and `device_id` (1 to 200 characters), nothing
 * else; undefined for any other body (fastify's to answer, or to refuse).
 */
export function pullFields(body: Buffer): PullFields | undefined {
  const o = jsonObject(body);
  if (o === undefined) return undefined;
  let cursor: number | undefined;
  let limit: number | undefined;
  let deviceId: string | undefined;
  // Own keys only: JSON.parse makes `__proto__` an own key, and it is not one of the three.
  for (const k of Object.keys(o)) {
    const x = o[k];
    if (k === 'cursor') {
      if (!Number.isSafeInteger(x) || (x as number) < 0) return undefined;
      cursor = x as number;
    } else if (k === 'limit') {
      if (!Number.isSafeInteger(x) || (x as number) < 1 || (x as number) > MAX_PULL_LIMIT) return undefined;
      limit = x as number;
    } else if (k === 'device_id') {
      if (typeof x !== 'string' || x.length === 0 || x.length > DEVICE_ID_MAX_LENGTH) return undefined;
      deviceId = x;
    } else return undefined;
  }
  return cursor === undefined ? undefined : { cursor, limit, deviceId };
}

export interface PullLaneDeps extends JsonLaneDeps, PullDeps {
  bearer: SyncBearer;
}

/** The lane of POST /api/v1/sync/pull. */
export function pullLane(direct: DirectRoutes, deps: PullLaneDeps): Lane {
  const { bearer } = deps;
  return jsonLane(direct, deps, {
    path: PULL_PATH,
    admit(req) {
      // The one form clients send; other spellings (`bearer`, a tab, spaces around) the auth plugin reads.
      const auth = req.headers.authorization;
      if (auth === undefined || auth.length > MAX_CREDENTIAL_LENGTH || !auth.startsWith('Bearer ')) return undefined;
      return bearer.knownCaller(auth.slice(7));
    },
    fields: pullFields,
    answer(taken, f, caller) {
      pullText(deps, caller, f).then(
        (text) => taken.send(200, text),
        (e: Error) => taken.fail(e),
      );
    },
  });
}
