// Request logging: one line per answered request with the route pattern, never the raw URL,
// headers or body, because URLs and headers can carry secrets (tokens, license keys).
import type { FastifyInstance } from 'fastify';

export function installRequestLog(app: FastifyInstance): void {
  app.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched';
    req.log.info(
      { method: req.method, route, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 },
      'request',
    );
    done();
  });
}
