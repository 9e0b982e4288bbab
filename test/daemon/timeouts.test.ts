// Slow clients (issue 11, defect 6 "slowloris"): a real tickets server on port 0, driven over raw
// TCP sockets, closes a connection whose headers, body or bytes stall, and still serves a request
// that is slow but keeps progressing. Timeouts are shortened through the service options.
import { afterEach, describe, expect, it } from 'vitest';
import { connect, type Socket } from 'node:net';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { startService, type RunningService } from '../../daemon/start.js';
import { createLogger } from '../../daemon/logger.js';
import type { ServerTimeouts } from '../../daemon/timeouts.js';
import { tempDir } from '../helpers/tmp.js';
import { fakeIO } from '../helpers/fake-io.js';
import { run } from '../../commands/root/run.js';

const TOKEN = 'secret-token';
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A service on port 0 with shortened timeouts, silent, removed after the test. */
async function serve(service: 'tickets' | 'monitor', timeouts: Partial<ServerTimeouts>, setup: (dir: string) => { configPath?: string; options: Record<string, unknown> }): Promise<RunningService> {
  const dir = tempDir(`mkt-timeouts-${service}-`);
  const svc = await startService(service, {
    host: '127.0.0.1',
    port: 0,
    dataDir: dir.path,
    ...setup(dir.path),
    env: {},
    timeouts,
    logger: createLogger({ level: 'silent' }),
    out: new Writable({ write: (_c, _e, cb) => cb() }),
  });
  cleanups.push(() => dir.remove(), () => svc.close());
  return svc;
}

const tickets = (timeouts: Partial<ServerTimeouts>): Promise<RunningService> => serve('tickets', timeouts, () => ({ options: { token: TOKEN } }));

const PING_KEY = 'slow-log-ping-key-0123456789';

/** A monitor with one heartbeat target whose ping key is PING_KEY. */
const monitor = (timeouts: Partial<ServerTimeouts>): Promise<RunningService> =>
  serve('monitor', timeouts, (dir) => {
    const configPath = join(dir, 'monitor.yaml');
    writeFileSync(configPath, `token: ${TOKEN}\ntargets:\n  job:\n    heartbeat: { period: 1h, ping_key: ${PING_KEY} }\n    interval: 1h\n`);
    return { configPath, options: {} };
  });

interface Raw {
  socket: Socket;
  /** Everything the server sent so far. */
  received(): string;
  /** Resolves with what the server sent once it closed the connection; rejects after `withinMs`. */
  closed(withinMs?: number): Promise<string>;
  /** Resolves once the server's answer contains `text`. */
  sees(text: string, withinMs?: number): Promise<void>;
}

