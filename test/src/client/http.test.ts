// HttpClient's answer cap (issue 28, finding 2): a server's body is counted while it streams and
// the request is aborted past the cap, so a hostile peer cannot make the reader hold its answer
// in memory. Real HTTP on 127.0.0.1: the servers count what they managed to send before the
// client hung up.
import { describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { AnswerTooDeepError, DEFAULT_MAX_RESPONSE_BYTES, HttpClient, NetworkError, ResponseTooLargeError } from '../../../src/client/http.js';
import { MAX_ANSWER_JSON_DEPTH } from '../../../src/util/json-depth.js';
import { toCliError } from '../../../src/cli/api-errors.js';
import { ExitCode, exitCodeFor } from '../../../src/cli/errors.js';
import { waitFor } from '../../helpers/wait.js';
import { listenLocal, type Bin } from '../../helpers/local-http.js';

const MiB = 1024 * 1024;

interface Served {
  url: string;
  host: string;
  /** Bytes of body written by the server, and whether the client's connection has closed. */
  sent: { bytes: number; closed: boolean };
}

async function serve(bin: Bin, answer: (req: IncomingMessage, res: ServerResponse, sent: Served['sent']) => void): Promise<Served> {
  const sent = { bytes: 0, closed: false };
  const server = createServer((req, res) => {
    req.socket.once('close', () => (sent.closed = true));
    answer(req, res, sent);
  });
  const url = await listenLocal(server, bin);
  return { url, host: new URL(url).host, sent };
}

/** Streams `total` bytes of a JSON string in 64 KiB chunks, minding backpressure, until done or the client leaves. */
function streamJson(res: ServerResponse, total: number, sent: Served['sent'], headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': 'application/json', ...headers });
  const chunk = Buffer.alloc(64 * 1024, 'x');
  res.write('"');
  const pump = (): void => {
    while (sent.bytes < total && !res.destroyed) {
      const piece = chunk.subarray(0, Math.min(chunk.length, total - sent.bytes));
      sent.bytes += piece.length;
      if (!res.write(piece)) return void res.once('drain', pump);
    }
    if (!res.destroyed) res.end('"');
  };
  pump();
}

describe('HttpClient: answers are capped while they stream', () => {
  it.concurrent('a 50 MiB answer to a client capped at 1 MiB is refused, and the connection closed long before the end', async ({ onTestFinished: bin }) => {
    const s = await serve(bin, (_req, res, sent) => streamJson(res, 50 * MiB, sent));
    const client = new HttpClient({ baseUrl: s.url, maxResponseBytes: MiB, timeoutMs: 60_000 });
    const err = await client.json('GET', '/sync/pull', { query: { since: 'x' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResponseTooLargeError);
    expect(err).toBeInstanceOf(NetworkError);
    // It names the host and the cap (and not the query string).
    expect((err as Error).message).toBe(`refused answer: larger than ${MiB} bytes (GET /sync/pull at ${s.host})`);
    expect((err as ResponseTooLargeError).limitBytes).toBe(MiB);
    await waitFor(async () => s.sent.closed, 'the server to see the connection closed', 30_000);
    // The kernel's socket buffers hold a few MiB; the server never got near the end.
    expect(s.sent.bytes).toBeLessThan(20 * MiB);
  });

  it.concurrent('a Content-Length above the cap is refused before the body arrives', async ({ onTestFinished: bin }) => {
    // Announces 2 MiB, sends a few bytes and then nothing: waiting for the body would take the
    // whole 60 s timeout; refusing on the header does not.
    const s = await serve(bin, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(2 * MiB) });
      res.write('{"tickets":[');
    });
    const client = new HttpClient({ baseUrl: s.url, maxResponseBytes: MiB, timeoutMs: 60_000 });
    const err = await client.send('GET', '/tickets').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResponseTooLargeError);
    expect((err as Error).message).toContain(`larger than ${MiB} bytes`);
    expect((err as Error).message).toContain(s.host);
    await waitFor(async () => s.sent.closed, 'the server to see the connection closed', 30_000);
  });

  it.concurrent('an answer of exactly the cap is read; the request\'s own cap wins over the client\'s', async ({ onTestFinished: bin }) => {
    // A counter per request: the server answers several.
    const s = await serve(bin, (req, res) => streamJson(res, Number(new URL(req.url!, 'http://x').searchParams.get('n')) - 2, { bytes: 0, closed: false }));
    const client = new HttpClient({ baseUrl: s.url, maxResponseBytes: 1000 });
    expect((await client.json<string>('GET', '/a', { query: { n: 1000 } })).length).toBe(998);
    await expect(client.json('GET', '/a', { query: { n: 1001 } })).rejects.toBeInstanceOf(ResponseTooLargeError);
    expect((await client.json<string>('GET', '/a', { query: { n: 5000 }, maxResponseBytes: 5000 })).length).toBe(4998);
    await expect(client.json('GET', '/a', { query: { n: 1001 }, maxResponseBytes: 500 })).rejects.toThrow(/larger than 500 bytes/);
  });

  it.concurrent('without a cap of its own a client stops at the default (64 MiB), also on an error status', async ({ onTestFinished: bin }) => {
    const s = await serve(bin, (_req, res, sent) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(256 * 1024, ' ');
      // Endless: only the client's cap ends it.
      const pump = (): void => {
        while (!res.destroyed) {
          sent.bytes += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
      };
      pump();
    });
    const err = await new HttpClient({ baseUrl: s.url, timeoutMs: 120_000 }).send('GET', '/api/status').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResponseTooLargeError);
    expect((err as ResponseTooLargeError).limitBytes).toBe(DEFAULT_MAX_RESPONSE_BYTES);
    await waitFor(async () => s.sent.closed, 'the server to see the connection closed', 30_000);
    expect(s.sent.bytes).toBeLessThan(DEFAULT_MAX_RESPONSE_BYTES + 32 * MiB);
  });

  it('the CLI maps a refused answer to exit 3 (the server failed), with the message naming host and cap', () => {
    const cli = toCliError(new ResponseTooLargeError(MiB, 'GET /tickets at example.test:7072'), 'tickets');
    expect(exitCodeFor(cli)).toBe(ExitCode.unreachable);
    expect((cli as Error).message).toBe(`refused answer: larger than ${MiB} bytes (GET /tickets at example.test:7072)`);
  });
});

describe('HttpClient: answers nested too deep are refused', () => {
  it.concurrent('a JSON answer nested 5,000 levels deep is refused; 1,000 levels and brackets inside strings are read', async ({ onTestFinished: bin }) => {
    const nest = (d: number): string => '['.repeat(d) + ']'.repeat(d);
    const s = await serve(bin, (req, res) => {
      const d = Number(new URL(req.url!, 'http://x').searchParams.get('d'));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(d > 0 ? `{"x":${nest(d)}}` : JSON.stringify({ x: '['.repeat(5000) }));
    });
    const client = new HttpClient({ baseUrl: s.url });
    const err = await client.json('GET', '/api/peer/status', { query: { d: 5000 } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AnswerTooDeepError);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as Error).message).toBe(`refused answer: JSON nested deeper than ${MAX_ANSWER_JSON_DEPTH} levels (GET /api/peer/status at ${s.host})`);
    // What is read can be written again (JSON.stringify overflowed on the 5,000 levels).
    expect(JSON.stringify(await client.json('GET', '/a', { query: { d: 1000 } })).length).toBe(2006);
    expect(await client.json('GET', '/a', { query: { d: 0 } })).toEqual({ x: '['.repeat(5000) });
  });
});
