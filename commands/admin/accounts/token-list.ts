// tokenListRun: `mkt admin token list [USER]` — personal access tokens by id, user, name and
// scope, revoked ones included. Never a token or its hash: only the digest is stored, and it is
// not shown either.
import { NegativeError } from '../../../src/cli/errors.js';
import { printJson, printTable } from '../../../src/cli/output.js';
import { withAccounts, type AdminFlags } from './shared.js';

export interface TokenListOptions extends AdminFlags {
  user?: string;
}

export async function tokenListRun(opts: TokenListOptions): Promise<void> {
  const tokens = await withAccounts(opts, async (admin) => {
    if (opts.user === undefined) return admin.accounts.listAllTokens();
    const u = await admin.accounts.findUserByName(opts.user);
    if (!u) throw new NegativeError(`no user ${JSON.stringify(opts.user)}`);
    return (await admin.accounts.listTokens(u.id)).map((t) => ({ ...t, user: u.name }));
  });
  const { io } = opts.factory;
  const rows = tokens.map((t) => ({ id: t.id, user: t.user, user_id: t.user_id, name: t.name, scope: t.scope, created_at: t.created_at, revoked_at: t.revoked_at }));
  if (opts.json) printJson(io, rows);
  else printTable(io, ['id', 'user', 'name', 'scope', 'created', 'revoked'], rows.map((t) => [t.id, t.user, t.name, t.scope, t.created_at, t.revoked_at ?? '']));
}
