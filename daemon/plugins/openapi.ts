// OpenAPI 3.1 document generated from the registered routes' own JSON schemas, served at
// GET /openapi.json, so the document cannot drift from what the server validates.
import type { FastifyContextConfig, FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { socketUrl } from './server-url.js';

// Route schemas carry their OpenAPI operation fields next to the validation schemas.
declare module 'fastify' {
  interface FastifySchema {
    operationId?: string;
    summary?: string;
    description?: string;
    tags?: string[];
    deprecated?: boolean;
    security?: unknown[];
    hide?: boolean;
  }
}

export interface OpenApiInfo {
  title: string;
  version: string;
  description?: string;
  license?: { name: string; identifier?: string; url?: string };
}

/** One alternative of an operation's `security`: scheme name -> scopes; `{}` is "no credential". */
export type SecurityRequirement = Record<string, string[]>;

/** The bearer scheme every service names `bearer` in its document. */
export const BEARER_SCHEME = { bearer: { type: 'http', scheme: 'bearer' } };
/** An operation that needs the bearer token. */
export const BEARER: SecurityRequirement[] = [{ bearer: [] }];

export interface OpenApiOptions {
  info: OpenApiInfo;
  securitySchemes?: Record<string, unknown>;
  /**
   * The `security` of an operation whose schema declares none, asked with the route's config each
   * time the document is served: the service's authentication hook and its document read the same
   * rule, so they cannot disagree (the monitor's `badges: public` or a token removed on SIGHUP included).
   */
  security?(config: FastifyContextConfig): SecurityRequirement[];
  /** The address clients reach the service at (`--public-url`); the document's `servers` names it. */
  publicUrl?: string;
}

/**
 * A response schema for a body that is not JSON (a badge, a page, metrics, a file), so that the
 * document and a generated client know the success answer. A string payload with its own content
 * type is sent as it is: fastify serializes only JSON, so this schema documents and never encodes.
 */
export function rawResponse(mediaType: string, description: string, binary = false): { description: string; content: Record<string, { schema: Record<string, unknown> }> } {
  return { description, content: { [mediaType]: { schema: binary ? { type: 'string', format: 'binary' } : { type: 'string' } } } };
}

/** The project's license (package.json), the same in every service's document. */
const LICENSE = { name: 'MIT', identifier: 'MIT' };

interface RouteSchema {
  summary?: string;
  description?: string;
  operationId?: string;
  tags?: string[];
  deprecated?: boolean;
  security?: unknown[];
  body?: unknown;
  querystring?: { properties?: Record<string, unknown>; required?: string[] };
  params?: { properties?: Record<string, unknown>; required?: string[] };
  response?: Record<string, unknown>;
  hide?: boolean;
}

type Json = Record<string, unknown>;

const ERROR_CONTENT = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };

/**
 * The route schemas as OpenAPI 3.1 (JSON Schema 2020-12) spells them. They are written for the
 * validator, which compiles draft-07, so two things change here and only here: TypeBox's symbol
 * keys and `$id`s go, and a tuple's `items: [...]` (+ `additionalItems`) becomes `prefixItems`
 * (+ `items`), which is what 2020-12 tools and client generators read as a tuple.
 */
export function toOpenApiSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toOpenApiSchema);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Json = {};
  const tuple = Array.isArray((schema as Json).items) ? ((schema as Json).items as unknown[]) : undefined;
  for (const [k, v] of Object.entries(schema)) {
    if (k === '$id') continue;
    if (tuple && (k === 'items' || k === 'additionalItems')) continue;
    out[k] = toOpenApiSchema(v);
  }
  if (tuple) {
    out.prefixItems = tuple.map(toOpenApiSchema);
    const additional = (schema as Json).additionalItems;
    const maxItems = (schema as Json).maxItems;
    // Draft-07 without `additionalItems` allows any further items; `maxItems` may close the tuple.
    if (additional !== undefined) out.items = toOpenApiSchema(additional);
    else if (typeof maxItems === 'number' && maxItems <= tuple.length) out.items = false;
  }
  return out;
}

/** The operation as the route declares it, before the per-request parts (security, 401). */
interface Documented {
  path: string;
  method: string;
  op: Json;
  config: FastifyContextConfig;
}

