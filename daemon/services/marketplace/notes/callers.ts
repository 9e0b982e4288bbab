// Who is calling the notes API or git smart HTTP. Credentials (parsed by the auth plugin): a
// personal access token (`Authorization: Bearer <t>` or `token <t>`; HTTP Basic with the token as
// password for git), or the `mkt_session` cookie, which authenticates reads only.
import type { FastifyRequest } from 'fastify';
import { SESSION_COOKIE, type AccountsStore } from '../../../../src/store/accounts.js';
import { Authenticator, type Problem } from '../../../plugins/auth.js';
import { HttpError } from '../../../plugins/errors.js';
import type { Caller } from './access.js';

/** The caller of a request that presents no credential. */
export const ANONYMOUS: Caller = { via: 'none' };
export const BEARER_CHALLENGE = { 'www-authenticate': 'Bearer realm="mkt"' };
/** The 401 text when writing comes without a credential. */
export const WRITE_NEEDS_TOKEN = 'writing notes needs a personal access token with push scope';

/** The notes API's 401: an `error` text saying what is wrong with the credential, and a Bearer challenge. */
function unauthorized(problem: Problem): HttpError {
  if (problem.kind === 'missing') return new HttpError(401, WRITE_NEEDS_TOKEN, BEARER_CHALLENGE);
  if (problem.kind === 'malformed') return new HttpError(401, problem.reason, BEARER_CHALLENGE);
  if (problem.credential.kind === 'session') return new HttpError(401, 'session has expired or is not valid', BEARER_CHALLENGE);
  return new HttpError(401, 'token is not valid (unknown or revoked)', BEARER_CHALLENGE);
}

export class Callers {
  private readonly auth: Authenticator<Caller>;

  constructor(accounts: AccountsStore) {
    this.auth = new Authenticator<Caller>({
      schemes: ['Bearer', 'token', 'Basic'],
      cookie: SESSION_COOKIE,
      unauthorized,
      async verify(credential) {
        if (credential.kind === 'token') {
          const found = await accounts.authenticateToken(credential.token);
          return found && { user: found.user, via: 'token', scope: found.scope };
        }
        if (credential.kind === 'session') {
          const user = await accounts.authenticateSession(credential.value);
          return user && { user, via: 'session' };
        }
        return undefined;
      },
    });
  }

  /** The caller of a request; a credential that is presented but malformed or wrong is a 401. */
  async caller(req: FastifyRequest): Promise<Caller> {
    return (await this.auth.optional(req)) ?? ANONYMOUS;
  }
}
