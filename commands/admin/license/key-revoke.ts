// keyRevokeRun: `mkt admin key revoke KEY|ID|-` — the key stops validating at once.
import { NegativeError, UsageError } from '../../../src/cli/errors.js';
import { readAll } from '../../../src/cli/io.js';
import { withAdmin, type AdminFlags } from './shared.js';

export interface KeyRevokeOptions extends AdminFlags {
  key: string;
}

export async function keyRevokeRun(opts: KeyRevokeOptions): Promise<void> {
  const given = opts.key === '-' ? ((await readAll(opts.factory.io.stdin)).split(/\r?\n/)[0] ?? '').trim() : opts.key.trim();
  if (given === '') throw new UsageError('no key given');
  const id = await withAdmin(opts, (admin) => admin.revoke(given));
  if (!id) throw new NegativeError('no such license key');
  opts.factory.io.stdout.write(`revoked ${id}\n`);
}