function operationOf(schema: RouteSchema, path: string): Json {
  const op: Json = {};
  if (schema.operationId) op.operationId = schema.operationId;
  if (schema.summary) op.summary = schema.summary;
  if (schema.description) op.description = schema.description;
  if (schema.tags) op.tags = schema.tags;
  if (schema.deprecated) op.deprecated = true;
  if (schema.security) op.security = schema.security;
  const parameters: Json[] = [];
  for (const [where, s] of [['path', schema.params], ['query', schema.querystring]] as const) {
    const declared = Object.keys(s?.properties ?? {});
    // path parameters without a schema still belong in the document
    const names = where === 'path' ? [...new Set([...declared, ...[...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!)])] : declared;
    for (const name of names) {
      const p = s?.properties?.[name] ?? { type: 'string' };
      parameters.push({ name, in: where, required: where === 'path' || (s?.required ?? []).includes(name), schema: toOpenApiSchema(p) });
    }
  }
  if (parameters.length) op.parameters = parameters;
  if (schema.body) op.requestBody = { required: true, content: { 'application/json': { schema: toOpenApiSchema(schema.body) } } };
  const responses: Json = {};
  for (const [code, r] of Object.entries(schema.response ?? {})) {
    const rs = r as Json & { description?: string; content?: Json };
    if (rs.content) responses[code] = { description: rs.description ?? `HTTP ${code}`, content: toOpenApiSchema(rs.content) };
    else if ((rs as Json).type === 'null') responses[code] = { description: rs.description ?? 'no body' };
    else responses[code] = { description: rs.description ?? `HTTP ${code}`, content: { 'application/json': { schema: toOpenApiSchema(r) } } };
  }
  if (!responses.default) responses.default = { description: 'error', content: ERROR_CONTENT };
  op.responses = responses;
  return op;
}

/** `security` said by the route, else by the service's rule; a credential it requires can be refused with 401. */
function withSecurity(d: Documented, rule: OpenApiOptions['security']): Json {
  const security = (d.op.security as SecurityRequirement[] | undefined) ?? rule?.(d.config);
  if (security === undefined) return d.op;
  const responses = d.op.responses as Json;
  const required = security.length > 0 && security.every((alt) => Object.keys(alt).length > 0);
  if (!required || responses['401']) return { ...d.op, security };
  return { ...d.op, security, responses: { ...responses, 401: { description: 'missing, malformed or wrong credentials', content: ERROR_CONTENT } } };
}

/** The security schemes some operation uses (an unused one is noise to a client generator). */
function usedSchemes(schemes: Record<string, unknown>, paths: Record<string, Json>): Record<string, unknown> {
  const used = new Set<string>();
  for (const item of Object.values(paths)) {
    for (const op of Object.values(item)) for (const alt of ((op as Json).security as SecurityRequirement[] | undefined) ?? []) for (const name of Object.keys(alt)) used.add(name);
  }
  return Object.fromEntries(Object.entries(schemes).filter(([name]) => used.has(name)));
}

/**
 * The server the document names: the configured public URL (a proxy's address, which the server
 * cannot see), else this server as the request reached it, by its socket, never by the Host header.
 */
function serverUrl(req: FastifyRequest, publicUrl: string | undefined): string {
  if (publicUrl !== undefined) return publicUrl.replace(/\/+$/, '');
  // An injected request (tests) has no socket of its own: relative to where the document came from.
  return req.socket.localPort === undefined ? '/' : socketUrl(req);
}

/**
 * Collects every route registered from now on, and returns the registration of the document's
 * own route, which buildServer makes after the service's routes: a service's onRoute hooks (the
 * monitor's per-route guard) then see /openapi.json as they see every other route.
 */
export function installOpenApi(app: FastifyInstance, opts: OpenApiOptions): () => void {
  const documented: Documented[] = [];
  app.addHook('onRoute', (route: RouteOptions) => {
    const schema = (route.schema ?? {}) as RouteSchema;
    if (schema.hide) return;
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).filter((m) => m !== 'HEAD');
    const path = route.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    for (const method of methods) documented.push({ path, method: method.toLowerCase(), op: operationOf(schema, path), config: (route.config ?? {}) as FastifyContextConfig });
  });
  const info = { ...opts.info, license: opts.info.license ?? LICENSE };
  return () => void app.get('/openapi.json', { schema: { hide: true } as never }, async (req) => {
    const paths: Record<string, Json> = {};
    for (const d of documented) (paths[d.path] ??= {})[d.method] = withSecurity(d, opts.security);
    return {
      openapi: '3.1.0',
      info,
      servers: [{ url: serverUrl(req, opts.publicUrl) }],
      paths,
      components: {
        schemas: {
          Error: { type: 'object', required: ['error'], properties: { error: { type: 'string' } } },
        },
        securitySchemes: usedSchemes(opts.securitySchemes ?? {}, paths),
      },
    };
  });
}
