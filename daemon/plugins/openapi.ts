// OpenAPI 3.1 document generated from the registered routes' own JSON schemas, served at
// GET /openapi.json, so the document cannot drift from what the server validates.
import type { FastifyInstance, RouteOptions } from 'fastify';

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

/** Removes TypeBox's symbol keys and `$id`s that are not OpenAPI fields. */
function clean(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(clean);
  if (schema && typeof schema === 'object') {
    const out: Json = {};
    for (const [k, v] of Object.entries(schema)) {
      if (k === '$id') continue;
      out[k] = clean(v);
    }
    return out;
  }
  return schema;
}

export function installOpenApi(app: FastifyInstance, info: OpenApiInfo, securitySchemes: Json = {}): void {
  const paths: Record<string, Json> = {};
  app.addHook('onRoute', (route: RouteOptions) => {
    const schema = (route.schema ?? {}) as RouteSchema;
    if (schema.hide) return;
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).filter((m) => m !== 'HEAD');
    const path = route.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    for (const method of methods) {
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
          parameters.push({ name, in: where, required: where === 'path' || (s?.required ?? []).includes(name), schema: clean(p) });
        }
      }
      if (parameters.length) op.parameters = parameters;
      if (schema.body) op.requestBody = { required: true, content: { 'application/json': { schema: clean(schema.body) } } };
      const responses: Json = {};
      for (const [code, r] of Object.entries(schema.response ?? {})) {
        const rs = r as Json & { description?: string; content?: Json };
        if (rs.content) responses[code] = { description: rs.description ?? `HTTP ${code}`, content: clean(rs.content) };
        else if ((rs as Json).type === 'null') responses[code] = { description: rs.description ?? 'no body' };
        else responses[code] = { description: rs.description ?? `HTTP ${code}`, content: { 'application/json': { schema: clean(r) } } };
      }
      if (!responses.default) {
        responses.default = {
          description: 'error',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        };
      }
      op.responses = responses;
      paths[path] ??= {};
      paths[path][method.toLowerCase()] = op;
    }
  });
  app.get('/openapi.json', { schema: { hide: true } as never }, async () => ({
    openapi: '3.1.0',
    info,
    paths,
    components: {
      schemas: {
        Error: { type: 'object', required: ['error'], properties: { error: { type: 'string' } } },
      },
      securitySchemes,
    },
  }));
}
