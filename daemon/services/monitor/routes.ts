// The monitor's HTTP API (spec service A): public health, token- and rate-limited status,
// trends, peer and mesh views, metrics, and the optional dashboard page.
import { promisify } from 'node:util';
import { gzip as gzipCb } from 'node:zlib';
import type { FastifyContextConfig, FastifyInstance, FastifyReply, RouteOptions, onRequestHookHandler } from 'fastify';
import type { MonitorConfig } from '../../../src/config/monitor.js';
import type { MonitorStore } from '../../../src/store/monitor.js';
import { VERSION } from '../../../src/version.js';
import { HttpError } from '../../plugins/errors.js';
import { Authenticator, authHook, decorateCaller, type Problem } from '../../plugins/auth.js';
import { secretMatcher } from '../../plugins/bearer.js';
import { rawResponse } from '../../plugins/openapi.js';
import type { FixedWindowLimiter } from '../../plugins/rate-limit.js';
import type { Mesh } from './mesh.js';
import { targetSummaries } from './mesh.js';
import { summaryExtras, type ConfirmGate } from './confirm.js';
import type { StatusCache } from './status-cache.js';
import type { MonitorMetrics } from './metrics.js';
import { DASHBOARD_CSP, DASHBOARD_OFF, DASHBOARD_TIMELINE, renderDashboard, type DayCell } from './dashboard.js';
import { dayCells, hourlyMeans } from './dashboard-data.js';
import type { MaintenanceSchedule } from './maintenance.js';
import type { PingKeys } from './ping-keys.js';
import { buildReport, reportRange } from './report.js';
import { silenceJson } from './silences.js';
import { statusBadge, uptimeBadge } from './badges.js';
import { UPTIME_WINDOWS, type TargetStatus } from './status.js';
import { isDiskFull } from '../../../src/util/disk-full.js';
import { ErrorSchema, IdentitySchema, MeshSchema, PeerStatusSchema, StatusAllSchema, TargetStatusSchema, TrendSchema, type Incident, type IncidentEvent } from '../../../src/schemas/monitor.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A route without token or rate limit (spec: `/api/health` and the dashboard). */
    public?: boolean;
    /** A badge: public (no token, no rate limit) when the config says `badges: public`. */
    badge?: boolean;
  }
}

export interface GuardDeps {
  token(): string | undefined;
  limiter(): FixedWindowLimiter;
  /** `badges: public` in the config: badge routes skip the token and the rate limit. */
  badgesPublic(): boolean;
}

export interface MonitorDeps {
  config(): MonitorConfig;
  store: MonitorStore;
  cache: StatusCache;
  mesh: Mesh;
  metrics: MonitorMetrics;
  schedule(): MaintenanceSchedule;
  now(): number;
  /** On PostgreSQL: the cluster, shown in /api/peer/info. */
  cluster?: { info(): Promise<Record<string, unknown>> } | undefined;
  /** Mesh confirmation: vantage points in statuses, `confirmed`/`incident` in peer summaries. */
  confirm: ConfirmGate;
  /** Heartbeat targets' ping keys, for `ping_url` in a target's status. */
  pingKeys?: PingKeys;
}

const TARGET_PARAMS = { type: 'object', properties: { target: { type: 'string' } }, required: ['target'] } as const;
const TRENDS_QUERY = {
  type: 'object',
  properties: {
    hours: { type: 'integer', minimum: 1, maximum: 8760, default: 24 },
    bucket_minutes: { type: 'integer', minimum: 1, maximum: 525600, default: 60 },
  },
} as const;
const MAX_BUCKETS = 10_000;
/** The spec's 503 text, then how to turn the mesh on (clients show it as it comes). */
export const MESH_OFF = 'the peer mesh is not enabled on this instance: add a `mesh:` section (its `peers`, or `peers: []`) to the configuration and reload (docs/monitor.md#mesh)';
const REPORT_QUERY = {
  type: 'object',
  properties: {
    from: { type: 'string', maxLength: 64, description: 'start: a date (midnight UTC) or an RFC 3339 time; default 30 days before `to`' },
    to: { type: 'string', maxLength: 64, description: 'end (exclusive): a date or an RFC 3339 time; default and at most now' },
  },
} as const;
const BADGE_WINDOWS = UPTIME_WINDOWS.map(([field]) => field.slice('uptime_'.length));
const BADGE_QUERY = { type: 'object', properties: { label: { type: 'string', minLength: 1, maxLength: 64 } } } as const;
const UPTIME_BADGE_QUERY = { type: 'object', properties: { ...BADGE_QUERY.properties, window: { type: 'string', enum: BADGE_WINDOWS, default: '30d' } } } as const;
const ReportSchema = { type: 'object', additionalProperties: true, description: 'the SLA report; fields in docs/monitor.md' } as const;
interface RenderedPage {
  html: Buffer;
  gzip: Buffer;
}

