// Plain fastify for bench/floor.ts: one GET and one POST route with a response schema answering
// FLOOR_BODY, no plugin of ours and no logger, so the floor's excess over it is ours alone. Plain node, as
// the floor runs (bench/_floor-server.mjs).
import Fastify from 'fastify';

const body = process.env.FLOOR_BODY ?? '{}';
const app = Fastify();
const answer = { schema: { response: { 200: { type: 'object', additionalProperties: true }, 201: { type: 'object', additionalProperties: true } } } };
app.get('/floor/:id', answer, (_req, reply) => reply.type('application/json; charset=utf-8').send(body));
app.post('/floor', { schema: { ...answer.schema, body: { type: 'object', additionalProperties: true } } }, (_req, reply) =>
  reply.code(201).type('application/json; charset=utf-8').send(body),
);
const url = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`listening on ${url}`);
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
