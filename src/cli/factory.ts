// Factory: what every command gets — streams, environment, and lazy getters for config,
// credentials and HTTP clients, so `--help` loads none of them.
import { NegativeError, UsageError } from './errors.js';
import type { IOStreams } from './io.js';
import { systemIO } from './io.js';
import type { CredentialStore } from '../config/credentials.js';
import type { ClientConfig } from '../config/profiles.js';
import type { ServiceName } from '../config/services.js';
import type { HttpClient } from '../client/http.js';
import type { MarketplaceStores } from '../store/marketplace.js';

/** Where `mkt admin` works: the flags of `mkt admin`, and whether this verb may create a marketplace. */
export interface MarketplaceTarget {
  dataDir?: string;
  databaseUrl?: string;
  /** Create the marketplace when the place holds none (`migrate`, a first `user add`); else refuse. */
  create?: boolean;
}

/** The stores, and where they were found (for the line `mkt admin` prints about it). */
export interface OpenedMarketplace extends MarketplaceStores {
  place: {
    /** Absolute data directory (hosted repositories, secrets; the SQLite file unless PostgreSQL). */
    dataDir: string;
    /** The PostgreSQL URL, password redacted; undefined on SQLite. */
    database: string | undefined;
    /** True when this open made the marketplace (it held none before). */
    created: boolean;
  };
}

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
   * `databaseUrl` (else $MKT_DATABASE_URL), otherwise SQLite in the data dir. A place that holds no
   * marketplace is refused (NegativeError, nothing created) unless `create`. The caller closes them.
   */
  marketplaceStores(target: MarketplaceTarget): Promise<OpenedMarketplace>;
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
      const { databaseUrlFrom, openSqlDatabase } = await import('../store/open.js');
      let databaseUrl: string | undefined;
      try {
        databaseUrl = databaseUrlFrom(target.databaseUrl, io.env);
      } catch (err) {
        throw new UsageError((err as Error).message);
      }
      const dir = dataDir(target.dataDir, io.env, io.cwd);
      const hint = 'run `mkt admin --data-dir DIR migrate` (or a first `mkt admin --data-dir DIR user add`) to create one, or name the marketplace with --data-dir, MKT_DATA_DIR or --database-url';
      const { existsSync } = await import('node:fs');
      const { join } = await import('node:path');
      // Checked before opening: opening SQLite creates the directory and the file.
      const sqliteExisted = !databaseUrl && existsSync(join(dir, 'marketplace.db'));
      if (!databaseUrl && !target.create && !sqliteExisted) throw new NegativeError(`no marketplace in ${dir}`, hint);
      const sql = await openSqlDatabase({ dataDir: dir, file: 'marketplace.db', databaseUrl });
      try {
        const { holdsMarketplace } = await import('../store/marketplace-presence.js');
        // On SQLite the file is the marketplace (a server with only some areas migrates only those).
        const held = databaseUrl ? await holdsMarketplace(sql) : sqliteExisted;
        if (!held && !target.create) throw new NegativeError(databaseUrl ? `no marketplace in the database ${sql.label}` : `no marketplace in ${dir}`, hint);
        const { marketplaceStoresOn } = await import('../store/marketplace.js');
        const stores = await marketplaceStoresOn(sql);
        return { ...stores, place: { dataDir: dir, database: databaseUrl ? sql.label : undefined, created: !held } };
      } catch (err) {
        await sql.close().catch(() => undefined);
        throw err;
      }
    },
  };
  return f;
}
