// The monitor's HTTP API (spec service A): public health, token- and rate-limited status,
// trends, peer and mesh views, metrics, and the optional dashboard page.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { MonitorConfig } from '../../../src/config/monitor.js';
import type { MonitorStore } from '../../../src/store/monitor.js';
import { VERSION } from '../../../src/version.js';
import { HttpError } from '../../plugins/errors.js';
import { parseAuthorization, secretMatcher } from '../../plugins/bearer.js';
import type { FixedWindowLimiter } from '../../plugins/rate-limit.js';
import type { CheckEngine } from './engine.js';
import type { Mesh } from './mesh.js';
import { targetSummaries } from './mesh.js';
import type { StatusCache } from './status.js';
import { renderMetrics } from './metrics.js';
import { renderDashboard } from './dashboard.js';
import { ErrorSchema, IdentitySchema, MeshSchema, PeerStatusSchema, StatusAllSchema, TargetStatusSchema, TrendSchema } from '../../../src/schemas/monitor.js';

export interface MonitorDeps {
  config(): MonitorConfig;
  token(): string | undefined;
  limiter(): FixedWindowLimiter;
  store: MonitorStore;
  cache: StatusCache;
  engine: CheckEngine;
  mesh: Mesh;
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

export async function monitorRoutes(app: FastifyInstance, deps: MonitorDeps): Promise<void> {
  // Response schemas document the API (OpenAPI); bodies are written with JSON.stringify, which
  // is faster here than a schema serializer for 1,000 nested statuses and can never drop a field.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  let matcher: { token: string; matches: (t: string) => boolean } | undefined;
  // Rate limit first (a request over the limit is 429 even with a wrong token), then the token.
  const guard = async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const d = deps.limiter().take();
    if (!d.allowed) {
      void reply.header('retry-after', String(d.retryAfterS));
      throw new HttpError(429, `rate limit exceeded: at most ${deps.limiter().limit} requests per ${deps.limiter().windowMs / 1000} s; retry in ${d.retryAfterS} s`);
    }
    const token = deps.token();
    if (token === undefined) return;
    if (matcher?.token !== token) matcher = { token, matches: secretMatcher(token) };
    const auth = parseAuthorization(req.headers.authorization);
    if (auth.kind !== 'token') throw new HttpError(401, 'missing or malformed Authorization header: expected "Bearer <token>"');
    if (!matcher.matches(auth.token)) throw new HttpError(401, 'invalid token');
  };
  const meshOnly = (): void => {
    if (!deps.mesh.enabled) throw new HttpError(503, 'the peer mesh is not enabled on this instance');
  };
  const target = (name: string) => {
    const t = deps.config().targets.find((x) => x.name === name);
    if (!t) throw new HttpError(404, `unknown target: ${name}`);
    return t;
  };

  app.get('/api/health', { schema: { operationId: 'health', summary: 'Liveness and version (public)', security: [], response: { 200: HealthSchema } } }, async () => ({ status: 'operational', version: VERSION }));

  app.get('/api/status', { preHandler: guard, schema: { operationId: 'statusAll', summary: 'Every target status', response: { 200: StatusAllSchema, ...guarded } } }, async () => ({ targets: await deps.cache.all(deps.config()) }));

  app.get<{ Params: { target: string } }>('/api/status/:target', { preHandler: guard, schema: { operationId: 'statusOne', summary: 'One target status', params: TARGET_PARAMS, response: { 200: TargetStatusSchema, 404: ErrorSchema, ...guarded } } }, async (req) => deps.cache.get(target(req.params.target)));

  app.get<{ Params: { target: string }; Querystring: { hours: number; bucket_minutes: number } }>(
    '/api/trends/:target',
    { preHandler: guard, schema: { operationId: 'trends', summary: 'Latency trend buckets, overall and 168-hour baseline', params: TARGET_PARAMS, querystring: TRENDS_QUERY, response: { 200: TrendSchema, 400: ErrorSchema, 404: ErrorSchema, ...guarded } } },
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

  app.get('/api/peer/info', { preHandler: guard, schema: { operationId: 'peerInfo', summary: 'This instance identity', response: { 200: IdentitySchema, 503: ErrorSchema, ...guarded } } }, async () => {
    meshOnly();
    return deps.mesh.identity();
  });

  app.get('/api/peer/status', { preHandler: guard, schema: { operationId: 'peerStatus', summary: 'This instance, its target summaries and its peers', response: { 200: PeerStatusSchema, 503: ErrorSchema, ...guarded } } }, async () => {
    meshOnly();
    return { instance: deps.mesh.identity(), targets: targetSummaries(await deps.cache.all(deps.config())), peers: deps.mesh.peerSummaries() };
  });

  app.get('/api/mesh', { preHandler: guard, schema: { operationId: 'mesh', summary: 'Every instance of the mesh', response: { 200: MeshSchema, 503: ErrorSchema, ...guarded } } }, async () => {
    meshOnly();
    const self = { instance: deps.mesh.identity(), targets: targetSummaries(await deps.cache.all(deps.config())), peers: deps.mesh.peerSummaries() };
    return { instances: { ...deps.mesh.peerEntries(), [deps.config().name]: self } };
  });

  app.get('/metrics', { preHandler: guard, schema: { operationId: 'metrics', summary: 'Prometheus metrics' } }, async (_req, reply) => {
    void reply.type('text/plain; version=0.0.4; charset=utf-8');
    return renderMetrics(deps.engine.counts, await deps.cache.all(deps.config()), deps.engine.healthCounts);
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
    app.get('/', { schema: { operationId: 'dashboard', summary: 'Dashboard page (public)', security: [] } }, async (_req, reply) => {
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
