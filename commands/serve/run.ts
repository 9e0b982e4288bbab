// serveRun: validates the serve flags, starts the service(s), and waits for a signal.
import type { Factory } from '../../src/cli/factory.js';
import { UnreachableError, UsageError, type CliError } from '../../src/cli/errors.js';
import { dataDir } from '../../src/config/paths.js';
import { DEFAULT_PORTS, isServiceName, type ServiceName } from '../../src/config/services.js';
import type { ServerTimeouts } from '../../daemon/timeouts.js';
import type { ServiceOptionsMap } from '../../daemon/services/registry.js';

export interface ServeRunOptions {
  factory: Factory;
  service: string;
  host: string;
  port?: string;
  dataDir?: string;
  config?: string;
  token?: string;
  peer?: string[];
  syncInterval?: string;
  /** Tickets: `90d`, `12h`, `30m`, `45s` or seconds (parseDuration). */
  tombstoneMaxAge?: string;
  headersTimeout?: string;
  requestTimeout?: string;
  idleTimeout?: string;
  keepAliveTimeout?: string;
  /** Marketplace: base of signed and checkout URLs; `payments`: the sync payment provider. */
  publicUrl?: string;
  /** commander refuses other values (`.choices`); the marketplace's schema checks it again. */
  payments?: 'local' | 'stripe';
  /** Marketplace: PostgreSQL URL (else $MKT_DATABASE_URL, else SQLite). */
  databaseUrl?: string;
}

function parsePort(s: string): number {
  const n = Number(s);
  if (!/^\d+$/.test(s) || n > 65535) throw new UsageError(`--port must be an integer from 0 to 65535, got ${s}`);
  return n;
}

/** The `--*-timeout` flags (seconds) as ServeOptions.timeouts (milliseconds). */
function parseTimeouts(opts: ServeRunOptions): Partial<ServerTimeouts> {
  const out: Partial<ServerTimeouts> = {};
  const flags = { headersMs: ['--headers-timeout', opts.headersTimeout], requestMs: ['--request-timeout', opts.requestTimeout], idleMs: ['--idle-timeout', opts.idleTimeout], keepAliveMs: ['--keep-alive-timeout', opts.keepAliveTimeout] } as const;
  for (const [key, [flag, raw]] of Object.entries(flags) as [keyof typeof flags, readonly [string, string | undefined]][]) {
    if (raw === undefined) continue;
    const s = Number(raw);
    if (!Number.isFinite(s) || s <= 0 || s > 24 * 3600) throw new UsageError(`${flag} must be a positive number of seconds (at most 86400), got ${raw}`);
    out[key] = Math.round(s * 1000);
  }
  return out;
}

/** Each service's options from the flags it reads: the flags another service reads are not its options. */
function serviceOptions(opts: ServeRunOptions, syncIntervalMs: number | undefined, tombstoneMaxAgeMs: number | undefined): ServiceOptionsMap {
  return {
    marketplace: { publicUrl: opts.publicUrl, syncPayments: opts.payments, databaseUrl: opts.databaseUrl },
    monitor: { databaseUrl: opts.databaseUrl },
    tickets: { token: opts.token, peers: opts.peer ?? [], syncIntervalMs, tombstoneMaxAgeMs },
  };
}

/**
 * A socket the server cannot listen on, with what to do about it. The machine refusing (port
 * taken, privileged port) is exit 3, like a database it cannot reach; a --host that is not an
 * address of this machine is the command line's mistake, exit 2 (docs/running.md).
 */
function listenFailure(err: { message: string; code: string }, all: boolean): CliError {
  if (err.code === 'EADDRINUSE') {
    return new UnreachableError(err.message, all ? 'another process holds the port; stop it, or start the services one by one with `mkt serve SERVICE --port N`' : 'another process holds the port; pick one with --port N (or --port 0 for a free one)');
  }
  if (err.code === 'EACCES') return new UnreachableError(err.message, 'ports below 1024 need privileges; pick one with --port N');
  return new UsageError(err.message, '--host must name an address of this machine (127.0.0.1, ::1, 0.0.0.0, ...)');
}

