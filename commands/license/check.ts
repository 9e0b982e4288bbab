// checkRun: `mkt license check` — verifies the stored token offline against the vendor's pinned
// public keys (never the cached ones): signature, issuer, type, item, this machine, expiry, and
// with --entitlement the named features the license must carry (issue 33).
import type { Factory } from '../../src/cli/factory.js';
import { NegativeError, UsageError } from '../../src/cli/errors.js';
import { printFields, printJson } from '../../src/cli/output.js';
import { checkToken, DEFAULT_ISSUER, ENTITLEMENT_NAME, loadToken, machineFingerprint, type OfflineResult } from '../../src/client/license-offline.js';
import { loadPinnedKeys } from '../../src/client/license-trust.js';

export interface CheckOptions {
  factory: Factory;
  item?: string;
  machine: string;
  publicKey?: string;
  issuer?: string;
  /** Names the license must carry (repeatable --entitlement). */
  entitlement?: string[];
  json?: boolean;
}

export async function checkRun(opts: CheckOptions): Promise<void> {
  const f = opts.factory;
  const wanted = [...new Set(opts.entitlement ?? [])];
  for (const name of wanted) {
    if (!ENTITLEMENT_NAME.test(name)) throw new UsageError(`--entitlement ${JSON.stringify(name)} is not an entitlement name (lower-case letters, digits, '.', '_', '-'; at most 64)`);
  }
  const machine = opts.machine === 'auto' ? machineFingerprint() : opts.machine;
  if (!machine) throw new UsageError('cannot derive a machine fingerprint here (no machine id found); pass --machine ID');
  // Without a trust anchor from outside the cache there is nothing to check against: that is a
  // set-up mistake of the integrating app (exit 2), not an invalid license (exit 1).
  const pin = loadPinnedKeys(opts.publicKey, f.io.env, f.io.cwd);
  if (!pin.ok) throw new UsageError(pin.error, pin.missing ? 'the vendor publishes its keys at <server>/api/v1/license/jwks.json; ship that file with the app' : undefined);
  const issuer = opts.issuer ?? (f.io.env.MKT_LICENSE_ISSUER?.trim() || DEFAULT_ISSUER);
  const loaded = loadToken(f.io.env, opts.item);
  let result: OfflineResult;
  if (!loaded.ok) {
    if (loaded.usage) throw new UsageError(loaded.error);
    result = { valid: false, code: loaded.malformed ? 'MALFORMED_TOKEN' : 'NO_TOKEN', error: loaded.error, item: opts.item ?? null, license: null, expires_at: null, entitlements: null };
  } else {
    // Without --item the cache says which item this is, so an app must pass --item to pin its own.
    result = checkToken(loaded.entry, { keys: pin.pinned.keys, issuer, item: opts.item ?? loaded.entry.item, fingerprint: machine, nowMs: f.now().getTime(), entitlements: wanted });
  }
  if (opts.json) printJson(f.io, result);
  else if (result.valid) {
    printFields(f.io, [['valid', 'yes'], ['item', result.item], ['license', result.license], ['entitlements', result.entitlements?.length ? result.entitlements.join(',') : 'none'], ['token expires', result.expires_at]]);
  }
  if (!result.valid) throw new NegativeError(`${result.code}: ${result.error}`);
}
