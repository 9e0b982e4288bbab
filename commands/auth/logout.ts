// logoutRun: removes the saved token and profile of one service; for the marketplace also the
// sync sign-in at the same server (its token, keyring and sync profile), so nothing stays behind.
import type { Factory } from '../../src/cli/factory.js';
import { NegativeError, UsageError } from '../../src/cli/errors.js';
import { isServiceName, SERVICES } from '../../src/config/services.js';
import { loadClientConfig, saveClientConfig } from '../../src/config/profiles.js';
import { tokenAccount } from '../../src/config/credentials.js';

export interface LogoutOptions {
  factory: Factory;
  service: string;
}

export async function logoutRun(opts: LogoutOptions): Promise<void> {
  const { io } = opts.factory;
  if (!isServiceName(opts.service)) throw new UsageError(`unknown service "${opts.service}"; choose one of: ${SERVICES.join(', ')}`);
  const cfg = loadClientConfig(io.env);
  const server = cfg.profiles[opts.service]?.server ?? (await opts.factory.resolveServer(opts.service, {})).url;
  const creds = await opts.factory.credentials();
  const removed = await creds.delete(tokenAccount(opts.service, server));
  const hadProfile = Boolean(cfg.profiles[opts.service]);
  delete cfg.profiles[opts.service];
  if (hadProfile) saveClientConfig(io.env, cfg);
  const sync = opts.service === 'marketplace' && (await (await import('../../src/sync/local-session.js')).forgetSyncSession(io.env, creds, server));
  if (!removed && !hadProfile && !sync) throw new NegativeError(`not logged in to ${opts.service}`);
  io.stderr.write(`Logged out of ${opts.service} at ${server}${sync ? ' (and of sync there: token and keys removed from this device)' : ''}\n`);
}
