// Error texts (issue 11, defect 11): no answer echoes an offending value whole. Every error text
// is capped (thrown, validation, or sent by a route itself), and quoteForError renders a value short.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { quoteForError } from '../../src/util/quote.js';
import { capErrorText, MAX_ERROR_TEXT } from '../../daemon/plugins/errors.js';
import { buildServer } from '../../daemon/server.js';
import { startService, type RunningService } from '../../daemon/start.js';
import { createLogger } from '../../daemon/logger.js';
import { tempDir } from '../helpers/tmp.js';

const MiB = 1024 * 1024;

describe('quoteForError', () => {
  it('quotes short values whole, as JSON', () => {
    expect(quoteForError('open')).toBe('"open"');
    expect(quoteForError('a "b"\n')).toBe('"a \\"b\\"\\n"');
    expect(quoteForError(5)).toBe('5');
    expect(quoteForError({ a: [1] })).toBe('{"a":[1]}');
    expect(quoteForError(undefined)).toBe('undefined');
  });

  it('cuts long values, marks the cut and says how long the value was', () => {
    const q = quoteForError('x'.repeat(MiB));
    expect(q).toBe(`"${'x'.repeat(80)}…" (${MiB} characters)`);
    expect(quoteForError('y'.repeat(50), 10)).toBe(`"${'y'.repeat(10)}…" (50 characters)`);
    expect(quoteForError(Array.from({ length: 1000 }, (_, i) => i)).length).toBeLessThan(120);
  });

  it('never splits a surrogate pair, and never throws on cyclic values', () => {
    const q = quoteForError('a' + '😀'.repeat(100), 2);
    expect(q.startsWith('"a…"')).toBe(true);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(quoteForError(cyclic)).toBe('[object Object]');
  });
});

describe('capErrorText', () => {
  it('keeps texts up to the cap and cuts longer ones to it, marked', () => {
    expect(capErrorText('short')).toBe('short');
    const t = 'e'.repeat(MAX_ERROR_TEXT);
    expect(capErrorText(t)).toBe(t);
    const cut = capErrorText('invalid status: ' + 'x'.repeat(MiB));
    expect(cut.length).toBe(MAX_ERROR_TEXT);
    expect(cut).toMatch(/^invalid status: x+… \(1048592 characters\)$/);
  });
});

describe('error bodies sent by routes themselves are capped too', () => {
  it('a route that sends a huge {"error"} with a 4xx answers a capped one', async () => {
    const app = await buildServer({
      logger: createLogger({ level: 'silent' }),
      service: {
        openapi: { title: 'test', version: '1.0.0' },
        async register(a) {
          a.get('/echo', async (_req, reply) => reply.code(422).send({ error: 'bad: ' + 'z'.repeat(MiB) }));
          a.get('/fine', async () => ({ error: 'z'.repeat(1000) }));
        },
        async close() {},
      },
    });
    try {
      const r = await app.inject({ method: 'GET', url: '/echo' });
      expect(r.statusCode).toBe(422);
      expect(r.json().error.length).toBe(MAX_ERROR_TEXT);
      // 2xx bodies are data, not error texts: untouched.
      expect((await app.inject({ method: 'GET', url: '/fine' })).json().error.length).toBe(1000);
      // An unknown route 16 KiB long is not echoed whole either.
      expect((await app.inject({ method: 'GET', url: '/' + 'p'.repeat(16 * 1024) })).json().error.length).toBe(MAX_ERROR_TEXT);
    } finally {
      await app.close();
    }
  });
});

describe('tickets: a 1 MiB status', () => {
  let svc: RunningService;
  let dir: { path: string; remove(): void };
  const headers = { authorization: 'Bearer t0ken', 'content-type': 'application/json' };
  const send = async (method: string, path: string, body: unknown): Promise<{ status: number; text: string }> => {
    const res = await fetch(svc.url + path, { method, headers, body: JSON.stringify(body) });
    return { status: res.status, text: await res.text() };
  };
  beforeAll(async () => {
    dir = tempDir('mkt-errtext-');
    svc = await startService('tickets', { host: '127.0.0.1', port: 0, dataDir: dir.path, options: { token: 't0ken' }, env: {}, logger: createLogger({ level: 'silent' }), out: new Writable({ write: (_c, _e, cb) => cb() }) });
  });
  afterAll(async () => {
    await svc.close();
    dir.remove();
  });

  it('create and update answer 400 with a short error body naming the field, and change nothing', async () => {
    const big = 's'.repeat(MiB);
    const created = await send('POST', '/tickets', { title: 'stays open' });
    expect(created.status).toBe(201);
    const ticket = JSON.parse(created.text) as { id: string };
    for (const r of [await send('POST', '/tickets', { title: 'x', status: big }), await send('PATCH', `/tickets/${ticket.id}`, { status: big })]) {
      expect(r.status).toBe(400);
      expect(r.text.length).toBeLessThan(MAX_ERROR_TEXT + 20);
      expect((JSON.parse(r.text) as { error: string }).error).toMatch(/status/);
    }
    const list = JSON.parse((await send('GET', '/tickets', undefined)).text) as { data: { id: string; status: string }[] };
    expect(list.data.map((t) => [t.id, t.status])).toEqual([[ticket.id, 'open']]);
  });
});
