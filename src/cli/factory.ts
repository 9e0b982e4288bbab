// Factory: what every command gets — streams, environment, and lazy getters for config,
// credentials and HTTP clients, so `--help` loads none of them.
import { UsageError } from './errors.js';
import type { IOStreams } from './io.js';
import { systemIO } from './io.js';
import type { CredentialStore } from '../config/credentials.js';
import type { ClientConfig } from '../config/profiles.js';
import type { ServiceName } from '../config/services.js';
import type { HttpClient } from '../client/http.js';
import type { MarketplaceStores } from '../store/marketplace.js';

export interface ServerFlags {
  server?: string;
}

export interface ResolvedServer {
  url: string;
  source: 'flag' | 'env' | 'profile' | 'default';
}

export interface Factory {
  io: IOStreams;
  now(): Date;
  clientConfig(): Promise<ClientConfig>;
  credentials(): Promise<CredentialStore>;
  resolveServer(service: ServiceName, flags: ServerFlags): Promise<ResolvedServer>;
  /** Token from MKT_<SERVICE>_TOKEN or the saved credential for that server. */
  resolveToken(service: ServiceName, server: string): Promise<string | undefined>;
  http(service: ServiceName, flags: ServerFlags, opts?: { timeoutMs?: number; anonymous?: boolean }): Promise<HttpClient>;
  /**
   * The marketplace's stores for `mkt admin`, opened as the server opens them: PostgreSQL from
   * `databaseUrl` (else $MKT_DATABASE_URL), otherwise SQLite in the data dir. The caller closes them.
   */
  marketplaceStores(target: { dataDir?: string; databaseUrl?: string }): Promise<MarketplaceStores>;
}

function validateUrl(raw: string, what: string): string {
  try {
    const u = new URL(raw);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
    return raw.replace(/\/+$/, '');
  } catch {
    throw new UsageError(`${what} is not an http(s) URL: ${raw}`);
  }
}

export function createFactory(io: IOStreams = systemIO()): Factory {
  let cfg: Promise<ClientConfig> | undefined;
  let creds: Promise<CredentialStore> | undefined;
  const f: Factory = {
    io,
    now: () => new Date(),
    clientConfig() {
      cfg ??= import('../config/profiles.js').then((m) => m.loadClientConfig(io.env));
      return cfg;
    },
    credentials() {
      creds ??= import('../config/credentials.js').then((m) => m.openCredentialStore(io.env));
      return creds;
    },
    async resolveServer(service, flags) {
      if (flags.server) return { url: validateUrl(flags.server, '--server'), source: 'flag' };
      const { envPrefix, DEFAULT_PORTS } = await import('../config/services.js');
      const envName = `${envPrefix(service)}_URL`;
      const fromEnv = io.env[envName];
      if (fromEnv && fromEnv.trim() !== '') return { url: validateUrl(fromEnv.trim(), envName), source: 'env' };
      const profile = (await f.clientConfig()).profiles[service];
      if (profile?.server) return { url: profile.server, source: 'profile' };
      return { url: `http://127.0.0.1:${DEFAULT_PORTS[service]}`, source: 'default' };
    },
    async resolveToken(service, server) {
      const { envPrefix } = await import('../config/services.js');
      const fromEnv = io.env[`${envPrefix(service)}_TOKEN`];
      if (fromEnv && fromEnv.trim() !== '') return fromEnv.trim();
      const { tokenAccount } = await import('../config/credentials.js');
      return (await f.credentials()).get(tokenAccount(service, server));
    },
    async http(service, flags, opts = {}) {
      const { url } = await f.resolveServer(service, flags);
      const token = opts.anonymous ? undefined : await f.resolveToken(service, url);
      const { HttpClient } = await import('../client/http.js');
      return new HttpClient({ baseUrl: url, token, timeoutMs: opts.timeoutMs ?? 30_000, connectTimeoutMs: 5_000 });
    },
    async marketplaceStores(target) {
      const { dataDir } = await import('../config/paths.js');
      const { databaseUrlFrom } = await import('../store/open.js');
      let databaseUrl: string | undefined;
      try {
        databaseUrl = databaseUrlFrom(target.databaseUrl, io.env);
      } catch (err) {
        throw new UsageError((err as Error).message);
      }
      const { openMarketplaceStores } = await import('../store/marketplace.js');
      return openMarketplaceStores({ dataDir: dataDir(target.dataDir, io.env, io.cwd), databaseUrl });
    },
  };
  return f;
}
