// keyEntitlementsRun: `mkt admin key entitlements KEY|ID|- [--add a,b] [--remove c]` — changes a
// key's named features (a name in both is removed) and prints the list it has afterwards.
import { NegativeError } from '../../../src/cli/errors.js';
import { printJson } from '../../../src/cli/output.js';
import { keyArgument, parseEntitlementList, withAdmin, type AdminFlags } from './shared.js';

export interface KeyEntitlementsOptions extends AdminFlags {
  key: string;
  add?: string;
  remove?: string;
}

export async function keyEntitlementsRun(opts: KeyEntitlementsOptions): Promise<void> {
  const add = parseEntitlementList('--add', opts.add) ?? [];
  const remove = parseEntitlementList('--remove', opts.remove) ?? [];
  const given = await keyArgument(opts);
  const r = await withAdmin(opts, (admin) => admin.changeEntitlements(given, { add, remove }));
  if (!r) throw new NegativeError('no such license key');
  const io = opts.factory.io;
  if (opts.json) printJson(io, r);
  else {
    io.stdout.write(`${r.entitlements.join(',')}\n`);
    if (r.added.length + r.removed.length === 0 && add.length + remove.length > 0) io.stderr.write(`${r.id}: no change\n`);
  }
}
