// accountRun: `mkt sync account` — the signed-in user as the server knows them.
import type { Factory } from '../../src/cli/factory.js';
import { printFields, printJson } from '../../src/cli/output.js';
import { call, openSession, type ClientFlags } from './shared.js';

export interface AccountOptions extends ClientFlags {
  factory: Factory;
}

export async function accountRun(opts: AccountOptions): Promise<void> {
  const s = await openSession(opts.factory, opts);
  const a = await call(() => s.client.account());
  if (opts.json) return printJson(opts.factory.io, a);
  printFields(
    opts.factory.io,
    Object.entries(a).map(([k, v]) => [k, typeof v === 'object' && v !== null ? JSON.stringify(v) : (v as string | number | boolean | null)]),
  );
}
