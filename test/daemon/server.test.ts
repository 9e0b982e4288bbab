// The shared server harness: `{"error": ...}` on every non-2xx answer, OpenAPI from route
// schemas, 5xx texts hidden unless exposed, and no raw URL in the request log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { Writable } from 'node:stream';
import { buildServer } from '../../daemon/server.js';
import { createLogger } from '../../daemon/logger.js';
import { HttpError } from '../../daemon/plugins/errors.js';
import fc from 'fast-check';
import { constantTimeEqual, secretMatcher } from '../../daemon/plugins/bearer.js';

let app: FastifyInstance;
let logText = '';

beforeAll(async () => {
  const stream = new Writable({
    write(c: Buffer, _e, cb) {
      logText += c.toString();
      cb();
    },
  });
  app = await buildServer({
    logger: createLogger({ level: 'trace', stream, pretty: false }),
    service: {
      openapi: { title: 'test', version: '1.0.0' },
      async register(a) {
        a.post(
          '/things',
          {
            schema: {
              operationId: 'create_thing',
              body: {
                type: 'object',
                required: ['name'],
                additionalProperties: false,
                properties: { name: { type: 'string', minLength: 1 }, n: { type: 'integer' } },
              },
              response: { 201: { type: 'object', properties: { name: { type: 'string' } } } },
            },
          },
          async (req, reply) => reply.code(201).send(req.body),
        );
        a.get('/boom', async () => {
          throw new Error('database password is hunter2');
        });
        a.get('/exposed', async () => {
          throw new HttpError(500, 'disk full');
        });
        a.get('/secret/:key', async () => ({ ok: true }));
        a.post('/echo', async (req) => ({ got: req.body }));
        // A route's own limit, below the server's (the parsers read it only when a route sets one).
        a.post('/echo-small', { bodyLimit: 64 }, async (req) => ({ got: req.body }));
      },
      async close() {},
    },
  });
});
afterAll(() => app.close());

describe('server harness', () => {
  it('unknown routes answer 404 with an error body', async () => {
    const r = await app.inject({ method: 'GET', url: '/nope' });
    expect(r.statusCode).toBe(404);
    expect(r.json()).toEqual({ error: 'no route for GET /nope' });
  });

  it('a URL the router refuses (a bad %-escape, a path segment over 1024 characters) answers {"error"} without echoing it', async () => {
    const bad = await app.inject({ method: 'GET', url: '/secret/%zz' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ error: 'the URL is malformed (a bad %-escape)' });
    const long = await app.inject({ method: 'GET', url: `/secret/${'k'.repeat(2000)}` });
    expect(long.statusCode).toBe(414);
    expect(long.json()).toEqual({ error: 'a path segment is longer than 1024 characters' });
    expect((await app.inject({ method: 'GET', url: `/secret/${'k'.repeat(1000)}` })).json()).toEqual({ ok: true });
  });

  it('malformed JSON answers 400 with an error body', async () => {
    const r = await app.inject({ method: 'POST', url: '/things', headers: { 'content-type': 'application/json' }, payload: '{"name":' });
    expect(r.statusCode).toBe(400);
    expect(r.json().error).toMatch(/malformed JSON body/);
  });

  it('schema violations answer 400 naming the field', async () => {
    const missing = await app.inject({ method: 'POST', url: '/things', payload: { n: 1 } });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual({ error: 'body.name is required' });
    const wrongType = await app.inject({ method: 'POST', url: '/things', payload: { name: 'a', n: 'x' } });
    expect(wrongType.statusCode).toBe(400);
    expect(wrongType.json().error).toMatch(/^body\.n must be integer/);
    const extra = await app.inject({ method: 'POST', url: '/things', payload: { name: 'a', zzz: 1 } });
    expect(extra.json()).toEqual({ error: 'body.zzz is not an allowed field' });
  });

  it('the body parsers keep the answers of fastify: empty JSON, prototype poisoning, text, other types, size', async () => {
    const post = (payload: string, type: string) => app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': type }, payload });
    const empty = await post('', 'application/json');
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toEqual({ error: 'request body is empty but content-type is application/json' });
    for (const poisoned of ['{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"admin":true}}}']) {
      const r = await post(poisoned, 'application/json');
      expect(r.statusCode, poisoned).toBe(400);
      expect(r.json().error, poisoned).toEqual(expect.any(String));
    }
    expect((await post('{"a":[1,{"b":"[[["}]}', 'application/json; charset=utf-8')).json()).toEqual({ got: { a: [1, { b: '[[[' }] } });
    expect((await post('plain words', 'text/plain')).json()).toEqual({ got: 'plain words' });
    const other = await post('x', 'application/x-unknown');
    expect(other.statusCode).toBe(415);
    expect(other.json().error).toEqual(expect.any(String));
    const big = await post(JSON.stringify({ s: 'x'.repeat(1024 * 1024) }), 'application/json');
    expect(big.statusCode).toBe(413);
    expect(big.json().error).toEqual(expect.any(String));
    const hundred = JSON.stringify({ s: 'x'.repeat(90) });
    expect((await post(hundred, 'application/json')).statusCode).toBe(200);
    for (const type of ['application/json', 'text/plain']) {
      const small = await app.inject({ method: 'POST', url: '/echo-small', headers: { 'content-type': type }, payload: hundred });
      expect(small.statusCode, type).toBe(413);
      const fits = await app.inject({ method: 'POST', url: '/echo-small', headers: { 'content-type': type }, payload: '{"s":"x"}' });
      expect(fits.statusCode, type).toBe(200);
    }
  });

  it('valid requests pass', async () => {
    const r = await app.inject({ method: 'POST', url: '/things', payload: { name: 'a' } });
    expect(r.statusCode).toBe(201);
  });

  it('hides unexpected 5xx texts but shows exposed ones', async () => {
    const hidden = await app.inject({ method: 'GET', url: '/boom' });
    expect(hidden.statusCode).toBe(500);
    expect(hidden.json()).toEqual({ error: 'internal server error' });
    const shown = await app.inject({ method: 'GET', url: '/exposed' });
    expect(shown.json()).toEqual({ error: 'disk full' });
  });

  it('serves an OpenAPI 3.1 document built from the route schemas', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.paths['/things'].post.operationId).toBe('create_thing');
    expect(doc.paths['/things'].post.requestBody.content['application/json'].schema.required).toEqual(['name']);
    expect(doc.paths['/secret/{key}'].get).toBeDefined();
  });

  it('logs the route pattern, never the raw URL', async () => {
    await app.inject({ method: 'GET', url: '/secret/LICENSE-KEY-abc123', headers: { authorization: 'Bearer tok-xyz' } });
    expect(logText).toContain('/secret/:key');
    expect(logText).not.toContain('LICENSE-KEY-abc123');
    expect(logText).not.toContain('tok-xyz');
  });
});

