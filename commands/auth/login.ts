// loginRun: reads the token without echo and saves profile + credential.
import type { Factory } from '../../src/cli/factory.js';
import { UsageError } from '../../src/cli/errors.js';
import { readSecret } from '../../src/cli/io.js';
import { isServiceName, SERVICES } from '../../src/config/services.js';
import { loadClientConfig, saveClientConfig } from '../../src/config/profiles.js';
import { tokenAccount } from '../../src/config/credentials.js';

export interface LoginOptions {
  factory: Factory;
  service: string;
  server: string;
}

export async function loginRun(opts: LoginOptions): Promise<void> {
  const { io } = opts.factory;
  if (!isServiceName(opts.service)) throw new UsageError(`unknown service "${opts.service}"; choose one of: ${SERVICES.join(', ')}`);
  const { url } = await opts.factory.resolveServer(opts.service, { server: opts.server });
  const token = await readSecret(io, `Token for ${opts.service} at ${url}: `);
  if (token === '') throw new UsageError('no token given (pipe it on stdin or type it at the prompt)');
  const store = await opts.factory.credentials();
  await store.set(tokenAccount(opts.service, url), token);
  const cfg = loadClientConfig(io.env);
  cfg.profiles[opts.service] = { server: url };
  saveClientConfig(io.env, cfg);
  io.stderr.write(`Logged in to ${opts.service} at ${url}; token kept in ${store.backend === 'keychain' ? 'the OS keychain' : store.location}\n`);
}
