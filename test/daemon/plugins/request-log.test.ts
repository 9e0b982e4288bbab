// The request line: written from a template, it must be the very line pino would write for the
// same fields (same keys, order, bindings and values), one per request, at info only, with the
// route pattern of every kind of route and `unmatched` for what no route took.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { Writable } from 'node:stream';
import { buildServer } from '../../../daemon/server.js';
import { createLogger, type Logger } from '../../../daemon/logger.js';
import fc from 'fast-check';
import { RequestLines, tenths } from '../../../daemon/plugins/request-log.js';
import { LineBatch } from '../../../daemon/log-batch.js';
import { EventEmitter } from 'node:events';
import pino from 'pino';

function capture(): { stream: Writable; lines: () => Record<string, unknown>[]; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(c: Buffer, _e, cb) {
      text += c.toString();
      cb();
    },
  });
  return { stream, text: () => text, lines: () => text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) };
}

/** The request lines written since line `before`. */
function requestLines(out: ReturnType<typeof capture>, before: number): Record<string, unknown>[] {
  return out.lines().slice(before).filter((l) => l.msg === 'request');
}

/** The method, route and status of each line. */
const triples = (lines: Record<string, unknown>[]): unknown[][] => lines.map((l) => [l.method, l.route, l.status]);

/** The lines of the routes both servers below have, in the order both send them. */
const SHARED: unknown[][] = [
  ['GET', '/a/:id', 200],
  ['HEAD', '/a/:id', 200],
  ['DELETE', '/b/:id', 200],
  ['PUT', '/b/:id', 200],
];

describe('RequestLines', () => {
  it('writes the line pino writes for the same fields, bindings included', () => {
    const ours = capture();
    const theirs = capture();
    const a = createLogger({ level: 'info', stream: ours.stream, pretty: false }).child({ service: 'monitor "x"' });
    const b = createLogger({ level: 'info', stream: theirs.stream, pretty: false }).child({ service: 'monitor "x"' });
    new RequestLines(a).write('req-1f', RequestLines.routePart('GET', '/ping/:key'), 200, 0.34567);
    b.info({ reqId: 'req-1f', method: 'GET', route: '/ping/:key', status: 200, ms: 0.3 }, 'request');
    // Only the time may differ (two calls of Date.now()).
    const strip = (s: string): string => s.replace(/"time":\d+/, '"time":T');
    expect(strip(ours.text())).toBe(strip(theirs.text()));
    expect(ours.text().endsWith('\n')).toBe(true);
  });

  it('writes nothing while the level is above info, and again once it is lowered', () => {
    const out = capture();
    const logger: Logger = createLogger({ level: 'warn', stream: out.stream, pretty: false });
    const lines = new RequestLines(logger);
    lines.write('req-1', RequestLines.routePart('GET', '/x'), 200, 1);
    expect(out.text()).toBe('');
    logger.level = 'debug';
    lines.write('req-2', RequestLines.routePart('GET', '/x'), 200, 1);
    expect(out.lines().map((l) => l.reqId)).toEqual(['req-2']);
  });
});

