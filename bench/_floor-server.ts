// The framework floor of the server benchmarks: buildServer with every shared plugin (timeouts,
// error bodies, bounded and depth-checked JSON bodies, the request log at info on stdout, bearer
// auth on the root when FLOOR_TOKEN is set) and two routes that answer FLOOR_BODY without any
// work of their own. No route of ours can be faster than this, so its ratio to a bare node:http
// server is the highest any row can reach with the stack ARCHITECTURE.md prescribes.
// Run by bench/_floor.ts: `node --import tsx bench/_floor-server.ts`.
import { buildServer } from '../daemon/server.js';
import { createLogger } from '../daemon/logger.js';
import { Authenticator, installAuth } from '../daemon/plugins/auth.js';
import { secretMatcher } from '../daemon/plugins/bearer.js';
import { HttpError } from '../daemon/plugins/errors.js';

const body = process.env.FLOOR_BODY ?? '{}';
const token = process.env.FLOOR_TOKEN;
const logger = createLogger({ level: 'info' });
const app = await buildServer({
  logger,
  service: {
    openapi: { title: 'floor', version: '0' },
    async register(scope) {
      if (token) {
        const matches = secretMatcher(token);
        const auth = new Authenticator<true>({
          schemes: ['Bearer'],
          verify: (c) => (c.kind === 'token' && matches(c.token) ? true : undefined),
          unauthorized: () => new HttpError(401, 'unauthorized'),
        });
        installAuth(scope, auth, { required: true });
      }
      const answer = { schema: { response: { 200: { type: 'object', additionalProperties: true }, 201: { type: 'object', additionalProperties: true } } } };
      scope.get('/floor/:id', answer, (_req, reply) => reply.type('application/json; charset=utf-8').send(body));
      scope.post('/floor', { schema: { ...answer.schema, body: { type: 'object', additionalProperties: true } } }, (_req, reply) =>
        reply.code(201).type('application/json; charset=utf-8').send(body),
      );
    },
    async close() {},
  },
});
const url = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`listening on ${url}`);
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
