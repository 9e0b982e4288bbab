// The framework floor of the server benchmarks: buildServer with every shared plugin (timeouts,
// error bodies, bounded and depth-checked JSON bodies, the request log at info on stdout, bearer
// auth on the root when FLOOR_TOKEN is set) and two routes that answer FLOOR_BODY without any
// work of their own. No route of ours can be faster than this, so its ratio to a bare node:http
// server is the highest any row can reach with the stack ARCHITECTURE.md prescribes.
// Started by serveFloor (bench/_util.ts) as `node bench/_floor-server.mjs`, on the build
// (`npm run build`) as the rows' daemons are: the code users run, not tsx's transform of the
// sources, whose `keepNames` adds an `Object.defineProperty` for every closure made (a body
// read's three listeners cost 2 µs a request that way; bench/README.md, "The floor on the build").
import { existsSync } from 'node:fs';
import { URL } from 'node:url';

const dist = new URL('../dist/', import.meta.url);
if (!existsSync(new URL('daemon/server.js', dist))) {
  console.error('the floor runs on the build: run `npm run build` first');
  process.exit(2);
}
// As `mkt serve` does (bin/mkt holds the young generation before the server's modules load, then
// serve governs it): the floor's heap is sized like the daemon's. Held for good, as it was until
// 2026-11-30, its scavenges cost the floor 2.5 µs a request that the daemon under the same load
// does not pay (bench/README.md, "One line at the answer").
const { holdYoungGeneration, governYoungGeneration } = await import(new URL('daemon/young-generation.js', dist).href);
holdYoungGeneration();
const { buildServer } = await import(new URL('daemon/server.js', dist).href);
const { createLogger } = await import(new URL('daemon/logger.js', dist).href);
const { installTokenCheck } = await import(new URL('daemon/services/tickets/routes.js', dist).href);

const body = process.env.FLOOR_BODY ?? '{}';
const token = process.env.FLOOR_TOKEN;
// As startService makes it: bound to the service's name, so its lines carry what ours carry.
const logger = createLogger({ level: 'info' }).child({ service: 'floor' });
const app = await buildServer({
  logger,
  service: {
    openapi: { title: 'floor', version: '0' },
    /** @param {import('fastify').FastifyInstance} scope */
    async register(scope) {
      // The tickets service's own check: a shared token, hashed and compared in constant time.
      if (token) installTokenCheck(scope, token);
      const answer = { schema: { response: { 200: { type: 'object', additionalProperties: true }, 201: { type: 'object', additionalProperties: true } } } };
      scope.get('/floor/:id', answer, (_req, reply) => reply.type('application/json; charset=utf-8').send(body));
      scope.post('/floor', { schema: { ...answer.schema, body: { type: 'object', additionalProperties: true } } }, (_req, reply) =>
        reply.code(201).type('application/json; charset=utf-8').send(body),
      );
    },
    async close() {},
  },
});
governYoungGeneration();
const url = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`listening on ${url}`);
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
