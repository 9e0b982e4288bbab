// `mkt serve monitor`: loads the YAML config, runs the check engine and the mesh poller, prunes
// history daily, and serves the API. SIGHUP re-reads the config; a bad file keeps the old one.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CronJob } from 'cron';
import type { ServiceContext, ServiceRuntime } from '../../service.js';
import { emptyMonitorConfig, loadMonitorConfig, type MonitorConfig } from '../../../src/config/monitor.js';
import { VERSION } from '../../../src/version.js';
import { StoreUnavailableError } from '../../../src/store/sql.js';
import { FixedWindowLimiter } from '../../plugins/rate-limit.js';
import { BEARER, BEARER_SCHEME } from '../../plugins/openapi.js';
import { AlertSender } from './alerts.js';
import { alertRoutes } from './alert-routes.js';
import { CheckEngine } from './engine.js';
import { Mesh } from './mesh.js';
import { ConfirmGate } from './confirm.js';
import { installMonitorGuard, monitorRoutes, tokenRequired } from './routes.js';
import { StatusCache } from './status-cache.js';
import { MonitorMetrics } from './metrics.js';
import { MaintenanceSchedule } from './maintenance.js';
import { ClusterCoordinator, newInstanceId } from './cluster.js';
import { openMonitorStore } from './stores.js';
import { monitorOptions, type MonitorOptions } from './options.js';
import { PingKeys } from './ping-keys.js';
import { pingRoutes } from './ping-routes.js';
import { SilenceGate } from './silence-gate.js';
import { silenceRoutes } from './silences.js';

export const options = monitorOptions;

function readConfig(configPath: string | undefined, dataDir: string): MonitorConfig | undefined {
  const file = configPath ?? join(dataDir, 'monitor.yaml');
  if (configPath === undefined && !existsSync(file)) return undefined;
  return loadMonitorConfig(file);
}

/** Secrets in a file anyone on the host may read deserve a warning (systemd's EnvironmentFile is the place). */
function secretsReadableByAll(c: MonitorConfig): boolean {
  if (!c.file || c.file === '(defaults)') return false;
  const hasSecret = Boolean(c.token) || (c.mesh?.peers.some((p) => p.token) ?? false);
  try {
    return hasSecret && (statSync(c.file).mode & 0o004) !== 0;
  } catch {
    return false;
  }
}

