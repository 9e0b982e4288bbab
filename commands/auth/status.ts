// statusRun: lists each service's profile, token source and credential backend.
import type { Factory } from '../../src/cli/factory.js';
import { printJson, printTable } from '../../src/cli/output.js';
import { envPrefix, SERVICES } from '../../src/config/services.js';
import { tokenAccount } from '../../src/config/credentials.js';

export interface StatusOptions {
  factory: Factory;
  json: boolean;
}

export async function statusRun(opts: StatusOptions): Promise<void> {
  const f = opts.factory;
  const store = await f.credentials();
  const rows = [];
  for (const service of SERVICES) {
    const server = await f.resolveServer(service, {});
    const envToken = f.io.env[`${envPrefix(service)}_TOKEN`];
    const saved = await store.get(tokenAccount(service, server.url));
    const token = envToken && envToken.trim() !== '' ? 'env' : saved ? store.backend : 'none';
    rows.push({ service, server: server.url, server_source: server.source, token });
  }
  if (opts.json) {
    printJson(f.io, { credential_store: store.backend, location: store.location, services: rows });
    return;
  }
  f.io.stderr.write(`Tokens are kept in: ${store.backend === 'keychain' ? store.location : `${store.location} (file, mode 0600; no OS keychain answered)`}\n`);
  printTable(f.io, ['service', 'server', 'from', 'token'], rows.map((r) => [r.service, r.server, r.server_source, r.token]));
}