describe('the request log of a server', () => {
  const out = capture();
  let app: FastifyInstance;
  let ownHookRuns = 0;
  beforeAll(async () => {
    app = await buildServer({
      logger: createLogger({ level: 'info', stream: out.stream, pretty: false }).child({ service: 't' }),
      service: {
        openapi: { title: 't', version: '1' },
        async register(a) {
          a.get('/a/:id', async () => ({ ok: true }));
          a.route({ method: ['PUT', 'DELETE'], url: '/b/:id', handler: async () => ({ ok: true }) });
          // A route with its own onResponse hook keeps it, and still logs once.
          a.get('/c', { onResponse: (_req, _reply, done) => {
            ownHookRuns++;
            done();
          } }, async () => ({ ok: true }));
          await a.register(
            async (child) => {
              child.post('/d', async () => ({ ok: true }));
            },
            { prefix: '/pre' },
          );
        },
        async close() {},
      },
    });
  });
  afterAll(() => app.close());

  it('logs each request once with its route pattern, never its raw URL', async () => {
    const before = out.lines().length;
    await app.inject({ method: 'GET', url: '/a/SECRET-1' });
    await app.inject({ method: 'HEAD', url: '/a/SECRET-2' });
    await app.inject({ method: 'DELETE', url: '/b/SECRET-3' });
    await app.inject({ method: 'PUT', url: '/b/SECRET-4' });
    await app.inject({ method: 'GET', url: '/c' });
    await app.inject({ method: 'POST', url: '/pre/d', payload: { a: 1 } });
    await app.inject({ method: 'GET', url: '/nowhere/SECRET-5' });
    const got = requestLines(out, before);
    expect(triples(got)).toEqual([
      ...SHARED,
      ['GET', '/c', 200],
      ['POST', '/pre/d', 200],
      ['GET', 'unmatched', 404],
    ]);
    for (const l of got) {
      expect(l).toMatchObject({ level: 30, service: 't', msg: 'request' });
      expect(typeof l.reqId).toBe('string');
      expect(typeof l.ms).toBe('number');
      expect(typeof l.time).toBe('number');
    }
    expect(ownHookRuns).toBe(1);
    expect(out.text()).not.toContain('SECRET');
  });
});