const gzipAsync = promisify(gzipCb);

/** True when the client takes gzip (`gzip` listed without `q=0`). */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  return header.split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    if (coding !== 'gzip' && coding !== '*') return false;
    return !params.some((p) => /^\s*q=0(\.0*)?\s*$/.test(p));
  });
}

/** How long one rendering of the dashboard page is served (the page itself refreshes every 30 s). */
export const DASHBOARD_TTL_MS = 5_000;
const guarded = { 401: ErrorSchema, 429: ErrorSchema };
const HealthSchema = { type: 'object', properties: { status: { type: 'string' }, version: { type: 'string' } }, required: ['status', 'version'] } as const;

/** The monitor's 401: says whether the header is missing or malformed, or the token invalid (spec). */
function unauthorized(problem: Problem): HttpError {
  if (problem.kind === 'invalid') return new HttpError(401, 'invalid token');
  return new HttpError(401, 'missing or malformed Authorization header: expected "Bearer <token>"');
}

/**
 * The rate limit, then the token, on every route but the public ones — /openapi.json included
 * (buildServer registers it after the service's routes, so this sees it too). Unknown routes are
 * 404 without either. Without a configured token every request passes the token check.
 *
 * The guard goes on each route as it is registered, not on the root instance: a public route (a
 * ping, the health check) then runs no guard at all, and a guarded one reads its config from the
 * closure, where a root hook had to build `req.routeOptions` (an object of a dozen fields) twice
 * a request to find out.
 */
export function installMonitorGuard(app: FastifyInstance, deps: GuardDeps): void {
  let matcher: { token: string; matches: (t: string) => boolean } | undefined;
  const auth = new Authenticator<true>({
    schemes: ['Bearer'],
    unauthorized,
    verify(credential) {
      const token = deps.token();
      if (token === undefined || credential.kind !== 'token') return undefined;
      if (matcher?.token !== token) matcher = { token, matches: secretMatcher(token) };
      return matcher.matches(credential.token) ? true : undefined;
    },
  });
  const checkToken = authHook(auth, { required: true });
  decorateCaller(app);
  app.addHook('onRoute', (route: RouteOptions) => {
    const config = (route.config ?? {}) as FastifyContextConfig;
    if (config.public === true) return;
    // Rate limit first: a request over the limit is 429 even with a wrong token (spec). Whether a
    // badge is guarded, and whether a token is set, can change at a reload: asked per request.
    const guard: onRequestHookHandler = function (req, reply, done) {
      if (!guardedRoute(config, deps)) return done();
      const limiter = deps.limiter();
      // Called from a promise's callback, not by fastify's hook runner: a throw would be an
      // unhandled rejection (the process's end), so it becomes the request's error instead.
      const tokenCheck = (): void => {
        if (deps.token() === undefined) return done();
        try {
          checkToken.call(this, req, reply, done);
        } catch (err) {
          done(err as Error);
        }
      };
      limiter.take().then((d) => {
        if (!d.allowed) {
          void reply.header('retry-after', String(d.retryAfterS));
          return done(new HttpError(429, `rate limit exceeded: at most ${limiter.limit} requests per ${limiter.windowMs / 1000} s; retry in ${d.retryAfterS} s`));
        }
        tokenCheck();
      }, (err: unknown) => {
        // A full disk cannot hold the window's count: the request goes on uncounted (a read still
        // answers; a write meets the full disk itself and answers 507), rather than every read 507.
        if (!isDiskFull(err)) return done(err as Error);
        req.log.warn({ err: (err as Error).message }, 'the disk is full: the rate limit window cannot be counted; the request goes on');
        tokenCheck();
      });
    };
    const own = route.onRequest;
    route.onRequest = own === undefined ? [guard] : Array.isArray(own) ? [guard, ...own] : [guard, own];
  });
}

