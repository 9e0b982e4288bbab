// loginRun: reads the token without echo, proves it against the server (as `gh auth login`
// does), and only then saves profile + credential. A refused token or an unreachable server
// saves nothing.
import type { Factory } from '../../src/cli/factory.js';
import { AuthError, NegativeError, UsageError } from '../../src/cli/errors.js';
import { toCliError } from '../../src/cli/api-errors.js';
import { readSecret } from '../../src/cli/io.js';
import { ApiError } from '../../src/client/http.js';
import { proveToken, WrongServiceError, type TokenProof } from '../../src/client/token-check.js';
import { isServiceName, SERVICES, type ServiceName } from '../../src/config/services.js';
import { loadClientConfig, saveClientConfig } from '../../src/config/profiles.js';
import { tokenAccount } from '../../src/config/credentials.js';

export interface LoginOptions {
  factory: Factory;
  service: string;
  server?: string;
}

/** Where a good token for each service comes from, for the refusal's hint. */
const TOKEN_SOURCE: Record<ServiceName, string> = {
  tickets: 'a node keeps its token in the file `token` of its data directory: `mkt auth login tickets < DATA_DIR/token`',
  monitor: "the monitor's token is its MKT_MONITOR_TOKEN (or `token:` in its config file)",
  marketplace: 'create a personal access token with `mkt admin token create USER --scope push`',
};

async function prove(service: ServiceName, url: string, token: string): Promise<TokenProof> {
  try {
    return await proveToken(service, url, token);
  } catch (err) {
    if (err instanceof ApiError && (err.status === 401 || err.status === 403)) {
      throw new AuthError(`token refused by ${service} at ${url}: ${err.message} (HTTP ${err.status}); nothing saved`, TOKEN_SOURCE[service]);
    }
    if (err instanceof WrongServiceError) throw new NegativeError(`${err.message}; nothing saved`, `check --server (or MKT_${service.toUpperCase()}_URL)`);
    const mapped = toCliError(err, service);
    if (mapped instanceof Error) mapped.message = `${mapped.message}; nothing saved`;
    throw mapped;
  }
}

export async function loginRun(opts: LoginOptions): Promise<void> {
  const { io } = opts.factory;
  if (!isServiceName(opts.service)) throw new UsageError(`unknown service "${opts.service}"; choose one of: ${SERVICES.join(', ')}`);
  const service = opts.service;
  const { url, source } = await opts.factory.resolveServer(service, { server: opts.server });
  const token = await readSecret(io, `Token for ${service} at ${url}: `);
  if (token === '') throw new UsageError('no token given (pipe it on stdin or type it at the prompt)');
  const proof = await prove(service, url, token);
  const store = await opts.factory.credentials();
  await store.set(tokenAccount(service, url), token);
  const cfg = loadClientConfig(io.env);
  cfg.profiles[service] = { server: url };
  saveClientConfig(io.env, cfg);
  if (proof.warning) io.stderr.write(`mkt: warning: ${proof.warning}\n`);
  const from = source === 'flag' ? '' : ` (server from ${source === 'env' ? `MKT_${service.toUpperCase()}_URL` : source === 'profile' ? 'the saved profile' : 'the default'})`;
  io.stderr.write(`Logged in to ${service} at ${url}${from}: ${proof.identity}; token kept in ${store.backend === 'keychain' ? 'the OS keychain' : store.location}\n`);
}
