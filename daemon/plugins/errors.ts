// Error bodies: every non-2xx answer of every service is `{"error": "<text>"}` —
// malformed JSON, schema violations, unknown routes and 500s alike. 5xx texts are hidden
// unless the thrown error is marked `expose` (a spec'd failure text, such as a storage error).
import type { FastifyError, FastifyInstance } from 'fastify';

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
    void reply.code(404).send({ error: `no route for ${req.method} ${req.url.split('?')[0]}` });
  });
  app.setErrorHandler((err: FastifyError & { expose?: boolean; headers?: Record<string, string> }, req, reply) => {
    if (err.validation) {
      return reply.code(400).send({ error: validationText(err) });
    }
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode <= 599 ? err.statusCode : 500;
    if (err.headers) for (const [k, v] of Object.entries(err.headers)) void reply.header(k, v);
    if (status >= 500 && !err.expose) {
      req.log.error({ err: { message: err.message, stack: err.stack, code: err.code } }, 'request failed');
      return reply.code(status).send({ error: 'internal server error' });
    }
    if (status >= 500) req.log.error({ err: { message: err.message, code: err.code } }, 'request failed');
    let text = err.message;
    if (err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err instanceof SyntaxError) text = `malformed JSON body: ${err.message}`;
    if (err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') text = 'request body is empty but content-type is application/json';
    return reply.code(status).send({ error: text });
  });
}
