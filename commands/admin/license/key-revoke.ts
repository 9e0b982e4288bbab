// keyRevokeRun: `mkt admin key revoke KEY|ID|-` — the key stops validating at once.
import { NegativeError } from '../../../src/cli/errors.js';
import { keyArgument, withAdmin, type AdminFlags } from './shared.js';

export interface KeyRevokeOptions extends AdminFlags {
  key: string;
}

export async function keyRevokeRun(opts: KeyRevokeOptions): Promise<void> {
  const given = await keyArgument(opts);
  const id = await withAdmin(opts, (admin) => admin.revoke(given));
  if (!id) throw new NegativeError('no such license key');
  opts.factory.io.stdout.write(`revoked ${id}\n`);
}
