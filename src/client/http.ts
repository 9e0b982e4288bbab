// Shared JSON-over-HTTP client (undici) for every service client: timeouts, bearer auth,
// `{"error": ...}` bodies turned into ApiError. Used by commands and by daemons' peer calls.
import { Agent, request } from 'undici';
import { MAX_ANSWER_JSON_DEPTH, jsonDepthExceeds } from '../util/json-depth.js';

export interface HttpClientOptions {
  baseUrl: string;
  token?: string;
  /** Connection establishment timeout. */
  connectTimeoutMs?: number;
  /** Whole-request timeout, headers and body included. */
  timeoutMs?: number;
  headers?: Record<string, string>;
  /** Cancels every request of this client, in flight or to come (a daemon stopping). */
  signal?: AbortSignal;
  /** Largest answer body read, in bytes (default DEFAULT_MAX_RESPONSE_BYTES); past it the request is aborted. */
  maxResponseBytes?: number;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  /** Raw body (sent as-is) instead of JSON. */
  rawBody?: Buffer | string;
  /** This request's answer cap, in bytes, instead of the client's. */
  maxResponseBytes?: number;
}

export interface HttpResponse<T> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
}

/** A non-2xx answer. `message` is the server's `error` text when it sent one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: unknown,
    /** The answer's headers, when known (Retry-After tells a rate-limited caller when to come back). */
    readonly headers: Record<string, string | string[] | undefined> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The server could not be reached (DNS, refused, timeout). */
export class NetworkError extends Error {
  constructor(
    message: string,
    override readonly cause?: unknown,
  ) {
    super(message);
    this.name = 'NetworkError';
  }
}

/**
 * An answer body larger than its cap. A NetworkError, so the CLI maps it to exit 3 like any
 * other server failure; its own class, so daemons can log it as a refused answer.
 */
export class ResponseTooLargeError extends NetworkError {
  constructor(
    readonly limitBytes: number,
    readonly where: string,
  ) {
    super(`refused answer: larger than ${limitBytes} bytes (${where})`);
    this.name = 'ResponseTooLargeError';
  }
}

/**
 * A JSON answer nested deeper than MAX_ANSWER_JSON_DEPTH: it would parse, and then overflow the
 * stack wherever it is serialized again (a mesh peer's status is served back in /api/mesh).
 */
export class AnswerTooDeepError extends NetworkError {
  constructor(
    readonly limitDepth: number,
    readonly where: string,
  ) {
    super(`refused answer: JSON nested deeper than ${limitDepth} levels (${where})`);
    this.name = 'AnswerTooDeepError';
  }
}

/** By shape as well as class: the CLI's start-up bundle holds its own copy of this module. */
export function isResponseTooLarge(err: unknown): err is ResponseTooLargeError {
  return err instanceof ResponseTooLargeError || (err instanceof Error && err.name === 'ResponseTooLargeError' && typeof (err as Partial<ResponseTooLargeError>).limitBytes === 'number');
}

/**
 * The default answer cap. Every byte a server sends is held until parsed (twice, as bytes and
 * as text), so an unbounded answer is a memory bomb: a peer answering a pull with 473 MB held
 * a tickets node at 5.5 GB for minutes. Callers that legitimately read more say so per request.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/**
 * Reads a body up to `max` bytes, counting as it streams; past the cap the body is destroyed
 * (which closes the connection) and ResponseTooLargeError names `where` and the cap. The text
 * is decoded as undici's `text()` does (UTF-8, a leading BOM dropped).
 */
export async function readCapped(body: AsyncIterable<Buffer> & { destroy(err?: Error): unknown }, max: number, where: string, declaredLength?: string | string[]): Promise<string> {
  const declared = Number(Array.isArray(declaredLength) ? declaredLength[0] : declaredLength);
  // An announced length over the cap is refused before a byte of it is read.
  if (Number.isFinite(declared) && declared > max) {
    body.destroy();
    throw new ResponseTooLargeError(max, where);
  }
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const chunk of body) {
    n += chunk.length;
    if (n > max) {
      body.destroy();
      throw new ResponseTooLargeError(max, where);
    }
    chunks.push(chunk);
  }
  return new TextDecoder().decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, n));
}

