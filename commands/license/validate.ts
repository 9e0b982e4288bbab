// validateRun: `mkt license validate` — is the key valid (for this machine), optionally activating it.
import type { Factory } from '../../src/cli/factory.js';
import { UsageError } from '../../src/cli/errors.js';
import { call, finish, licenseClient, licenseFields, readKey, resolveMachine, type ClientFlags, type KeyFlags } from './shared.js';

export interface ValidateOptions extends ClientFlags, KeyFlags {
  factory: Factory;
  machine?: string;
  machineName?: string;
  activate?: boolean;
}

export async function validateRun(opts: ValidateOptions): Promise<void> {
  if (opts.activate && opts.machine === undefined) throw new UsageError('--activate needs --machine ID (or --machine auto)');
  const machine = opts.machine === undefined ? undefined : resolveMachine(opts.machine);
  const key = (await readKey(opts.factory, opts))!;
  const client = await licenseClient(opts.factory, opts);
  const res = await call(() => client.validate({ key, machine_id: machine, machine_name: opts.machineName, activate: opts.activate || undefined }));
  const fields: [string, string | number | null | undefined][] = [['valid', 'yes'], ['code', res.code], ...licenseFields(res.license)];
  if (machine !== undefined) fields.push(['machine', res.activated ? `${machine} (activated now)` : machine]);
  finish(opts.factory, opts.json, res, fields, res);
}
