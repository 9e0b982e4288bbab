// keyListRun: `mkt admin key list ITEM` — an item's keys by id and non-secret prefix.
import { NegativeError } from '../../../src/cli/errors.js';
import { printJson, printTable } from '../../../src/cli/output.js';
import { displayPrefix } from '../../../src/crypto/license-key.js';
import { withAdmin, type AdminFlags } from './shared.js';

export interface KeyListOptions extends AdminFlags {
  itemId: string;
}

export async function keyListRun(opts: KeyListOptions): Promise<void> {
  const keys = await withAdmin(opts, (admin) => admin.listKeys(opts.itemId));
  if (!keys) throw new NegativeError(`item not found: ${opts.itemId}`);
  const rows = keys.map((k) => ({ ...k, key_prefix: displayPrefix(k.key_prefix) }));
  if (opts.json) {
    printJson(opts.factory.io, rows);
    return;
  }
  printTable(
    opts.factory.io,
    ['id', 'prefix', 'licensee', 'activations', 'expires', 'revoked'],
    rows.map((k) => [k.id, k.key_prefix, k.licensee, `${k.activation_count}/${k.max_activations ?? '∞'}`, k.expires_at ?? 'never', k.revoked_at ?? '']),
  );
}