describe('the request log of a listening server', () => {
  const out = capture();
  let app: FastifyInstance;
  let url: string;
  const finishListeners: number[] = [];
  beforeAll(async () => {
    app = await buildServer({
      logger: createLogger({ level: 'info', stream: out.stream, pretty: false }).child({ service: 'h' }),
      service: {
        openapi: { title: 'h', version: '1' },
        async register(a) {
          a.get('/a/:id', async (_req, reply) => {
            // What listens to the answer's end: node's own listener only, no closure of fastify's per request.
            finishListeners.push(reply.raw.listenerCount('finish'));
            return { ok: true };
          });
          a.route({ method: ['PUT', 'DELETE'], url: '/b/:id', handler: async () => ({ ok: true }) });
          a.post('/c', { schema: { body: { type: 'object', required: ['n'], properties: { n: { type: 'number' } } } } }, async () => ({ ok: true }));
        },
        async close() {},
      },
    });
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => app.close());

  it('writes one line a request when its answer is sent, with the route pattern, `unmatched` for what no route took', async () => {
    const before = out.lines().length;
    const send = async (method: string, path: string, body?: string): Promise<number> => {
      const res = await fetch(`${url}${path}`, { method, body, headers: body === undefined ? {} : { 'content-type': 'application/json' } });
      await res.arrayBuffer();
      return res.status;
    };
    expect(await send('GET', '/a/SECRET-1')).toBe(200);
    expect(await send('HEAD', '/a/SECRET-2')).toBe(200);
    expect(await send('DELETE', '/b/SECRET-3')).toBe(200);
    expect(await send('PUT', '/b/SECRET-4')).toBe(200);
    expect(await send('POST', '/c', '{"n":1}')).toBe(200);
    expect(await send('POST', '/c', '{"n":"SECRET-5"}')).toBe(400);
    expect(await send('POST', '/c', '{"n":')).toBe(400);
    expect(await send('GET', '/nowhere/SECRET-6')).toBe(404);
    // A URL the router refuses answers through frameworkErrors: logged too, as unmatched.
    expect(await send('GET', '/a/%zzSECRET-7')).toBe(400);
    // The line is written at the answer's `finish`, which may follow the client's read by a turn:
    // polled until all are there (the timeout bounds only a failure).
    await expect.poll(() => requestLines(out, before).length, { timeout: 30_000, interval: 5 }).toBe(9);
    const got = requestLines(out, before);
    expect(triples(got)).toEqual([
      ...SHARED,
      ['POST', '/c', 200],
      ['POST', '/c', 400],
      ['POST', '/c', 400],
      ['GET', 'unmatched', 404],
      ['GET', 'unmatched', 400],
    ]);
    // Each line's id is its own, and the id the request's other lines carry.
    expect(new Set(got.map((l) => l.reqId)).size).toBe(9);
    for (const l of got) expect(l).toMatchObject({ level: 30, service: 'h', msg: 'request' });
    expect(out.text()).not.toContain('SECRET');
    expect(finishListeners).toEqual([1, 1]);
  });
});

describe('the request line\'s ms', () => {
  it('is written as JSON writes the duration rounded to a tenth, from integers', () => {
    const json = (ms: number) => JSON.stringify(Math.round(ms * 10) / 10);
    for (const ms of [0, 0.04, 0.05, 0.95, 1, 9.96, 12.25, 1e9, 1e12]) expect(tenths(ms)).toBe(json(ms));
    fc.assert(fc.property(fc.double({ min: 0, max: 1e7, noNaN: true }), (ms) => tenths(ms) === json(ms)), { numRuns: 20_000 });
  });
});

describe('the request line as bytes (daemon/request-line-bytes.ts)', () => {
  /** A logger writing into a LineBatch, as the daemon's does, and the chunks the batch hands on. */
  function batched(bindings: pino.Bindings, bytes = 16 * 1024): { logger: Logger; batch: LineBatch; text: () => string } {
    const chunks: Buffer[] = [];
    const target = Object.assign(new EventEmitter(), { write: (c: Buffer) => chunks.push(c) });
    const batch = new LineBatch(target, bytes, 60_000);
    const logger = pino({ level: 'info', base: { pid: 1 } }, batch).child(bindings);
    return { logger, batch, text: () => (batch.drain(), Buffer.concat(chunks).toString('utf8')) };
  }

  it('is byte for byte the template\'s line, for any id, route, status, duration and bindings', () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 12 });
    fc.assert(
      fc.property(text, text, text, fc.integer({ min: -5, max: 1200 }), fc.oneof(fc.double({ min: -10, max: 2e8, noNaN: true }), fc.constantFrom(0, 0.05, 99.95, 107374182.3)), text, (service, reqId, route, status, ms, method) => {
        const ours = batched({ service });
        const theirs = capture();
        const template = createLogger({ level: 'info', stream: theirs.stream, pretty: false }).child({ service });
        (template as unknown as Record<symbol, unknown>)[pino.symbols.chindingsSym] = (ours.logger as unknown as Record<symbol, unknown>)[pino.symbols.chindingsSym];
        const part = RequestLines.routePart(method, route);
        new RequestLines(ours.logger).write(reqId, part, status, ms);
        new RequestLines(template).write(reqId, part, status, ms);
        const strip = (s: string): string => s.replace(/^\{"level":30,"time":\d{13},/, '');
        expect(strip(ours.text())).toBe(strip(theirs.text()));
        expect(ours.text()).toMatch(/^\{"level":30,"time":\d{13},/);
        // Every line this writer takes is JSON with the fields given.
        const line = JSON.parse(ours.text()) as Record<string, unknown>;
        expect([line.reqId, line.method, line.route, line.service]).toEqual([reqId, method, route, service]);
      }),
      { numRuns: 3000 },
    );
  });

  it('keeps its place among the logger\'s other lines, across chunks and past a line longer than a chunk', () => {
    const out = batched({ service: 's' }, 300);
    const lines = new RequestLines(out.logger);
    const part = RequestLines.routePart('GET', '/t/:id');
    const expected: string[] = [];
    for (let i = 0; i < 200; i++) {
      if (i % 7 === 3) {
        // Non-ASCII text, and now and then one line longer than the whole buffer.
        const note = i % 35 === 3 ? 'ü'.repeat(3000) : `naïve ✓ ${i}`;
        out.logger.info({ i }, note);
        expected.push(note);
      } else {
        lines.write(`req-${i.toString(36)}`, part, 200, i / 10);
        expected.push(`req-${i.toString(36)}`);
      }
    }
    const got = out.text().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { msg: string; reqId?: string });
    expect(got.map((l) => l.reqId ?? l.msg)).toEqual(expected);
  });
});
