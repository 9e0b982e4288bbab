// Who is calling and what they may do with a hosted repository. Credentials: a personal access
// token (`Authorization: Bearer <t>` or `token <t>`; HTTP Basic with the token as password for
// git), or the `mkt_session` cookie, which authenticates reads only. Private repositories are
// invisible to everyone but their owner and the users granted access.
import type { FastifyRequest } from 'fastify';
import { SESSION_COOKIE, type AccountsStore, type TokenScope, type User } from '../../../../src/store/accounts.js';
import type { Repo, RepoStore } from '../../../../src/store/repos.js';
import { HttpError } from '../../../plugins/errors.js';

export interface Caller {
  user?: User;
  /** How the caller authenticated; `none` for anonymous reads. */
  via: 'token' | 'session' | 'none';
  scope?: TokenScope;
}

const ANONYMOUS: Caller = { via: 'none' };

function presentedToken(header: string): { token?: string; bad?: string } {
  const m = /^(Bearer|token|Basic)\s+(\S+)\s*$/i.exec(header.trim());
  if (!m) return { bad: 'Authorization header must be "Bearer <token>" or "token <token>"' };
  if (m[1]!.toLowerCase() !== 'basic') return { token: m[2]! };
  const decoded = Buffer.from(m[2]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  // git sends `user:token`; a token alone as the user name is accepted too, like GitHub.
  const token = colon < 0 ? decoded : decoded.slice(colon + 1) || decoded.slice(0, colon);
  return token ? { token } : { bad: 'Basic credentials carry no token' };
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}

export class Access {
  constructor(
    private readonly accounts: AccountsStore,
    private readonly repos: RepoStore,
  ) {}

  /** The caller of a request; a credential that is presented but wrong is a 401. */
  async caller(req: FastifyRequest): Promise<Caller> {
    const auth = req.headers.authorization;
    if (typeof auth === 'string' && auth !== '') {
      const p = presentedToken(auth);
      if (p.bad) throw new HttpError(401, p.bad);
      const found = await this.accounts.authenticateToken(p.token!);
      if (!found) throw new HttpError(401, 'token is not valid (unknown or revoked)');
      return { user: found.user, via: 'token', scope: found.scope };
    }
    const session = cookieValue(req.headers.cookie, SESSION_COOKIE);
    if (session) {
      const user = await this.accounts.authenticateSession(session);
      if (!user) throw new HttpError(401, 'session has expired or is not valid');
      return { user, via: 'session' };
    }
    return ANONYMOUS;
  }

  canRead(repo: Repo, caller: Caller): boolean {
    if (!repo.private) return true;
    if (!caller.user) return false;
    return caller.user.id === repo.owner_id || this.repos.permissionOf(repo.id, caller.user.id) !== undefined;
  }

  /** Whether the account may push at all (the credential is judged by requirePush). */
  accountCanPush(repo: Repo, user: User): boolean {
    return user.id === repo.owner_id || this.repos.permissionOf(repo.id, user.id) === 'push';
  }

  /** The repository if the caller may see it; 404 otherwise (private ones are invisible). */
  visibleRepo(owner: string, name: string, caller: Caller): Repo {
    const repo = this.repos.findRepo(owner, name);
    if (!repo || !this.canRead(repo, caller)) throw new HttpError(404, `repository ${owner}/${name} not found`);
    return repo;
  }

  /**
   * The spec's write rules: no credential 401; a session cookie, a read-only token or an account
   * that cannot push 403. Visibility comes first so a private repository stays a 404.
   */
  requirePush(repo: Repo, caller: Caller): User {
    if (!caller.user) throw new HttpError(401, 'writing notes needs a personal access token with push scope', { 'www-authenticate': 'Bearer realm="mkt"' });
    if (caller.via === 'session') throw new HttpError(403, 'a session cookie can only read; use a personal access token with push scope');
    if (caller.scope !== 'push') throw new HttpError(403, 'this token has read scope; writing notes needs push scope');
    if (!this.accountCanPush(repo, caller.user)) throw new HttpError(403, `${caller.user.name} cannot push to ${repo.owner}/${repo.name}`);
    return caller.user;
  }
}