/** Whether a route is behind the rate limit and the token: not public, and not a badge while `badges: public`. */
function guardedRoute(config: FastifyContextConfig, deps: Pick<GuardDeps, 'badgesPublic'>): boolean {
  return config.public !== true && !(config.badge === true && deps.badgesPublic());
}

/** The guard's token rule, which the OpenAPI document's `security` reads too: a guarded route, once a token is configured. */
export function tokenRequired(config: FastifyContextConfig, deps: Pick<GuardDeps, 'token' | 'badgesPublic'>): boolean {
  return guardedRoute(config, deps) && deps.token() !== undefined;
}

export async function monitorRoutes(app: FastifyInstance, deps: MonitorDeps): Promise<void> {
  // Response schemas document the API (OpenAPI); bodies are written with JSON.stringify, which
  // is faster here than a schema serializer for 1,000 nested statuses and can never drop a field.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  const meshOnly = (): void => {
    if (!deps.mesh.enabled) throw new HttpError(503, MESH_OFF);
  };
  const target = (name: string) => {
    const t = deps.config().targets.find((x) => x.name === name);
    if (!t) throw new HttpError(404, `unknown target: ${name}`);
    return t;
  };

  app.get('/api/health', { config: { public: true }, schema: { operationId: 'health', summary: 'Liveness and version (public)', response: { 200: HealthSchema } } }, async () => ({ status: 'operational', version: VERSION }));

  // Statuses with the mesh's vantage points, added at response time from the mesh cache.
  const withVantage = (cfg: MonitorConfig, statuses: Record<string, TargetStatus>): Record<string, TargetStatus> => {
    if (!deps.mesh.enabled) return statuses;
    const targets = new Map(cfg.targets.map((t) => [t.name, t]));
    const out: Record<string, TargetStatus> = {};
    for (const [name, s] of Object.entries(statuses)) {
      const t = targets.get(name);
      out[name] = t ? deps.confirm.decorate(t, s) : s;
    }
    return out;
  };
  const summaries = async (): Promise<Record<string, unknown>> => {
    const cfg = deps.config();
    const statuses = await deps.cache.all(cfg);
    return targetSummaries(statuses, await summaryExtras(deps.confirm, cfg, deps.store, statuses));
  };

  app.get('/api/status', { schema: { operationId: 'statusAll', summary: 'Every target status', response: { 200: StatusAllSchema, ...guarded } } }, async () => {
    const cfg = deps.config();
    return { targets: withVantage(cfg, await deps.cache.all(cfg)) };
  });

  app.get<{ Params: { target: string } }>('/api/status/:target', { schema: { operationId: 'statusOne', summary: 'One target status', params: TARGET_PARAMS, response: { 200: TargetStatusSchema, 404: ErrorSchema, ...guarded } } }, async (req) => {
    const t = target(req.params.target);
    const cached = deps.confirm.decorate(t, await deps.cache.get(t));
    // One target's status carries its open incident's timeline (the list of all targets does not).
    const open = cached.current_incident as Incident | undefined;
    const status = open ? { ...cached, current_incident: { ...open, timeline: await deps.store.incidentEvents(open.id) } } : cached;
    const key = t.heartbeat ? await deps.pingKeys?.keyOf(t.name) : undefined;
    // The ping URL as this request reached the monitor (a proxy in front passes its Host on).
    return key === undefined ? status : { ...status, ping_url: `${req.protocol}://${req.host}/ping/${key}` };
  });

  app.get<{ Params: { target: string }; Querystring: { hours: number; bucket_minutes: number } }>(
    '/api/trends/:target',
    { schema: { operationId: 'trends', summary: 'Latency trend buckets, overall and 168-hour baseline', params: TARGET_PARAMS, querystring: TRENDS_QUERY, response: { 200: TrendSchema, 400: ErrorSchema, 404: ErrorSchema, ...guarded } } },
    async (req) => {
      const t = target(req.params.target);
      const { hours, bucket_minutes } = req.query;
      const buckets = Math.ceil((hours * 60) / bucket_minutes);
      if (buckets > MAX_BUCKETS) throw new HttpError(400, `hours/bucket_minutes gives ${buckets} buckets; at most ${MAX_BUCKETS}`);
      const now = deps.now();
      const since = now - hours * 3_600_000;
      return {
        target: t.name,
        window_hours: hours,
        bucket_minutes,
        buckets: await deps.store.trend(t.name, since, bucket_minutes * 60_000, buckets),
        overall: await deps.store.latency(t.name, since),
        baseline: await deps.store.latency(t.name, now - 168 * 3_600_000),
      };
    },
  );

  app.get<{ Params: { target: string }; Querystring: { from?: string; to?: string } }>(
    '/api/report/:target',
    { schema: { operationId: 'report', summary: 'SLA report of one target over a period', params: TARGET_PARAMS, querystring: REPORT_QUERY, response: { 200: ReportSchema, 400: ErrorSchema, 404: ErrorSchema, ...guarded } } },
    async (req) => {
      const t = target(req.params.target);
      const now = deps.now();
      let range: { fromMs: number; toMs: number };
      try {
        range = reportRange(req.query.from, req.query.to, now);
      } catch (err) {
        if (err instanceof RangeError) throw new HttpError(400, err.message);
        throw err;
      }
      return buildReport(deps.store, deps.schedule(), t, range.fromMs, range.toMs, now);
    },
  );

  // Badges: image/svg+xml for READMEs. Behind the token unless the config says `badges: public`;
  // public ones skip the rate limit too and read the cached status, so a crowd of README
  // viewers costs one status build per target per cache period.
  const svg = (reply: FastifyReply, body: string): string => {
    void reply
      .type('image/svg+xml; charset=utf-8')
      .header('cache-control', deps.config().badges === 'public' ? 'public, max-age=60' : 'private, no-store')
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'");
    return body;
  };
  app.get<{ Params: { target: string }; Querystring: { label?: string } }>(
    '/api/badge/:target/status.svg',
    { config: { badge: true }, schema: { operationId: 'statusBadge', summary: 'Status badge (SVG)', params: TARGET_PARAMS, querystring: BADGE_QUERY, response: { 200: rawResponse('image/svg+xml', 'the badge'), 404: ErrorSchema, ...guarded } } },
    async (req, reply) => {
      const t = target(req.params.target);
      return svg(reply, statusBadge(req.query.label ?? t.label, await deps.cache.get(t)));
    },
  );
  app.get<{ Params: { target: string }; Querystring: { label?: string; window: string } }>(
    '/api/badge/:target/uptime.svg',
    { config: { badge: true }, schema: { operationId: 'uptimeBadge', summary: 'Uptime badge (SVG) over 24h, 7d, 30d, 90d or 365d', params: TARGET_PARAMS, querystring: UPTIME_BADGE_QUERY, response: { 200: rawResponse('image/svg+xml', 'the badge'), 400: ErrorSchema, 404: ErrorSchema, ...guarded } } },
    async (req, reply) => {
      const t = target(req.params.target);
      const s = await deps.cache.get(t);
      return svg(reply, uptimeBadge(req.query.label ?? `uptime ${req.query.window}`, s[`uptime_${req.query.window}`] as number | null | undefined));
    },
  );

  app.get('/api/peer/info', { schema: { operationId: 'peerInfo', summary: 'This instance identity (with `cluster` on PostgreSQL: its instances and whether their configurations agree)', response: { 200: IdentitySchema, 503: ErrorSchema, ...guarded } } }, async () => {
    // A cluster on PostgreSQL answers too, mesh or not: its instances and their configurations.
    if (deps.cluster) return { ...deps.mesh.identity(), cluster: await deps.cluster.info() };
    meshOnly();
    return deps.mesh.identity();
  });

  app.get('/api/peer/status', { schema: { operationId: 'peerStatus', summary: 'This instance, its target summaries and its peers', response: { 200: PeerStatusSchema, 503: ErrorSchema, ...guarded } } }, async () => {
    meshOnly();
    return { instance: deps.mesh.identity(), targets: await summaries(), peers: deps.mesh.peerSummaries() };
  });

  app.get('/api/mesh', { schema: { operationId: 'mesh', summary: 'Every instance of the mesh', response: { 200: MeshSchema, 503: ErrorSchema, ...guarded } } }, async () => {
    meshOnly();
    const self = { instance: deps.mesh.identity(), targets: await summaries(), peers: deps.mesh.peerSummaries() };
    return { instances: { ...deps.mesh.peerEntries(), [deps.config().name]: self } };
  });

  app.get('/metrics', { schema: { operationId: 'metrics', summary: 'Prometheus metrics', response: { 200: rawResponse('text/plain', 'Prometheus text exposition format') } } }, async (_req, reply) => {
    void reply.type(deps.metrics.contentType);
    return deps.metrics.render();
  });

  if (deps.config().dashboard) {
    // The page is public and unlimited (spec), and 24 hourly and 90 daily rollups per target
    // are real work with a thousand targets: one rendering serves every request for
    // DASHBOARD_TTL_MS, and concurrent requests share the rendering in flight.
    let page: { at: number; body: Promise<RenderedPage> } | undefined;
    const render = async (now: number): Promise<RenderedPage> => {
      const cfg = deps.config();
      const statuses = withVantage(cfg, await deps.cache.all(cfg));
      const trends: Record<string, (number | null)[]> = {};
      const days: Record<string, DayCell[]> = {};
      const timelines: Record<string, IncidentEvent[]> = {};
      for (const t of cfg.targets) {
        trends[t.name] = await hourlyMeans(deps.store, t.name, now);
        days[t.name] = await dayCells(deps.store, t.name, now);
        // The open incident's timeline: one read per target that is down, none for the others.
        const open = statuses[t.name]?.current_incident as Incident | undefined;
        if (open) timelines[t.name] = await deps.store.incidentEvents(open.id, DASHBOARD_TIMELINE);
      }
      const html = Buffer.from(renderDashboard({ instance: cfg.name, version: VERSION, generatedAt: new Date(now).toISOString(), statuses, trends, days, timelines, silences: (await deps.store.silences.list(now)).map(silenceJson) }));
      // 90 day cells a target make a big page that compresses ~20x: gzip it once per rendering.
      return { html, gzip: await gzipAsync(html, { level: 6 }) };
    };
    app.get('/', { config: { public: true }, schema: { operationId: 'dashboard', summary: 'Dashboard page (public)', response: { 200: rawResponse('text/html', 'the status page') } } }, async (req, reply) => {
      const now = deps.now();
      if (!page || now - page.at >= DASHBOARD_TTL_MS) {
        const body = render(now);
        page = { at: now, body };
        body.catch(() => {
          if (page?.body === body) page = undefined;
        });
      }
      const { html, gzip } = await page.body;
      void reply.type('text/html; charset=utf-8').header('content-security-policy', DASHBOARD_CSP).header('vary', 'accept-encoding');
      if (acceptsGzip(req.headers['accept-encoding'])) {
        void reply.header('content-encoding', 'gzip');
        return gzip;
      }
      return html;
    });
  } else {
    // Public like the page it stands for, and left out of the API document.
    app.get('/', { config: { public: true }, schema: { hide: true } }, async () => {
      throw new HttpError(404, DASHBOARD_OFF);
    });
  }
}