export async function serveRun(opts: ServeRunOptions): Promise<void> {
  const { io } = opts.factory;
  const { availableServices } = await import('../../daemon/services/registry.js');
  const available = availableServices();
  let names: ServiceName[];
  if (opts.service === 'all') names = available;
  else if (isServiceName(opts.service) && available.includes(opts.service)) names = [opts.service];
  else throw new UsageError(`unknown service "${opts.service}"; choose one of: ${[...available, 'all'].join(', ')}`);
  if (opts.service === 'all' && opts.port !== undefined) throw new UsageError('--port cannot be used with `serve all`: each service listens on its default port');
  const interval = opts.syncInterval === undefined ? undefined : Number(opts.syncInterval);
  if (interval !== undefined && (!Number.isFinite(interval) || interval <= 0)) throw new UsageError(`--sync-interval must be a positive number of seconds, got ${opts.syncInterval}`);
  let tombstoneMaxAgeMs: number | undefined;
  if (opts.tombstoneMaxAge !== undefined) {
    // The config key's own parser: the flag and `tombstone_max_age` take the same words.
    const { parseDuration } = await import('../../daemon/services/tickets/config.js');
    tombstoneMaxAgeMs = parseDuration(opts.tombstoneMaxAge);
    if (tombstoneMaxAgeMs === undefined) throw new UsageError(`--tombstone-max-age must be a positive duration such as 90d, 12h, 30m or 3600 (seconds), got ${JSON.stringify(opts.tombstoneMaxAge)}`);
  }
  const timeouts = parseTimeouts(opts);
  const { databaseUrlFrom } = await import('../../src/store/open.js');
  try {
    // Checked before anything starts: a malformed URL is the operator's input.
    databaseUrlFrom(opts.databaseUrl, io.env);
  } catch (err) {
    throw new UsageError(`${(err as Error).message} (--database-url or MKT_DATABASE_URL)`);
  }

  const port = opts.port !== undefined ? parsePort(opts.port) : undefined;
  const { startService, runUntilSignalled, trapStopSignals, checkPortFree } = await import('../../daemon/start.js');
  const stopSignal = trapStopSignals();
  const { createLogger } = await import('../../daemon/logger.js');
  const logger = createLogger({ level: io.env.MKT_LOG_LEVEL ?? 'info' });
  const dir = dataDir(opts.dataDir, io.env, io.cwd);
  const options = serviceOptions(opts, interval === undefined ? undefined : interval * 1000, tombstoneMaxAgeMs);
  // RSS flat after warm-up under a modest load, not V8's young generation doubling for minutes;
  // grown under a heavy one (daemon/young-generation.ts). bin/mkt has held it already, before the
  // daemon's modules loaded; this covers every other way in (a test, `node dist/…`).
  const stopGoverning = (await import('../../daemon/young-generation.js')).governYoungGeneration({
    onChange: (growing, share) => logger.debug({ scavenges: `${(share * 100).toFixed(1)} %` }, growing ? 'young generation may grow' : 'young generation held'),
  });
  const started = [];
  try {
    // Every port first: one that is taken stops `serve all` before any service has started.
    for (const name of names) await checkPortFree(opts.host, port ?? DEFAULT_PORTS[name]);
    for (const name of names) {
      const place = {
        host: opts.host,
        port: port ?? DEFAULT_PORTS[name],
        dataDir: dir,
        configPath: opts.config ?? (io.env.MKT_CONFIG && io.env.MKT_CONFIG.trim() !== '' ? io.env.MKT_CONFIG : undefined),
        env: io.env,
        timeouts,
        logger,
        out: io.stdout,
      };
      // One call per name, so that each service is handed its own options' type.
      if (name === 'marketplace') started.push(await startService(name, { ...place, options: options.marketplace }));
      else if (name === 'monitor') started.push(await startService(name, { ...place, options: options.monitor }));
      else started.push(await startService(name, { ...place, options: options.tickets }));
    }
  } catch (err) {
    stopGoverning();
    await Promise.allSettled(started.map((s) => s.close()));
    const e = err as NodeJS.ErrnoException;
    if (e.name === 'ListenError') throw listenFailure(e as NodeJS.ErrnoException & { code: string }, opts.service === 'all');
    // A bad configuration file or service option is the operator's input: a usage error listing every problem.
    if (e.name === 'ConfigError' || e.name === 'OptionsError') throw new UsageError(e.message);
    throw err;
  }
  await runUntilSignalled(started, logger, stopSignal).finally(stopGoverning);
}
