// keyUnlockRun: `mkt sync key unlock` — fetches the key envelope (and a running rotation's new
// one) and opens it with the password on this device.
import type { Factory } from '../../src/cli/factory.js';
import { printFields, printJson } from '../../src/cli/output.js';
import { unlockKey } from '../../src/sync/keys.js';
import { call, openSession, readPassword, type ClientFlags } from './shared.js';

export interface KeyUnlockOptions extends ClientFlags {
  factory: Factory;
}

export async function keyUnlockRun(opts: KeyUnlockOptions): Promise<void> {
  const f = opts.factory;
  const s = await openSession(f, opts);
  const password = await readPassword(f, `Password for ${s.profile.email}: `);
  const r = await call(() => unlockKey(s, password));
  if (opts.json) return printJson(f.io, r);
  printFields(f.io, [
    ['key id', r.key_id],
    ['key version', r.key_version],
    ['fingerprint', r.fingerprint],
    ['keys held', r.keys_held],
    ['rotation', r.pending_key_id === null ? 'none' : `in progress (new key id ${r.pending_key_id})`],
  ]);
}
