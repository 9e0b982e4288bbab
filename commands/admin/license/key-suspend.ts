// keySuspendRun: `mkt admin key suspend KEY|ID|-` — the key answers SUSPENDED until reinstated; it
// keeps its activations (deactivation still works). A revoked key stays revoked.
import { NegativeError } from '../../../src/cli/errors.js';
import { printJson } from '../../../src/cli/output.js';
import { keyArgument, withAdmin, type AdminFlags } from './shared.js';

export interface KeySuspendOptions extends AdminFlags {
  key: string;
}

export async function keySuspendRun(opts: KeySuspendOptions): Promise<void> {
  const given = await keyArgument(opts);
  const r = await withAdmin(opts, (admin) => admin.suspend(given));
  if (!r) throw new NegativeError('no such license key');
  if (r.outcome === 'revoked') throw new NegativeError(`${r.id} is revoked: revocation is final`);
  if (opts.json) printJson(opts.factory.io, { id: r.id, suspended: true, changed: r.outcome === 'changed' });
  else opts.factory.io.stdout.write(r.outcome === 'changed' ? `suspended ${r.id}\n` : `${r.id} was suspended already\n`);
}
