// tokenRevokeRun: `mkt admin token revoke ID|TOKEN|-` — the token stops working at once.
import { NegativeError, UsageError } from '../../../src/cli/errors.js';
import { readAll } from '../../../src/cli/io.js';
import { withAccounts, type AdminFlags } from './shared.js';

export interface TokenRevokeOptions extends AdminFlags {
  token: string;
}

export async function tokenRevokeRun(opts: TokenRevokeOptions): Promise<void> {
  const given = opts.token === '-' ? ((await readAll(opts.factory.io.stdin)).split(/\r?\n/)[0] ?? '').trim() : opts.token.trim();
  if (given === '') throw new UsageError('no token given');
  const done = await withAccounts(opts, (admin) => admin.revokeToken(given));
  if (!done) throw new NegativeError('no such live token');
  opts.factory.io.stdout.write('revoked\n');
}
