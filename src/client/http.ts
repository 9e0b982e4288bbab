// Shared JSON-over-HTTP client (undici) for every service client: timeouts, bearer auth,
// `{"error": ...}` bodies turned into ApiError. Used by commands and by daemons' peer calls.
import { Agent, request } from 'undici';

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
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  /** Raw body (sent as-is) instead of JSON. */
  rawBody?: Buffer | string;
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
      const text = await res.body.text();
      const ctype = String(res.headers['content-type'] ?? '');
      let parsed: unknown = text;
      if (ctype.includes('json') && text.length > 0) {
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = text;
        }
      }
      return { status: res.statusCode, headers: res.headers, body: parsed as T };
    } catch (err) {
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
      throw new ApiError(res.status, msg, res.body);
    }
    return res.body;
  }
}
