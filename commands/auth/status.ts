// statusRun: lists each service's profile, token source and credential backend, and under the
// marketplace the sync sign-ins this device holds (app, email, device, expiry; never a secret).
import type { Factory } from '../../src/cli/factory.js';
import { printJson, printTable } from '../../src/cli/output.js';
import { envPrefix, SERVICES } from '../../src/config/services.js';
import { tokenAccount } from '../../src/config/credentials.js';
import { syncSessions, type SyncSessionSummary } from '../../src/sync/local-session.js';

export interface StatusOptions {
  factory: Factory;
  json: boolean;
}

function expiry(s: SyncSessionSummary): string {
  if (s.token === 'none') return 'no token (run `mkt sync login`)';
  if (!s.expires_at) return 'unknown';
  return s.expired ? `${s.expires_at} (expired: run \`mkt sync login\`)` : s.expires_at;
}

export async function statusRun(opts: StatusOptions): Promise<void> {
  const f = opts.factory;
  const store = await f.credentials();
  const sync = await syncSessions(f.io.env, store, f.now());
  const rows = [];
  for (const service of SERVICES) {
    const server = await f.resolveServer(service, {});
    const envToken = f.io.env[`${envPrefix(service)}_TOKEN`];
    const saved = await store.get(tokenAccount(service, server.url));
    const token = envToken && envToken.trim() !== '' ? 'env' : saved ? store.backend : 'none';
    rows.push({ service, server: server.url, server_source: server.source, token, ...(service === 'marketplace' ? { sync } : {}) });
  }
  if (opts.json) {
    printJson(f.io, { credential_store: store.backend, location: store.location, services: rows });
    return;
  }
  f.io.stderr.write(`Tokens are kept in: ${store.backend === 'keychain' ? store.location : `${store.location} (file, mode 0600; no OS keychain answered)`}\n`);
  printTable(f.io, ['service', 'server', 'from', 'token'], rows.map((r) => [r.service, r.server, r.server_source, r.token]));
  if (sync.length === 0) return;
  // The heading goes where the other human-only line goes in a pipe, so stdout stays rows.
  const heading = 'Sync sign-ins (marketplace, `mkt sync login`):\n';
  if (f.io.stdout.isTTY) f.io.stdout.write('\n' + heading);
  else f.io.stderr.write(heading);
  printTable(
    f.io,
    ['server', 'app', 'email', 'device', 'token', 'expires', 'keys'],
    sync.map((s) => [s.server, s.app_name ?? '', s.email, s.device_id ? `${s.device_name ?? ''} (${s.device_id})` : 'not registered', s.token, expiry(s), s.keys_held ? 'held' : 'none']),
  );
}
