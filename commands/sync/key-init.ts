// keyInitRun: `mkt sync key init` — a random master key, wrapped under the account password
// (scrypt N=2^17, r=8, p=1 + secretbox) and stored with PUT. The password is checked against
// the server first, so a typo cannot lock the key under a password nobody knows.
import type { Factory } from '../../src/cli/factory.js';
import { AuthError } from '../../src/cli/errors.js';
import { printFields, printJson } from '../../src/cli/output.js';
import { ApiError } from '../../src/client/http.js';
import { initKey } from '../../src/sync/keys.js';
import { clientFor, type SyncSession } from '../../src/sync/session.js';
import { call, openSession, readPassword, type ClientFlags } from './shared.js';

export interface KeyInitOptions extends ClientFlags {
  factory: Factory;
}

/** The account password, checked by signing in with it (which also refreshes the token). */
export async function checkedPassword(f: Factory, s: SyncSession): Promise<string> {
  const password = await readPassword(f, `Password for ${s.profile.email}: `);
  await call(async () => {
    try {
      await s.saveToken((await clientFor(s.server).auth({ api_key: s.profile.api_key, email: s.profile.email, password })).token);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) throw new AuthError('wrong password');
      throw err;
    }
  });
  return password;
}

export async function keyInitRun(opts: KeyInitOptions): Promise<void> {
  const f = opts.factory;
  const s = await openSession(f, opts);
  const password = await checkedPassword(f, s);
  const r = await call(() => initKey(s, password));
  if (opts.json) return printJson(f.io, r);
  printFields(f.io, [
    ['key id', r.key_id],
    ['key version', r.key_version],
    ['fingerprint', r.fingerprint],
  ]);
  f.io.stderr.write('Sync key created; other devices get it with `mkt sync key unlock`\n');
}
