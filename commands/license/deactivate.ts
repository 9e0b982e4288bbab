// deactivateRun: `mkt license deactivate --machine ID|auto` — frees that machine's activation slot.
import type { Factory } from '../../src/cli/factory.js';
import { call, finish, licenseClient, readKey, resolveMachine, type ClientFlags, type KeyFlags } from './shared.js';

export interface DeactivateOptions extends ClientFlags, KeyFlags {
  factory: Factory;
  machine: string;
}

export async function deactivateRun(opts: DeactivateOptions): Promise<void> {
  const machine = resolveMachine(opts.machine);
  const key = (await readKey(opts.factory, opts))!;
  const client = await licenseClient(opts.factory, opts);
  const res = await call(() => client.deactivate(key, machine));
  finish(opts.factory, opts.json, { valid: res.success, code: res.code, error: res.message }, [['deactivated', machine], ['message', res.message]], res);
}
