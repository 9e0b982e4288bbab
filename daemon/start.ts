// Daemon start-up: open the service, build the server, listen, print `listening on`,
// and handle SIGTERM/SIGINT (graceful shutdown) and SIGHUP (reload), telling systemd of each.
import type { FastifyInstance } from 'fastify';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import type { ServiceName } from '../src/config/services.js';
import { systemClock, type Clock } from '../src/util/clock.js';
import { createLogger, flushLogs, LISTENING_ON, type Logger } from './logger.js';
import { SystemdNotifier } from './sd-notify.js';
import { buildServer } from './server.js';
import type { ServeOptions, ServiceModule, ServiceRuntime } from './service.js';
import { SERVICE_LOADERS, type ServiceOptionsMap } from './services/registry.js';
import { resolveOptions } from './service-options.js';

export interface RunningService {
  name: ServiceName;
  url: string;
  app: FastifyInstance;
  runtime: ServiceRuntime;
  close(): Promise<void>;
}

export interface StartOptions<O> extends ServeOptions<O> {
  logger?: Logger;
  clock?: Clock;
  /** Where the `listening on` line and announcements go; default stdout. */
  out?: NodeJS.WritableStream;
}

/** How long in-flight requests may run on after a stop before their connections are cut. */
export const STOP_GRACE_MS = 10_000;

/** The address a service cannot listen on, and why (the socket's error code: EADDRINUSE, EACCES, ...). */
export class ListenError extends Error {
  constructor(
    readonly host: string,
    readonly port: number,
    readonly code: string,
  ) {
    super(`cannot listen on ${hostPort(host, port)}: ${LISTEN_REASONS[code] ?? code}`);
    this.name = 'ListenError';
  }
}

const LISTEN_REASONS: Record<string, string> = {
  EADDRINUSE: 'address in use',
  EACCES: 'permission denied',
  EADDRNOTAVAIL: 'address not available on this machine',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name cannot be resolved now',
};

function hostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

function asListenError(err: unknown, host: string, port: number): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code && (code in LISTEN_REASONS || (err as NodeJS.ErrnoException).syscall === 'listen') ? new ListenError(host, port, code) : err;
}

/**
 * Binds HOST:PORT and lets it go again, so a taken port (or, with port 0 too, a host that is not
 * this machine's) is found before a service opens its store and logs that it is ready, and for
 * `serve all` before any service starts. A port taken in the moment between this and the real
 * listen still fails there, as a ListenError all the same.
 */
export async function checkPortFree(host: string, port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (err) => reject(asListenError(err, host, port)));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

export async function startService<N extends ServiceName>(name: N, opts: StartOptions<ServiceOptionsMap[N]>): Promise<RunningService> {
  const load: () => Promise<ServiceModule<ServiceOptionsMap[N]>> = SERVICE_LOADERS[name];
  if (!load) throw new Error(`unknown service: ${name}`);
  const logger = (opts.logger ?? createLogger({ level: opts.env.MKT_LOG_LEVEL ?? 'info' })).child({ service: name });
  const out = opts.out ?? process.stdout;
  await checkPortFree(opts.host, opts.port);
  mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
  const mod = await load();
  // Once, before anything opens: a misspelt key or a bad value is an OptionsError (a usage error of `mkt serve`).
  const options = resolveOptions(name, mod.options, opts.options, opts.env);
  const runtime = await mod.open({
    server: { host: opts.host, port: opts.port, dataDir: opts.dataDir, configPath: opts.configPath, env: opts.env },
    options,
    logger,
    clock: opts.clock ?? systemClock,
    announce: (line) => out.write(line + '\n'),
  });
  let app: FastifyInstance;
  try {
    app = await buildServer({ service: runtime, logger, timeouts: opts.timeouts });
    await app.listen({ host: opts.host, port: opts.port });
  } catch (err) {
    await runtime.close();
    throw asListenError(err, opts.host, opts.port);
  }
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  const url = `http://${hostPort(opts.host, port)}`;
  out.write(`${LISTENING_ON} ${url}\n`);
  // The same as a log record, for JSON logs and journald (fastify, given no logger, writes none).
  logger.info(`${LISTENING_ON} ${url}`);
  await runtime.start?.(app);
  let closed: Promise<void> | undefined;
  return {
    name,
    url,
    app,
    runtime,
    close() {
      closed ??= (async () => {
        // A keep-alive connection whose request was still running when closing began goes idle
        // later and would hold the close for the whole keep-alive timeout (72 s): sweep idle
        // connections until closed, and cut what is still open after the grace period.
        const sweep = setInterval(() => app.server.closeIdleConnections(), 50);
        const cut = setTimeout(() => app.server.closeAllConnections(), STOP_GRACE_MS);
        try {
          await app.close();
        } finally {
          clearInterval(sweep);
          clearTimeout(cut);
        }
        await runtime.close();
      })();
      return closed;
    },
  };
}

