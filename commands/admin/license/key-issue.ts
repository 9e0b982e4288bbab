// keyIssueRun: `mkt admin key issue ITEM` — new keys, printed once (only their hashes are kept).
import { NegativeError, UsageError } from '../../../src/cli/errors.js';
import { printJson, printTable } from '../../../src/cli/output.js';
import { parseBudget, parseEntitlementList, parseExpiry, parseMax, withAdmin, type AdminFlags } from './shared.js';

export interface KeyIssueOptions extends AdminFlags {
  itemId: string;
  count?: string;
  maxActivations?: string;
  expires?: string;
  licensee?: string;
  entitlements?: string;
  maxDeactivations?: string;
  per?: string;
}

export async function keyIssueRun(opts: KeyIssueOptions): Promise<void> {
  const count = Number(opts.count ?? '1');
  if (!Number.isInteger(count) || count < 1 || count > 10_000) throw new UsageError(`--count must be an integer from 1 to 10000, not ${JSON.stringify(opts.count)}`);
  const max = parseMax(opts.maxActivations);
  const expiresAt = parseExpiry(opts.expires);
  const entitlements = parseEntitlementList('--entitlements', opts.entitlements) ?? [];
  const budget = parseBudget(opts.maxDeactivations, opts.per);
  const io = opts.factory.io;
  const keys = await withAdmin(opts, async (admin) => {
    if (!(await admin.store.getItem(opts.itemId))) throw new NegativeError(`item not found: ${opts.itemId}`);
    return admin.issueKeys({ itemId: opts.itemId, count, maxActivations: max, expiresAt, licensee: opts.licensee ?? null, entitlements, ...budget });
  });
  // Keygen's choice: a past expiry is accepted (back-dated keys have their uses), the keys are
  // born expired; a warning says so, since it is more often a typo.
  if (expiresAt !== null && Date.parse(expiresAt) <= opts.factory.now().getTime()) io.stderr.write(`mkt: warning: --expires ${opts.expires} is in the past: the keys are issued already expired\n`);
  if (opts.json) printJson(io, keys);
  else if (!io.stdout.isTTY) for (const k of keys) io.stdout.write(`${k.key}\n`);
  else
    printTable(
      io,
      ['id', 'key', 'max activations', 'expires', 'entitlements'],
      keys.map((k) => [k.id, k.key, k.max_activations ?? 'unlimited', k.expires_at ?? 'never', k.entitlements.join(',')]),
    );
  io.stderr.write(`${keys.length} key${keys.length === 1 ? '' : 's'} issued for ${opts.itemId}; they are shown only now (the marketplace keeps only keyed hashes)\n`);
}
