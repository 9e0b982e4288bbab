// keySuspendRun and keyReinstateRun: `mkt admin key suspend|reinstate KEY|ID|-`. A suspended key
// answers SUSPENDED until reinstated and keeps its activations (deactivation still works); a
// reinstated one validates again with them. A revoked key stays revoked: revocation is final.
import { NegativeError } from '../../../src/cli/errors.js';
import { printJson } from '../../../src/cli/output.js';
import { keyArgument, withAdmin, type AdminFlags } from './shared.js';

export interface KeyStandingOptions extends AdminFlags {
  key: string;
}

async function setSuspended(opts: KeyStandingOptions, suspended: boolean): Promise<void> {
  const given = await keyArgument(opts);
  const r = await withAdmin(opts, (admin) => (suspended ? admin.suspend(given) : admin.reinstate(given)));
  if (!r) throw new NegativeError('no such license key');
  if (r.outcome === 'revoked') throw new NegativeError(`${r.id} is revoked: revocation is final`);
  const changed = r.outcome === 'changed';
  if (opts.json) printJson(opts.factory.io, { id: r.id, suspended, changed });
  else if (suspended) opts.factory.io.stdout.write(changed ? `suspended ${r.id}\n` : `${r.id} was suspended already\n`);
  else opts.factory.io.stdout.write(changed ? `reinstated ${r.id}\n` : `${r.id} was not suspended\n`);
}

export function keySuspendRun(opts: KeyStandingOptions): Promise<void> {
  return setSuspended(opts, true);
}

export function keyReinstateRun(opts: KeyStandingOptions): Promise<void> {
  return setSuspended(opts, false);
}