describe('bearer helpers', () => {
  it('compares tokens exactly', () => {
    expect(constantTimeEqual('abc', 'abc')).toBe(true);
    expect(constantTimeEqual('abc', 'abd')).toBe(false);
    expect(constantTimeEqual('abc', 'abcd')).toBe(false);
  });

  it('a secret matcher accepts its secret alone', () => {
    const secret = 'tök-0123456789abcdef';
    const matches = secretMatcher(secret);
    expect(matches(secret)).toBe(true);
    for (const other of ['tök-0123456789abcdeF', 'tok-0123456789abcdef', 'tök-0123456789abcde', `${secret} `, '', 'x'.repeat(10_000)]) expect(matches(other), other).toBe(false);
    fc.assert(fc.property(fc.string(), fc.string(), (a, b) => secretMatcher(a)(b) === (a === b)));
  });

  it('a secret matcher reads the token after a prefix, and holds secrets longer than its array', () => {
    fc.assert(fc.property(fc.string(), fc.string(), fc.string(), (a, prefix, b) => secretMatcher(a)(prefix + b, prefix.length) === (a === b)));
    const long = 'k'.repeat(5000) + 'é';
    const matches = secretMatcher(long);
    expect(matches(long)).toBe(true);
    expect(matches(`Bearer ${long}`, 7)).toBe(true);
    // The array's zeros and its wrap-around past 4096 code units match nothing: the lengths differ.
    for (const other of ['k'.repeat(5000), `${long}\0`, `${long}k`, 'k'.repeat(5001), `${'k'.repeat(4999)}é`]) expect(matches(other)).toBe(false);
    const short = secretMatcher('abc');
    for (const other of ['abc\0', `abc${'\0'.repeat(4093)}`, `abc${'\0'.repeat(4093)}abc`, 'ab']) expect(short(other)).toBe(false);
    expect(short('Bearer abc', 11)).toBe(false);
    expect(secretMatcher('')('')).toBe(true);
    expect(secretMatcher('')('\0')).toBe(false);
  });
});
