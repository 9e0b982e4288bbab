// statusRun: `mkt license status` — the key's status without activating anything.
import type { Factory } from '../../src/cli/factory.js';
import { call, finish, licenseClient, licenseFields, readKey, type ClientFlags, type KeyFlags } from './shared.js';

export interface StatusOptions extends ClientFlags, KeyFlags {
  factory: Factory;
}

export async function statusRun(opts: StatusOptions): Promise<void> {
  const key = (await readKey(opts.factory, opts))!;
  const client = await licenseClient(opts.factory, opts);
  const res = await call(() => client.status(key));
  finish(opts.factory, opts.json, res, [['valid', 'yes'], ['code', res.code ?? 'VALID'], ...licenseFields(res.license)], res);
}
