// buildServer: a fastify app with the shared plugins (error bodies, bounded bodies, request log,
// OpenAPI), timeouts, and one service's routes. It never listens: tests inject or listen on port 0.
import Fastify, { LogController, type FastifyInstance, type FastifyReply } from 'fastify';
import AjvCompiler, { type BuildCompilerFromPool } from '@fastify/ajv-compiler';
import type { Logger } from './logger.js';
import type { ServiceRuntime } from './service.js';
import { installErrorHandling } from './plugins/errors.js';
import { beginRequest, RequestLog, requestAnswered } from './plugins/request-log.js';
import { installOpenApi } from './plugins/openapi.js';
import { installBodyParsers, type BodyDeadlines } from './plugins/body.js';
import { fastifyTimeoutOptions, resolveTimeouts, type ServerTimeouts } from './timeouts.js';
import { httpServerFactory } from './http-server.js';
import { DirectRoutes, RequestIds } from './direct-routes.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The server's direct routes (daemon/direct-routes.ts): a service adds its hot lanes here. */
    directRoutes: DirectRoutes;
    /** Deadlines of the buffered bodies being read (plugins/body.ts): a parser of a service's own reads within them. */
    bodyDeadlines: BodyDeadlines;
  }
}

export interface BuildServerOptions {
  service: ServiceRuntime;
  logger: Logger;
  /** Largest accepted request body; default 1 MiB. */
  bodyLimit?: number;
  /** Overrides of the default timeouts (daemon/timeouts.ts). */
  timeouts?: Partial<ServerTimeouts>;
}

const ajvFactory = AjvCompiler() as BuildCompilerFromPool;
type AjvOptionsArg = Parameters<BuildCompilerFromPool>[1];
const AJV = { removeAdditional: false, useDefaults: true, allErrors: false } as const;

// Query strings, params and headers arrive as text, so their schemas coerce ("24" -> 24,
// one value -> [value]); JSON bodies never do, so `{"title": 5}` is a 400, not "5".
const partValidators: BuildCompilerFromPool = (externalSchemas, serverOptions) => {
  const base = serverOptions?.customOptions ?? {};
  const coercing = ajvFactory(externalSchemas, { ...serverOptions, customOptions: { ...base, ...AJV, coerceTypes: 'array' } } as AjvOptionsArg);
  const strict = ajvFactory(externalSchemas, { ...serverOptions, customOptions: { ...base, ...AJV, coerceTypes: false } } as AjvOptionsArg);
  return (route) => ((route as { httpPart?: string }).httpPart === 'body' ? strict(route) : coercing(route));
};

/**
 * `inject()` answers through light-my-request's response, not the server's (http-server.ts): its
 * request line is written when the injected answer has ended, so tests see the lines a client's
 * requests write. The chain form (`inject()` without options) writes none.
 */
function answerInjectedLines(app: FastifyInstance): void {
  type Injected = { raw: { req: object; res: { statusCode: number } } };
  const inject = app.inject.bind(app) as (opts?: unknown, cb?: (err: Error | null, res?: Injected) => void) => unknown;
  const answered = (res: Injected | undefined): void => {
    if (res) requestAnswered(res.raw.req, res.raw.res.statusCode);
  };
  app.inject = ((opts?: unknown, cb?: (err: Error | null, res?: Injected) => void) => {
    if (opts === undefined) return inject();
    if (cb) return inject(opts, (err, res) => (answered(res), cb(err, res)));
    return (inject(opts) as Promise<Injected>).then((res) => (answered(res), res));
  }) as FastifyInstance['inject'];
}

export async function buildServer(opts: BuildServerOptions): Promise<FastifyInstance> {
  const timeouts = resolveTimeouts(opts.timeouts);
  const bodyLimit = opts.bodyLimit ?? opts.service.bodyLimit ?? 1024 * 1024;
  const ids = new RequestIds();
  const direct = new DirectRoutes(opts.logger, ids);
  const requestLog = new RequestLog(opts.logger, direct.lines);
  const app: FastifyInstance = Fastify({
    ...fastifyTimeoutOptions(timeouts),
    // The server fastify would make, with the check for answers sent before their body arrived.
    serverFactory: httpServerFactory(timeouts, direct),
    // fastify's own id format, from one counter with the direct routes': ids stay unique in the log.
    genReqId: (req) => beginRequest(req, ids.next()),
    // No `loggerInstance`: given one, fastify listens to every response's end through a closure
    // made per request, for its own request logging. Each request's logger is ours (`req.log`,
    // made when it first logs: most never do), and so is its request line, which logs route
    // patterns only, never raw URLs (they can carry secrets): plugins/request-log.ts.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: requestLog.unmatched,
    bodyLimit,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    schemaController: { compilersFactory: { buildValidator: partValidators } },
    // A monitor ping key (up to 128 characters) is a path segment: fastify's default of 100 made a
    // configured key of 101-128 unreachable (414), and a longer guess answered unlike a wrong key.
    routerOptions: { maxParamLength: 1024 },
    // A URL the router refuses (a bad %-escape, a segment over the length) answers like every
    // other error, `{"error"}`, and never echoes the URL: it may hold a key.
    frameworkErrors: (err, _req, reply: FastifyReply) => {
      const status = typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 400;
      const text = err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'a path segment is longer than 1024 characters' : err.code === 'FST_ERR_BAD_URL' ? 'the URL is malformed (a bad %-escape)' : 'bad request';
      void reply.code(status).send({ error: text });
    },
  });
  app.decorate('directRoutes', direct);
  requestLog.install(app);
  answerInjectedLines(app);
  // From the start of closing, fastify answers everything (503 while it drains).
  app.addHook('preClose', (done) => {
    direct.closing = true;
    done();
  });
  installErrorHandling(app);
  app.decorate('bodyDeadlines', installBodyParsers(app, { requestTimeoutMs: timeouts.requestMs, bodyLimit }));
  const { openapi: info, securitySchemes, operationSecurity: security, publicUrl } = opts.service;
  const documentRoute = installOpenApi(app, { info, securitySchemes, security, publicUrl });
  await opts.service.register(app);
  documentRoute();
  await app.ready();
  return app;
}
