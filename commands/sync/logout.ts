// logoutRun: `mkt sync logout` — forgets the token, the keyring and the local sync profile of
// this server on this device. The device stays registered (remove it with `devices rm`).
import type { Factory } from '../../src/cli/factory.js';
import { NegativeError } from '../../src/cli/errors.js';
import { forgetSyncSession } from '../../src/sync/local-session.js';
import type { ClientFlags } from './shared.js';

export interface LogoutOptions extends ClientFlags {
  factory: Factory;
}

export async function logoutRun(opts: LogoutOptions): Promise<void> {
  const f = opts.factory;
  const { url } = await f.resolveServer('marketplace', { server: opts.server });
  const creds = await f.credentials();
  if (!(await forgetSyncSession(f.io.env, creds, url))) throw new NegativeError(`not logged in to sync at ${url}`);
  f.io.stderr.write(`Logged out of sync at ${url}; token and keys removed from this device\n`);
}
