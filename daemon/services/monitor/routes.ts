// The monitor's HTTP API (spec service A): public health, token- and rate-limited status,
// trends, peer and mesh views, metrics, and the optional dashboard page.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { MonitorConfig } from '../../../src/config/monitor.js';
import type { MonitorStore } from '../../../src/store/monitor.js';
import { VERSION } from '../../../src/version.js';
import { HttpError } from '../../plugins/errors.js';
import { Authenticator, installAuth, type Problem } from '../../plugins/auth.js';
import { secretMatcher } from '../../plugins/bearer.js';
import type { FixedWindowLimiter } from '../../plugins/rate-limit.js';
import type { CheckEngine } from './engine.js';
import type { Mesh } from './mesh.js';
import { targetSummaries } from './mesh.js';
import type { StatusCache } from './status.js';
import type { MonitorMetrics } from './metrics.js';
import { renderDashboard } from './dashboard.js';
import { ErrorSchema, IdentitySchema, MeshSchema, PeerStatusSchema, StatusAllSchema, TargetStatusSchema, TrendSchema } from '../../../src/schemas/monitor.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A route without token or rate limit (spec: `/api/health` and the dashboard). */
    public?: boolean;
  }
}

export interface GuardDeps {
  token(): string | undefined;
  limiter(): FixedWindowLimiter;
}

export interface MonitorDeps {
  config(): MonitorConfig;
  store: MonitorStore;
  cache: StatusCache;
  engine: CheckEngine;
  mesh: Mesh;
  metrics: MonitorMetrics;
  now(): number;
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
 * The rate limit, then the token, on every route but the public ones — /openapi.json included —
 * so it goes on the root instance. Unknown routes are 404 without either. Without a configured
 * token every request passes the token check.
 */
export function installMonitorGuard(app: FastifyInstance, deps: GuardDeps): void {
  const limited = (req: FastifyRequest): boolean => req.routeOptions.url !== undefined && req.routeOptions.config.public !== true;
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
  // Rate limit first: a request over the limit is 429 even with a wrong token (spec).
  app.addHook('onRequest', async (req, reply) => {
    if (!limited(req)) return;
    const limiter = deps.limiter();
    const d = await limiter.take();
    if (!d.allowed) {
      void reply.header('retry-after', String(d.retryAfterS));
      throw new HttpError(429, `rate limit exceeded: at most ${limiter.limit} requests per ${limiter.windowMs / 1000} s; retry in ${d.retryAfterS} s`);
    }
  });
  installAuth(app, auth, { required: true, applies: (req) => limited(req) && deps.token() !== undefined });
}

export async function monitorRoutes(app: FastifyInstance, deps: MonitorDeps): Promise<void> {
  // Response schemas document the API (OpenAPI); bodies are written with JSON.stringify, which
  // is faster here than a schema serializer for 1,000 nested statuses and can never drop a field.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  const meshOnly = (): void => {
    if (!deps.mesh.enabled) throw new HttpError(503, 'the peer mesh is not enabled on this instance');
  };
  const target = (name: string) => {
    const t = deps.config().targets.find((x) => x.name === name);
    if (!t) throw new HttpError(404, `unknown target: ${name}`);
    return t;
  };

  app.get('/api/health', { config: { public: true }, schema: { operationId: 'health', summary: 'Liveness and version (public)', security: [], response: { 200: HealthSchema } } }, async () => ({ status: 'operational', version: VERSION }));

  app.get('/api/status', { schema: { operationId: 'statusAll', summary: 'Every target status', response: { 200: StatusAllSchema, ...guarded } } }, async () => ({ targets: await deps.cache.all(deps.config()) }));

  app.get<{ Params: { target: string } }>('/api/status/:target', { schema: { operationId: 'statusOne', summary: 'One target status', params: TARGET_PARAMS, response: { 200: TargetStatusSchema, 404: ErrorSchema, ...guarded } } }, async (req) => deps.cache.get(target(req.params.target)));

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

  app.get('/api/peer/info', { schema: { operationId: 'peerInfo', summary: 'This instance identity', response: { 200: IdentitySchema, 503: ErrorSchema, ...guarded } } }, async () => {
    meshOnly();
    return deps.mesh.identity();
  });

  app.get('/api/peer/status', { schema: { operationId: 'peerStatus', summary: 'This instance, its target summaries and its peers', response: { 200: PeerStatusSchema, 503: ErrorSchema, ...guarded } } }, async () => {
    meshOnly();
    return { instance: deps.mesh.identity(), targets: targetSummaries(await deps.cache.all(deps.config())), peers: deps.mesh.peerSummaries() };
  });

  app.get('/api/mesh', { schema: { operationId: 'mesh', summary: 'Every instance of the mesh', response: { 200: MeshSchema, 503: ErrorSchema, ...guarded } } }, async () => {
    meshOnly();
    const self = { instance: deps.mesh.identity(), targets: targetSummaries(await deps.cache.all(deps.config())), peers: deps.mesh.peerSummaries() };
    return { instances: { ...deps.mesh.peerEntries(), [deps.config().name]: self } };
  });

  app.get('/metrics', { schema: { operationId: 'metrics', summary: 'Prometheus metrics' } }, async (_req, reply) => {
    void reply.type(deps.metrics.contentType);
    return deps.metrics.render();
  });

  if (deps.config().dashboard) {
    // The page is public and unlimited (spec), and 24 hourly buckets per target are real work
    // with a thousand targets: one rendering serves every request for DASHBOARD_TTL_MS, and
    // concurrent requests share the rendering in flight.
    let page: { at: number; html: Promise<string> } | undefined;
    const render = async (now: number): Promise<string> => {
      const cfg = deps.config();
      const statuses = await deps.cache.all(cfg);
      const trends: Record<string, (number | null)[]> = {};
      for (const t of cfg.targets) {
        trends[t.name] = (await deps.store.trend(t.name, now - 24 * 3_600_000, 3_600_000, 24)).map((b) => (b.count > 0 ? (b.mean ?? null) : null));
      }
      return renderDashboard({ instance: cfg.name, version: VERSION, generatedAt: new Date(now).toISOString(), statuses, trends });
    };
    app.get('/', { config: { public: true }, schema: { operationId: 'dashboard', summary: 'Dashboard page (public)', security: [] } }, async (_req, reply) => {
      const now = deps.now();
      if (!page || now - page.at >= DASHBOARD_TTL_MS) {
        const html = render(now);
        page = { at: now, html };
        html.catch(() => {
          if (page?.html === html) page = undefined;
        });
      }
      void reply.type('text/html; charset=utf-8').header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; img-src data:");
      return page.html;
    });
  }
}
