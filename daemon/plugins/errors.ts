// Error bodies: every non-2xx answer of every service is `{"error": "<text>"}` —
// malformed JSON, schema violations, unknown routes and 500s alike. 5xx texts are hidden
// unless the thrown error is marked `expose` (a spec'd failure text, such as a storage error).
// Every error text is capped, so an offending 1 MiB value is never echoed back whole. A full disk,
// wherever it surfaced (a DiskFullError, or SQLite's, Node's or git's own error), is 507 with a
// text saying so and what to do (src/util/disk-full.ts).
import type { FastifyError, FastifyInstance } from 'fastify';
import { DiskFullError, isDiskFull } from '../../src/util/disk-full.js';

/** Longest error text sent; longer ones are cut and marked. */
export const MAX_ERROR_TEXT = 300;

/** Cuts an error text to MAX_ERROR_TEXT characters, marking the cut. */
export function capErrorText(text: string): string {
  if (text.length <= MAX_ERROR_TEXT) return text;
  const marker = `… (${text.length} characters)`;
  let cut = MAX_ERROR_TEXT - marker.length;
  const last = text.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut--;
  return text.slice(0, cut) + marker;
}

/** An error with an HTTP status whose message is safe to show. */
export class HttpError extends Error {
  readonly expose = true;
  constructor(
    readonly statusCode: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

function validationText(err: FastifyError): string {
  const v = err.validation?.[0];
  if (!v) return err.message;
  const where = err.validationContext ?? 'request';
  const path = (v.instancePath || '').replace(/^\//, '').replace(/\//g, '.');
  const field = path ? `${where}.${path}` : where;
  const params = v.params as Record<string, unknown> | undefined;
  if (v.keyword === 'required' && params && typeof params.missingProperty === 'string') {
    return `${where}.${params.missingProperty} is required`;
  }
  if (v.keyword === 'additionalProperties' && params && typeof params.additionalProperty === 'string') {
    return `${where}.${params.additionalProperty} is not an allowed field`;
  }
  return `${field} ${v.message ?? 'is invalid'}`;
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setNotFoundHandler((req, reply) => {
    void reply.code(404).send({ error: capErrorText(`no route for ${req.method} ${req.url.split('?')[0]}`) });
  });
  // Error bodies that routes and hooks send themselves, not through a thrown error, are capped too.
  app.addHook('preSerialization', (_req, reply, payload, done) => {
    const body = payload as { error?: unknown } | null;
    if (reply.statusCode >= 400 && body && typeof body === 'object' && typeof body.error === 'string' && body.error.length > MAX_ERROR_TEXT) {
      return done(null, { ...body, error: capErrorText(body.error) });
    }
    done(null, payload);
  });
  app.setErrorHandler((err: FastifyError & { expose?: boolean; headers?: Record<string, string> }, req, reply) => {
    if (err.validation) {
      return reply.code(400).send({ error: capErrorText(validationText(err)) });
    }
    const a = errorAnswer(err, `${req.method} ${req.routeOptions.url ?? req.url.split('?')[0]}`, req.log);
    if (a.headers) for (const [k, v] of Object.entries(a.headers)) void reply.header(k, v);
    return reply.code(a.status).send({ error: a.error });
  });
}

/** What an error log needs of a logger (a request's own, so the line carries its `reqId`). */
interface ErrorLog {
  error(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

/** A failed request's answer: its status, headers and `error` text. */
export interface ErrorAnswer {
  status: number;
  headers?: Record<string, string>;
  error: string;
}

/**
 * The answer to an error thrown by a route (`what` names the route, "POST /ping/:key"), logged as
 * its status calls for. fastify's error handler and the direct routes (daemon/direct-routes.ts)
 * both answer through it, so an error reads alike whichever took the request.
 */
export function errorAnswer(err: Error & { statusCode?: number; expose?: boolean; code?: string; headers?: Record<string, string> }, what: string, log: ErrorLog): ErrorAnswer {
  // Before the generic 5xx: a raw SQLITE_FULL or ENOSPC would otherwise be a bare "internal
  // server error", and the operator would not learn that freeing space is the fix.
  // Only a server-side failure: a 4xx's text may quote the caller's own input, which could say anything.
  if (err instanceof DiskFullError || (!(err.statusCode && err.statusCode < 500) && isDiskFull(err))) {
    const full = err instanceof DiskFullError ? err : new DiskFullError(what, { cause: err });
    const cause = (full.cause ?? full) as Error & { code?: unknown };
    log.error({ err: { message: capErrorText(cause.message), code: cause.code, stack: cause.stack?.slice(0, 4000) }, what: full.what }, full.message);
    return { status: full.statusCode, error: capErrorText(full.message) };
  }
  const status = err.statusCode && err.statusCode >= 400 && err.statusCode <= 599 ? err.statusCode : 500;
  const headers = err.headers;
  if (status >= 500 && !err.expose) {
    log.error({ err: { message: capErrorText(err.message), stack: err.stack?.slice(0, 4000), code: err.code } }, 'request failed');
    return { status, headers, error: 'internal server error' };
  }
  // A database outage is logged once by the store when it begins and ends (src/store/sql-pg.ts);
  // each request it refuses is in the request log with its 503, so its reason is at debug.
  if (status >= 500) log[err.name === 'StoreUnavailableError' ? 'debug' : 'error']({ err: { message: capErrorText(err.message), code: err.code } }, 'request failed');
  let text = err.message;
  if (err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err instanceof SyntaxError) text = `malformed JSON body: ${err.message}`;
  if (err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') text = 'request body is empty but content-type is application/json';
  return { status, headers, error: capErrorText(text) };
}
