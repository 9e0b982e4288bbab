// tokenCreateRun: `mkt admin token create USER --scope read|push` — prints the token once; only
// its hash is stored.
import { UsageError } from '../../../src/cli/errors.js';
import { printJson } from '../../../src/cli/output.js';
import { withAccounts, type AdminFlags } from './shared.js';

export interface TokenCreateOptions extends AdminFlags {
  user: string;
  scope: string;
  name?: string;
}

export async function tokenCreateRun(opts: TokenCreateOptions): Promise<void> {
  if (opts.scope !== 'read' && opts.scope !== 'push') throw new UsageError(`--scope must be read or push, not ${JSON.stringify(opts.scope)}`);
  const scope = opts.scope;
  const { token, info } = await withAccounts(opts, (admin) => admin.createToken(opts.user, scope, opts.name));
  const { io } = opts.factory;
  if (opts.json) printJson(io, { token, ...info });
  else {
    io.stdout.write(`${token}\n`);
    io.stderr.write(`token ${info.id} (${info.scope}) for ${opts.user}: shown only this once\n`);
  }
}