/**
 * Starts listening for SIGTERM/SIGINT now, before the services start, so that a signal that
 * arrives during start-up (say, right after `listening on`) still means a clean shutdown.
 */
export function trapStopSignals(): Promise<string> {
  return new Promise((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
}

/** The one-line STATUS= of a running `mkt serve`: each service and its URL. */
export function serviceStatus(services: RunningService[]): string {
  return services.map((s) => `${s.name} on ${s.url}`).join(', ');
}

export interface RunOptions {
  /** systemd's sd_notify client; default: one for this process's NOTIFY_SOCKET (a no-op without it). */
  notifier?: SystemdNotifier;
}

/**
 * Runs services until SIGTERM/SIGINT; SIGHUP reloads each. Resolves after clean shutdown. Under
 * systemd (NOTIFY_SOCKET) it tells the service manager: READY=1 now (every service listens and has
 * its configuration), RELOADING=1 then READY=1 around each reload, STOPPING=1 when shutdown begins,
 * and WATCHDOG=1 from the event loop in between.
 */
export async function runUntilSignalled(
  services: RunningService[],
  logger: Logger,
  stopSignal: Promise<string> = trapStopSignals(),
  opts: RunOptions = {},
): Promise<void> {
  const notifier = opts.notifier ?? SystemdNotifier.fromEnv(process.env, logger);
  const serving = serviceStatus(services);
  let stopping = false;
  /** One reload at a time: a SIGHUP during a reload runs another after it (RELOADING=1 pairs with one READY=1). */
  let reloads: Promise<void> = Promise.resolve();
  const reload = async (): Promise<void> => {
    if (stopping) return;
    notifier.reloading(`reloading configuration; ${serving}`);
    const failed: string[] = [];
    await Promise.all(
      services.map(async (s) => {
        if (!s.runtime.reload) return;
        try {
          await s.runtime.reload();
          logger.info({ service: s.name }, 'configuration reloaded');
        } catch (err) {
          failed.push(s.name);
          logger.error({ service: s.name, err: (err as Error).message }, 'reload failed; keeping the running configuration');
        }
      }),
    );
    // Serving again either way: a failed reload leaves the previous configuration running.
    if (!stopping) notifier.ready(failed.length ? `reload failed (${failed.join(', ')}): serving the previous configuration; ${serving}` : serving);
  };
  const onHup = (): void => {
    reloads = reloads.then(reload);
  };
  process.on('SIGHUP', onHup);
  notifier.ready(serving);
  notifier.startWatchdog();
  try {
    const signal = await stopSignal;
    stopping = true;
    process.off('SIGHUP', onHup);
    notifier.stopping(`shutting down (${signal})`);
    logger.info({ signal }, 'shutting down');
    const results = await Promise.allSettled(services.map((s) => s.close()));
    for (const r of results) if (r.status === 'rejected') logger.error({ err: String(r.reason) }, 'shutdown error');
    logger.info('stopped');
  } finally {
    notifier.close();
  }
  // Log lines are written from a buffer: every one of them, this last included, goes out
  // before the process may exit.
  await flushLogs(logger);
}
