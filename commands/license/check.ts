// checkRun: `mkt license check` — verifies the stored token offline (signature against the
// stored JWKS, expiry, this machine's fingerprint). No network, and only light modules.
import type { Factory } from '../../src/cli/factory.js';
import { NegativeError, UsageError } from '../../src/cli/errors.js';
import { printFields, printJson } from '../../src/cli/output.js';
import { checkToken, loadToken, machineFingerprint, type OfflineResult } from '../../src/client/license-offline.js';

export interface CheckOptions {
  factory: Factory;
  item?: string;
  machine: string;
  json?: boolean;
}

export async function checkRun(opts: CheckOptions): Promise<void> {
  const f = opts.factory;
  const machine = opts.machine === 'auto' ? machineFingerprint() : opts.machine;
  if (!machine) throw new UsageError('cannot derive a machine fingerprint here (no machine id found); pass --machine ID');
  const loaded = loadToken(f.io.env, opts.item);
  let result: OfflineResult;
  if (!loaded.ok) {
    if (loaded.usage) throw new UsageError(loaded.error);
    result = { valid: false, code: 'NO_TOKEN', error: loaded.error, item: opts.item ?? null, license: null, expires_at: null };
  } else result = checkToken(loaded.entry, machine, f.now().getTime());
  if (opts.json) printJson(f.io, result);
  else if (result.valid) printFields(f.io, [['valid', 'yes'], ['item', result.item], ['license', result.license], ['token expires', result.expires_at]]);
  if (!result.valid) throw new NegativeError(`${result.code}: ${result.error}`);
}