export async function open(ctx: ServiceContext<MonitorOptions>): Promise<ServiceRuntime> {
  const { server, options, logger, clock } = ctx;
  const now = (): number => clock.now();
  let config = readConfig(server.configPath, server.dataDir) ?? emptyMonitorConfig();
  if (!config.file || config.file === '(defaults)') logger.warn({ file: join(server.dataDir, 'monitor.yaml') }, 'no monitor configuration; running with no targets');
  const tokenOf = (c: MonitorConfig): string | undefined => {
    const env = server.env.MKT_MONITOR_TOKEN?.trim();
    return env ? env : c.token?.trim() || undefined;
  };
  const instanceId = newInstanceId();
  const opened = await openMonitorStore({ dataDir: server.dataDir, databaseUrl: options.databaseUrl, instanceId });
  const store = opened.store;
  // One warning when PostgreSQL goes and one info line when it is back: the checks and lease
  // rounds that fail meanwhile log at debug, not a line each.
  opened.cluster?.db.logAvailability(logger);
  // The window lives in the store (monitor.db, or the cluster's database): a restart does not hand
  // out a fresh allowance, and a cluster shares one.
  const limiterFor = (c: MonitorConfig): FixedWindowLimiter =>
    new FixedWindowLimiter({ limit: c.rateLimit.requests, windowMs: c.rateLimit.windowMs, now, windows: store.windows, scope: 'monitor-rate' });
  let limiter = limiterFor(config);
  // Windows are evaluated lazily at each check: nothing is precomputed, so a reload is free.
  let schedule = new MaintenanceSchedule(config.maintenance);
  const cache = new StatusCache(store, now, () => schedule);
  const alerts = new AlertSender(config.alerts, logger.child({ component: 'alerts' }), options.alertBackoffMs, { store, config, env: server.env, now, tlsCa: options.tlsCa });
  // Every alert passes the silences first (the store's, so a cluster shares them).
  const gated = new SilenceGate({ store, inner: alerts, logger: logger.child({ component: 'alerts' }), now });
  const metrics = new MonitorMetrics(() => cache.all(config));
  // Mesh confirmation reads the mesh poller's cache (the mesh is built below).
  const confirm = new ConfirmGate({ config: () => config, mesh: () => mesh, logger: logger.child({ component: 'confirm' }), now });
  const engine = new CheckEngine({ store, logger: logger.child({ component: 'checks' }), clock, alerts: gated, tlsCa: options.tlsCa, maintenance: () => schedule, gate: confirm, owns: opened.cluster ? (t: string): boolean => cluster?.owns(t) ?? false : undefined, onResult: (t, snaps, kind) => {
    cache.invalidate(t, snaps);
    metrics.observe(t, kind, snaps);
    confirm.observe(t, snaps);
  } });
  engine.apply(config);
  const pingKeys = new PingKeys(store.heartbeats, now);
  const refreshKeys = (c: MonitorConfig): Promise<void> => pingKeys.refresh(c).catch((err: Error) => logger.error({ err: err.message }, 'reading the ping keys failed; pings answer from the previous configuration'));
  await refreshKeys(config);
  // On PostgreSQL: leases decide which instance checks which target.
  const cluster: ClusterCoordinator | undefined = opened.cluster
    ? new ClusterCoordinator({ leases: opened.cluster.leases, logger: logger.child({ component: 'cluster' }), version: VERSION, config: () => config, onAcquired: (ts: string[]): void => engine.acquired(ts), busy: (t: string): boolean => engine.busy(t) })
    : undefined;
  if (cluster) {
    const { pgStatementsSent } = await import('../../../src/store/sql-pg.js');
    metrics.watchCluster(() => ({ ...cluster.stats, held: cluster.ownedCount(), statements: pgStatementsSent() }));
  }
  // Checks the other instances record reach this one's status cache.
  await opened.cluster?.pg.onChecks((notices) => {
    for (const n of notices) {
      cache.invalidate(n.target, n.snapshot ? [n.snapshot] : [], false);
      // A ping another instance took may move a heartbeat deadline this one keeps.
      engine.signalled(n.target);
    }
  });
  const mesh = new Mesh(config, logger.child({ component: 'mesh' }), now);
  const warnReadable = (c: MonitorConfig): void => {
    if (secretsReadableByAll(c)) logger.warn({ file: c.file }, 'the configuration holds a token and is readable by every user: chmod 0640 it, or put MKT_MONITOR_TOKEN in the environment file');
  };
  warnReadable(config);
  if (!tokenOf(config)) logger.warn('no API token configured (token in the config or MKT_MONITOR_TOKEN): the API is open to anyone who can reach it');
  logger.info({ instance: config.name, targets: config.targets.length, mesh: mesh.enabled, dashboard: config.dashboard, store: opened.label, ...(cluster ? { cluster_instance: instanceId } : {}) }, 'monitor ready');

  const prune = async (): Promise<void> => {
    const removed = (await store.silences.prune(now())) + (await store.prune({ rawBeforeMs: now() - config.retentionDays * 86_400_000, rollupsBeforeMs: now() - config.rollupRetentionDays * 86_400_000 }));
    if (removed > 0) logger.info({ removed, retention_days: config.retentionDays, rollup_retention_days: config.rollupRetentionDays }, 'pruned old history');
  };
  const pruneJob = CronJob.from({ cronTime: '17 3 * * *', onTick: () => void prune(), start: false });

  // Read live by the guard and by the document, so a SIGHUP that changes the token or badges changes both.
  const guard = { token: () => tokenOf(config), limiter: () => limiter, badgesPublic: () => config.badges === 'public' };
  return {
    openapi: { title: 'mkt monitor', version: VERSION, description: 'Health checks, uptime, latency, incidents and the peer mesh (spec service A).' },
    securitySchemes: BEARER_SCHEME,
    operationSecurity: (route) => (tokenRequired(route, guard) ? BEARER : []),
    async register(app) {
      // On the root instance: /openapi.json needs the token and counts against the limit too.
      installMonitorGuard(app, guard);
      // For load balancers and probes (public, not in the API document): 200 while the store
      // answers, else 503 {"error"} (StoreUnavailableError), so traffic moves to another instance.
      app.get('/healthz', { config: { public: true }, schema: { hide: true } }, async () => {
        await opened.sql.value('SELECT 1');
        return { status: 'ok', engine: opened.sql.engine };
      });
      await app.register(async (scope) => monitorRoutes(scope, { config: () => config, store, cache, mesh, metrics, schedule: () => schedule, now, confirm, cluster, pingKeys }));
      // Its own scope: its content-type parser (any body is a log) stays off the API's routes.
      await app.register(async (scope) => pingRoutes(scope, { keys: pingKeys, engine, now }));
      await app.register(async (scope) => silenceRoutes(scope, { config: () => config, store, now }));
      await app.register(async (scope) => alertRoutes(scope, { channels: () => alerts.list(), store }));
    },
    async start(app) {
      // `/` is where a newcomer looks first: say whether the page is served there.
      const addr = app.server.address();
      const port = typeof addr === 'object' && addr ? addr.port : server.port;
      if (config.dashboard) logger.info({ url: `http://${server.host.includes(':') ? `[${server.host}]` : server.host}:${port}/` }, 'dashboard on');
      else logger.info('dashboard off: GET / answers 404 saying so; set `dashboard: true` in the configuration and restart to serve it (docs/monitor.md#dashboard)');
      await prune();
      pruneJob.start();
      // Before the first round of checks, which would compete with it for the event loop.
      cache.start(() => config.targets, (err) => logger.warn({ err }, 'warming the status cache failed; requests build statuses themselves'));
      engine.start();
      // A lost database is logged once by the store (logAvailability); each round's failure then is debug.
      cluster?.start((err: unknown) => logger[err instanceof StoreUnavailableError ? 'debug' : 'warn']({ err: (err as Error).message }, 'cluster lease round failed; retrying'));
      mesh.start();
    },
    async reload() {
      const next = readConfig(server.configPath, server.dataDir);
      if (!next) throw new Error('the configuration file is gone; keeping the running configuration');
      if (next.dashboard !== config.dashboard) logger.warn('turning the dashboard on or off takes a restart');
      const limitChanged = next.rateLimit.requests !== config.rateLimit.requests || next.rateLimit.windowMs !== config.rateLimit.windowMs;
      config = next;
      schedule = new MaintenanceSchedule(config.maintenance);
      warnReadable(config);
      if (limitChanged) limiter = limiterFor(config);
      alerts.setHooks(config.alerts, config);
      engine.apply(config);
      await refreshKeys(config);
      metrics.forget(new Set(config.targets.map((t) => t.name)));
      mesh.setConfig(config);
      cache.clear();
      logger.info({ targets: config.targets.length }, 'monitor configuration reloaded');
    },
    async close() {
      await pruneJob.stop();
      mesh.stop();
      await engine.stop();
      await gated.settled();
      // After the last check: the leases go back and the others take over at once.
      await cluster?.stop();
      await cache.stop();
      await store.close();
    },
  };
}
