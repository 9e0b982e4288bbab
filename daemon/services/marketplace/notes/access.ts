// What a caller may do with a hosted repository: private repositories are invisible to everyone
// but their owner and the users granted access; writing needs a personal access token with push
// scope of an account allowed to push. Answers are outcomes; the routes say them in HTTP.
import type { TokenScope, User } from '../../../../src/store/accounts.js';
import type { Repo, RepoStore } from '../../../../src/store/repos.js';

export interface Caller {
  user?: User;
  /** How the caller authenticated; `none` for anonymous reads. */
  via: 'token' | 'session' | 'none';
  scope?: TokenScope;
}

/** Why a caller may not write to a repository it can see. */
export type PushRefusal =
  | { kind: 'unauthenticated' }
  | { kind: 'session_cannot_write' }
  | { kind: 'read_scope_token' }
  | { kind: 'no_push_right'; user: string; repo: string };

export class Access {
  constructor(private readonly repos: RepoStore) {}

  async canRead(repo: Repo, caller: Caller): Promise<boolean> {
    if (!repo.private) return true;
    if (!caller.user) return false;
    return caller.user.id === repo.owner_id || (await this.repos.permissionOf(repo.id, caller.user.id)) !== undefined;
  }

  /** Whether the account may push at all (the credential is judged by pushRight). */
  async accountCanPush(repo: Repo, user: User): Promise<boolean> {
    return user.id === repo.owner_id || (await this.repos.permissionOf(repo.id, user.id)) === 'push';
  }

  /** The repository if the caller may see it; undefined otherwise (private ones are invisible). */
  async visibleRepo(owner: string, name: string, caller: Caller): Promise<Repo | undefined> {
    const repo = await this.repos.findRepo(owner, name);
    return repo && (await this.canRead(repo, caller)) ? repo : undefined;
  }

  /**
   * The spec's write rules: no credential is unauthenticated; a session cookie, a read-only token
   * or an account that cannot push is refused. Callers judge visibility first, so a private
   * repository stays missing.
   */
  async pushRight(repo: Repo, caller: Caller): Promise<{ kind: 'ok'; user: User } | PushRefusal> {
    if (!caller.user) return { kind: 'unauthenticated' };
    if (caller.via === 'session') return { kind: 'session_cannot_write' };
    if (caller.scope !== 'push') return { kind: 'read_scope_token' };
    if (!(await this.accountCanPush(repo, caller.user))) return { kind: 'no_push_right', user: caller.user.name, repo: `${repo.owner}/${repo.name}` };
    return { kind: 'ok', user: caller.user };
  }
}
