// GET /api/user: the account the presented token or session belongs to (gh's GET /user). Beyond
// the spec: it lets a client prove a token and name its holder without touching a repository.
import type { FastifyInstance } from 'fastify';
import { ErrorSchema } from '../../../../src/schemas/common.js';
import { CurrentUserSchema, type CurrentUser } from '../../../../src/schemas/user.js';
import { HttpError } from '../../../plugins/errors.js';
import { BEARER_CHALLENGE, type Callers } from '../notes/callers.js';

export async function accountRoutes(app: FastifyInstance, deps: { callers: Callers }): Promise<void> {
  app.get(
    '/api/user',
    {
      schema: {
        operationId: 'get_current_user',
        summary: 'The account of the presented token or session',
        tags: ['accounts'],
        security: [{ bearer: [] }],
        response: { 200: CurrentUserSchema, 401: ErrorSchema },
      },
    },
    async (req): Promise<CurrentUser> => {
      const caller = await deps.callers.caller(req);
      if (!caller.user || caller.via === 'none') throw new HttpError(401, 'GET /api/user needs a personal access token or a session', BEARER_CHALLENGE);
      const { id, name, email, created_at } = caller.user;
      return { id, name, email, created_at, via: caller.via, ...(caller.scope ? { scope: caller.scope } : {}) };
    },
  );
}
