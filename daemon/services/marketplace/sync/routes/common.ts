// What the sync area's route modules share: the bearer routes' dependencies, the OpenAPI tag,
// security requirement and error responses, and the caller as a store owner.
import type { FastifyRequest } from 'fastify';
import { ErrorSchema } from '../../../../../src/schemas/common.js';
import type { Owner, SyncStore } from '../../../../../src/store/sync.js';
import type { AccountsStore } from '../../../../../src/store/accounts.js';
import type { Clock } from '../../../../../src/util/clock.js';
import { syncCaller } from '../auth.js';

export interface BearerRouteDeps {
  store: SyncStore;
  accounts: AccountsStore;
  clock: Clock;
}

export const TAGS = ['sync'];
export const BEARER = [{ bearer: [] }];
export const bearerErrors = { 400: ErrorSchema, 401: ErrorSchema };

export function owner(req: FastifyRequest): Owner {
  const c = syncCaller(req);
  return { appId: c.appId, userId: c.userId };
}
