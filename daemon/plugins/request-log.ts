// Request logging: one line per answered request with the route pattern, never the raw URL,
// headers or body, because URLs and headers can carry secrets (tokens, license keys).
import type { FastifyInstance } from 'fastify';
import { fixedFieldLogger, type Logger } from '../logger.js';

export function installRequestLog(app: FastifyInstance): void {
  // Every field is the server's own (see fixedFieldLogger), and the line goes through the server's
  // logger with the request id as a field: no per-request child logger is made for it.
  const lines = fixedFieldLogger(app.log as Logger);
  app.addHook('onResponse', (req, reply, done) => {
    lines.info({ reqId: req.id, method: req.method, route: req.routeOptions.url ?? 'unmatched', status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 }, 'request');
    done();
  });
}
