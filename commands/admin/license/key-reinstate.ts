// keyReinstateRun: `mkt admin key reinstate KEY|ID|-` — lifts a suspension; the key validates
// again with the activations it kept. A revoked key cannot be reinstated.
import { NegativeError } from '../../../src/cli/errors.js';
import { printJson } from '../../../src/cli/output.js';
import { keyArgument, withAdmin, type AdminFlags } from './shared.js';

export interface KeyReinstateOptions extends AdminFlags {
  key: string;
}

export async function keyReinstateRun(opts: KeyReinstateOptions): Promise<void> {
  const given = await keyArgument(opts);
  const r = await withAdmin(opts, (admin) => admin.reinstate(given));
  if (!r) throw new NegativeError('no such license key');
  if (r.outcome === 'revoked') throw new NegativeError(`${r.id} is revoked: revocation is final`);
  if (opts.json) printJson(opts.factory.io, { id: r.id, suspended: false, changed: r.outcome === 'changed' });
  else opts.factory.io.stdout.write(r.outcome === 'changed' ? `reinstated ${r.id}\n` : `${r.id} was not suspended\n`);
}