const agents = new Map<number, Agent>();
function agentFor(connectTimeoutMs: number): Agent {
  let a = agents.get(connectTimeoutMs);
  if (!a) {
    a = new Agent({ connect: { timeout: connectTimeoutMs }, keepAliveTimeout: 4_000 });
    agents.set(connectTimeoutMs, a);
  }
  return a;
}

export class HttpClient {
  readonly baseUrl: string;
  constructor(private readonly opts: HttpClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
  }

  url(path: string, query?: RequestOptions['query']): string {
    const u = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) u.searchParams.set(k, String(v));
    return u.toString();
  }

  /** Sends a request and returns status, headers and the parsed body, whatever the status. */
  async send<T = unknown>(method: string, path: string, ro: RequestOptions = {}): Promise<HttpResponse<T>> {
    const headers: Record<string, string> = { accept: 'application/json', ...this.opts.headers, ...ro.headers };
    if (this.opts.token) headers.authorization = `Bearer ${this.opts.token}`;
    let body: string | Buffer | undefined;
    if (ro.rawBody !== undefined) body = ro.rawBody;
    else if (ro.body !== undefined) {
      body = JSON.stringify(ro.body);
      headers['content-type'] = 'application/json';
    }
    const timeoutMs = this.opts.timeoutMs ?? 30_000;
    const url = this.url(path, ro.query);
    try {
      const res = await request(url, {
        method: method as 'GET',
        headers,
        body,
        dispatcher: agentFor(this.opts.connectTimeoutMs ?? 5_000),
        signal: this.opts.signal ? AbortSignal.any([AbortSignal.timeout(timeoutMs), this.opts.signal]) : AbortSignal.timeout(timeoutMs),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const { pathname, host } = new URL(url);
      const where = `${method} ${pathname} at ${host}`;
      const text = await readCapped(res.body, ro.maxResponseBytes ?? this.opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES, where, res.headers['content-length']);
      const ctype = String(res.headers['content-type'] ?? '');
      let parsed: unknown = text;
      if (ctype.includes('json') && text.length > 0) {
        if (jsonDepthExceeds(text, MAX_ANSWER_JSON_DEPTH)) throw new AnswerTooDeepError(MAX_ANSWER_JSON_DEPTH, where);
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = text;
        }
      }
      return { status: res.statusCode, headers: res.headers, body: parsed as T };
    } catch (err) {
      if (err instanceof ResponseTooLargeError || err instanceof AnswerTooDeepError) throw err;
      const e = err as { name?: string; code?: string; message?: string };
      if (this.opts.signal?.aborted) throw new NetworkError(`cancelled a request to ${this.baseUrl}: ${String(this.opts.signal.reason instanceof Error ? this.opts.signal.reason.message : this.opts.signal.reason)}`, err);
      // Which limit ran out tells an operator where to look: a host that drops packets
      // (firewall, wrong address) or a server that accepted and hangs.
      if (e.code === 'UND_ERR_CONNECT_TIMEOUT') throw new NetworkError(`timed out connecting to ${this.baseUrl} (connect timeout, ${(this.opts.connectTimeoutMs ?? 5_000) / 1000} s)`, err);
      if (e.name === 'TimeoutError' || e.name === 'AbortError' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT') {
        throw new NetworkError(`timed out talking to ${this.baseUrl} (no complete answer within ${timeoutMs / 1000} s)`, err);
      }
      throw new NetworkError(`cannot reach ${this.baseUrl}: ${e.code ?? e.message ?? String(err)}`, err);
    }
  }

  /** Like send, but a non-2xx answer throws ApiError. */
  async json<T = unknown>(method: string, path: string, ro: RequestOptions = {}): Promise<T> {
    const res = await this.send<T>(method, path, ro);
    if (res.status < 200 || res.status > 299) {
      const b = res.body as { error?: unknown } | string;
      const msg = typeof b === 'object' && b && typeof b.error === 'string' ? b.error : `HTTP ${res.status}`;
      throw new ApiError(res.status, msg, res.body, res.headers);
    }
    return res.body;
  }
}