async function open(svc: { url: string }): Promise<Raw> {
  const { port } = new URL(svc.url);
  const socket = connect(Number(port), '127.0.0.1');
  cleanups.push(() => void socket.destroy());
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let text = '';
  socket.on('data', (c: Buffer) => (text += c.toString('utf8')));
  socket.on('error', () => undefined); // a reset after the server's close is fine
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const bound = <T,>(p: Promise<T>, ms: number, what: string): Promise<T> =>
    Promise.race([p, new Promise<never>((_r, reject) => setTimeout(() => reject(new Error(`${what} not within ${ms} ms; received: ${JSON.stringify(text)}`)), ms).unref())]);
  return {
    socket,
    received: () => text,
    closed: (withinMs = 15_000) => bound(ended.then(() => text), withinMs, 'connection closed'),
    async sees(needle, withinMs = 15_000) {
      await bound(
        new Promise<void>((resolve) => {
          const check = (): void => {
            if (text.includes(needle)) {
              socket.off('data', check);
              resolve();
            }
          };
          socket.on('data', check);
          check();
        }),
        withinMs,
        `answer containing ${needle}`,
      );
    },
  };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const headers = (body: string, auth = true): string =>
  `POST /tickets HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth ? `Authorization: Bearer ${TOKEN}\r\n` : ''}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
const BODY = JSON.stringify({ title: 'slow but steady', requester: 'ana@example.com' });

describe('server timeouts against slow clients', () => {
  it('headers and one body byte, then silence: 408 {"error"} and the connection is closed (request timeout)', async () => {
    const svc = await tickets({ requestMs: 300 });
    const raw = await open(svc);
    raw.socket.write(headers(BODY) + BODY.slice(0, 1));
    const answer = await raw.closed();
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toMatch(/connection: close/i);
    expect(answer).toContain('{"error":"request body not received within 300 ms"}');
  });

  it('a body dripped one byte at a time, never idle, is still cut at the request timeout', async () => {
    const svc = await tickets({ requestMs: 500, idleMs: 5_000 });
    const raw = await open(svc);
    raw.socket.write(headers(BODY));
    const closed = raw.closed();
    let sent = 0;
    // Drips for at most 20 s; a server without a whole-body limit would wait for all of it.
    for (; sent < 200 && !raw.socket.destroyed && !raw.received(); sent++) {
      raw.socket.write(' ');
      await sleep(100);
    }
    const answer = await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(sent).toBeLessThan(200);
  });

  it('unauthenticated headers and one body byte: 401 and the connection is closed, not held for the body', async () => {
    // Every timeout long: the close comes from the unread body, not from a timer.
    const svc = await tickets({});
    const raw = await open(svc);
    raw.socket.write(headers(BODY, false) + BODY.slice(0, 1));
    const answer = await raw.closed();
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(answer).toContain('{"error":"unauthorized"}');
  });

  it('half a header line, then silence: the connection is closed (headers timeout)', async () => {
    const svc = await tickets({ headersMs: 300 });
    const raw = await open(svc);
    raw.socket.write('POST /api/tick');
    const answer = await raw.closed();
    // Node answers 408 before it closes; no request ever reached a handler.
    expect(answer === '' || /^HTTP\/1\.1 408 /.test(answer)).toBe(true);
  });

  it('a connection that goes silent mid-request is closed (idle timeout)', async () => {
    const svc = await tickets({ idleMs: 300 });
    const raw = await open(svc);
    raw.socket.write(headers(BODY) + BODY.slice(0, 1));
    await raw.closed();
  });

  it('a keep-alive connection waiting for its next request is closed after the keep-alive timeout', async () => {
    const svc = await tickets({ keepAliveMs: 300 });
    const raw = await open(svc);
    raw.socket.write(headers(BODY) + BODY);
    await raw.sees('"title":"slow but steady"');
    const answer = await raw.closed();
    expect(answer).toMatch(/^HTTP\/1\.1 201 /);
  });

  it('a slow request that keeps progressing is answered', async () => {
    const svc = await tickets({ headersMs: 5_000, requestMs: 10_000, idleMs: 2_000 });
    const raw = await open(svc);
    const head = headers(BODY);
    // Headers in three pieces, then the body in four, with pauses shorter than every limit.
    for (const piece of [head.slice(0, 10), head.slice(10, 40), head.slice(40)]) {
      raw.socket.write(piece);
      await sleep(150);
    }
    const q = Math.ceil(BODY.length / 4);
    for (let i = 0; i < BODY.length; i += q) {
      raw.socket.write(BODY.slice(i, i + q));
      await sleep(150);
    }
    await raw.sees('"title":"slow but steady"');
    expect(raw.received()).toMatch(/^HTTP\/1\.1 201 /);
    // The connection stays open for its next request.
    expect(raw.socket.destroyed).toBe(false);
    const list = await fetch(`${svc.url}/tickets`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(JSON.stringify(await list.json())).toContain('slow but steady');
  });
});

describe('a heartbeat ping whose log never finishes (issue 31 "a connection that never finishes")', () => {
  // The ping taken before fastify (a content-length) and the one fastify reads (chunked) alike.
  it.each([
    ['a content-length (the direct route)', `Content-Type: text/plain\r\nContent-Length: 90000\r\n`, (b: string): string => b],
    ['a chunked body (the fastify route)', `Content-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n`, (b: string): string => `${b.length.toString(16)}\r\n${b}\r\n`],
  ])('%s dripped a byte at a time, never idle: 408 at the request timeout, the connection closed, no ping recorded', async (_what, head, frame) => {
    const svc = await monitor({ requestMs: 500, idleMs: 5_000 });
    const raw = await open(svc);
    raw.socket.write(`POST /ping/${PING_KEY}/0 HTTP/1.1\r\nHost: 127.0.0.1\r\n${head}\r\n`);
    const closed = raw.closed();
    let sent = 0;
    // Drips for at most 20 s; a reader without a whole-body limit would wait for all of it.
    for (; sent < 200 && !raw.socket.destroyed && !raw.received(); sent++) {
      raw.socket.write(frame('x'));
      await sleep(100);
    }
    const answer = await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toMatch(/connection: close/i);
    expect(answer).toContain('{"error":"request body not received within 500 ms"}');
    expect(sent).toBeLessThan(200);
    const status = await fetch(`${svc.url}/api/status/job`, { headers: { authorization: `Bearer ${TOKEN}` } });
    // A target never pinged shows no last ping (the field is left out).
    const { heartbeat } = (await status.json()) as { heartbeat: { watching_since: string; last_ping_at?: string } };
    expect(heartbeat.watching_since).toBeDefined();
    expect(heartbeat).not.toHaveProperty('last_ping_at');
    // The next ping, sent whole, is taken.
    expect((await fetch(`${svc.url}/ping/${PING_KEY}/0`, { method: 'POST', body: 'done\n' })).status).toBe(200);
  });
});

describe('mkt serve --*-timeout flags', () => {
  it('a timeout that is not a positive number of seconds is a usage error (exit 2)', async () => {
    for (const [flag, value] of [['--idle-timeout', '0'], ['--request-timeout', 'soon'], ['--headers-timeout', '-1'], ['--keep-alive-timeout', '1e9']]) {
      const io = fakeIO({ env: {} });
      expect(await run(['serve', 'tickets', '--port', '0', flag!, value!], io), flag).toBe(2);
      expect(io.err(), flag).toContain(`${flag} must be a positive number of seconds`);
    }
  });

  it('the real binary applies them: --request-timeout 0.3 answers a stalled body 408 and closes', async () => {
    const dir = tempDir('mkt-timeouts-bin-');
    const mkt = join(import.meta.dirname, '../../bin/mkt');
    const child = spawn(process.execPath, [mkt, 'serve', 'tickets', '--port', '0', '--data-dir', dir.path, '--request-timeout', '0.3'], {
      env: { ...process.env, MKT_TICKETS_TOKEN: TOKEN, MKT_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    cleanups.push(async () => {
      child.kill('SIGTERM');
      await exited;
      dir.remove();
    });
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /^listening on (http:\/\/\S+)$/m.exec(out);
        if (m) resolve(m[1]!);
      });
      child.stderr.on('data', (c: Buffer) => (out += c.toString()));
      child.once('exit', () => reject(new Error(`exited before listening: ${out}`)));
    });
    const raw = await open({ url });
    raw.socket.write(headers(BODY) + BODY.slice(0, 1));
    expect(await raw.closed()).toContain('{"error":"request body not received within 300 ms"}');
  });
});
