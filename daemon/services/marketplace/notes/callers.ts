// Who is calling and what they may do with a hosted repository. Credentials (parsed by the auth
// plugin): a personal access token (`Authorization: Bearer <t>` or `token <t>`; HTTP Basic with the
// token as password for git), or the `mkt_session` cookie, which authenticates reads only.
// Private repositories are invisible to everyone but their owner and the users granted access.
import type { FastifyRequest } from 'fastify';
import { SESSION_COOKIE, type AccountsStore, type TokenScope, type User } from '../../../../src/store/accounts.js';
import type { Repo, RepoStore } from '../../../../src/store/repos.js';
import { Authenticator, type Problem } from '../../../plugins/auth.js';
import { HttpError } from '../../../plugins/errors.js';

export interface Caller {
  user?: User;
  /** How the caller authenticated; `none` for anonymous reads. */
  via: 'token' | 'session' | 'none';
  scope?: TokenScope;
}

const ANONYMOUS: Caller = { via: 'none' };
const CHALLENGE = { 'www-authenticate': 'Bearer realm="mkt"' };

/** The notes API's 401: an `error` text saying what is wrong with the credential, and a Bearer challenge. */
function unauthorized(problem: Problem): HttpError {
  if (problem.kind === 'missing') return new HttpError(401, 'writing notes needs a personal access token with push scope', CHALLENGE);
  if (problem.kind === 'malformed') return new HttpError(401, problem.reason, CHALLENGE);
  if (problem.credential.kind === 'session') return new HttpError(401, 'session has expired or is not valid', CHALLENGE);
  return new HttpError(401, 'token is not valid (unknown or revoked)', CHALLENGE);
}

export class Access {
  private readonly auth: Authenticator<Caller>;

  constructor(
    accounts: AccountsStore,
    private readonly repos: RepoStore,
  ) {
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

  async canRead(repo: Repo, caller: Caller): Promise<boolean> {
    if (!repo.private) return true;
    if (!caller.user) return false;
    return caller.user.id === repo.owner_id || (await this.repos.permissionOf(repo.id, caller.user.id)) !== undefined;
  }

  /** Whether the account may push at all (the credential is judged by requirePush). */
  async accountCanPush(repo: Repo, user: User): Promise<boolean> {
    return user.id === repo.owner_id || (await this.repos.permissionOf(repo.id, user.id)) === 'push';
  }

  /** The repository if the caller may see it; 404 otherwise (private ones are invisible). */
  async visibleRepo(owner: string, name: string, caller: Caller): Promise<Repo> {
    const repo = await this.repos.findRepo(owner, name);
    if (!repo || !(await this.canRead(repo, caller))) throw new HttpError(404, `repository ${owner}/${name} not found`);
    return repo;
  }

  /**
   * The spec's write rules: no credential 401; a session cookie, a read-only token or an account
   * that cannot push 403. Visibility comes first so a private repository stays a 404.
   */
  async requirePush(repo: Repo, caller: Caller): Promise<User> {
    if (!caller.user) throw unauthorized({ kind: 'missing' });
    if (caller.via === 'session') throw new HttpError(403, 'a session cookie can only read; use a personal access token with push scope');
    if (caller.scope !== 'push') throw new HttpError(403, 'this token has read scope; writing notes needs push scope');
    if (!(await this.accountCanPush(repo, caller.user))) throw new HttpError(403, `${caller.user.name} cannot push to ${repo.owner}/${repo.name}`);
    return caller.user;
  }
}
