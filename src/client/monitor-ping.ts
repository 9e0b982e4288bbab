// Heartbeat pings (`/ping/{key}[/start|/fail|/N]`) for `mkt monitor ping` and `mkt monitor run`:
// no token, a short timeout per attempt and a few quick retries, all inside a caller's time budget.
import { Agent, request } from 'undici';
import { ApiError, HttpClient, NetworkError, readCapped } from './http.js';
import type { TargetStatusJson } from './monitor.js';
import { tailBytes } from '../util/utf8-tail.js';

/** What a ping says: success, a run began, a failure, or a command's exit status (0-255). */
export type PingSignal = 'success' | 'start' | 'fail' | number;

/** The largest ping body the monitor takes (a bigger one is 413); `mkt monitor ping --log` sends at most this, the end of the log. */
export const PING_BODY_MAX_BYTES = 100 * 1024;
/** How much of a wrapped command's output `mkt monitor run` keeps and sends (the monitor keeps as much). */
export const RUN_LOG_BYTES = 10 * 1024;
/** One attempt's limit, connection and answer together. */
export const ATTEMPT_TIMEOUT_MS = 3_000;
const RETRY_DELAYS_MS = [250, 750];
/** Below this, another attempt is not worth starting. */
const MIN_ATTEMPT_MS = 200;

/** The path suffix of a signal: '' (success), `/start`, `/fail` or `/N`. */
export function signalPath(signal: PingSignal): string {
  return signal === 'success' ? '' : `/${signal}`;
}

/** The signal in words, for messages (`exit status 3`). */
export function signalName(signal: PingSignal): string {
  return typeof signal === 'number' ? `exit status ${signal}` : signal;
}

/**
 * A ping URL as given (`--ping-url`, MKT_MONITOR_PING_URL, the status's `ping_url`), checked and
 * without a trailing slash: http(s), its path ending in `/ping/{key}`. Undefined when it is not one.
 */
export function pingBase(raw: string): string | undefined {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return undefined;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
  if (u.search || u.hash || u.username || u.password) return undefined;
  const path = u.pathname.replace(/\/+$/, '');
  if (!/\/ping\/[A-Za-z0-9_~.-]+$/.test(path)) return undefined;
  return `${u.origin}${path}`;
}

/** Where the monitor is, for messages: scheme and host only, since the path holds the key. */
export function pingHost(base: string): string {
  return new URL(base).host;
}

/** The key's last path segment, so that an answer that quotes it can be masked. */
function keyOf(base: string): string {
  return base.slice(base.lastIndexOf('/') + 1);
}

/** Keeps the key out of a text that is about to be printed. */
export function maskKey(text: string, base: string): string {
  const key = keyOf(base);
  return key ? text.split(key).join('<key>') : text;
}

/** A time budget shared by the calls of one run, so that a dead monitor costs a bounded delay. */
export class PingBudget {
  private readonly until: number;
  constructor(
    ms: number,
    private readonly now: () => number = Date.now,
  ) {
    this.until = now() + ms;
  }
  remaining(): number {
    return Math.max(0, this.until - this.now());
  }
}

export interface PingOptions {
  /** The run's log, sent as the body of a POST; without it the ping is a GET. */
  log?: Buffer;
  /** Default: ATTEMPT_TIMEOUT_MS and three attempts within this budget. */
  budget?: PingBudget;
  sleep?: (ms: number) => Promise<void>;
}

/** An answer, or why there is none: ApiError (the monitor refused: 404, 413, 429) or NetworkError (unreachable, timed out, 5xx). */
export type PingOutcome<T> = { kind: 'ok'; value: T } | { kind: 'failed'; error: ApiError | NetworkError; retried: number };

const defaultSleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Worth another try: no answer, a timeout, or the monitor failing (5xx, 408). A refusal (4xx) stands. */
function retryable(err: unknown): boolean {
  if (err instanceof ApiError) return err.status >= 500 || err.status === 408;
  return err instanceof NetworkError;
}

/** Runs `attempt` with the time each may take, up to three times within the budget. */
async function withRetries<T>(attempt: (timeoutMs: number) => Promise<T>, budget: PingBudget, sleep: (ms: number) => Promise<void>): Promise<PingOutcome<T>> {
  let last: ApiError | NetworkError = new NetworkError('no time left to reach the monitor');
  for (let i = 0; i <= RETRY_DELAYS_MS.length; i++) {
    const left = budget.remaining();
    if (left < MIN_ATTEMPT_MS) return { kind: 'failed', error: last, retried: i };
    try {
      return { kind: 'ok', value: await attempt(Math.min(ATTEMPT_TIMEOUT_MS, left)) };
    } catch (err) {
      if (!(err instanceof ApiError || err instanceof NetworkError)) throw err;
      last = err;
      if (!retryable(err) || i === RETRY_DELAYS_MS.length) return { kind: 'failed', error: err, retried: i };
      await sleep(Math.min(RETRY_DELAYS_MS[i]!, budget.remaining()));
    }
  }
  return { kind: 'failed', error: last, retried: RETRY_DELAYS_MS.length };
}

/**
 * One attempt at `${base}${signalPath}`. Failures carry the reason alone (the server's text, or
 * ECONNREFUSED, a timeout), never the URL: its path holds the key; callers name the host.
 */
async function pingOnce(base: string, signal: PingSignal, log: Buffer | undefined, timeoutMs: number): Promise<unknown> {
  const dispatcher = new Agent({ connect: { timeout: timeoutMs }, keepAliveTimeout: 1_000 });
  try {
    const res = await request(base + signalPath(signal), {
      method: log === undefined ? 'GET' : 'POST',
      headers: log === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'text/plain; charset=utf-8' },
      body: log,
      dispatcher,
      signal: AbortSignal.timeout(timeoutMs),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const text = await readCapped(res.body, 64 * 1024, 'the ping answer', res.headers['content-length']);
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    if (res.statusCode >= 200 && res.statusCode <= 299) return body;
    const said = typeof body === 'object' && body !== null && typeof (body as { error?: unknown }).error === 'string' ? (body as { error: string }).error : `HTTP ${res.statusCode}`;
    throw new ApiError(res.statusCode, `${maskKey(said, base)} (HTTP ${res.statusCode})`, body, res.headers);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    if (err instanceof NetworkError) throw new NetworkError(maskKey(err.message, base), err);
    const e = err as { name?: string; code?: string; message?: string };
    if (e.code === 'UND_ERR_CONNECT_TIMEOUT') throw new NetworkError(`no connection within ${timeoutMs / 1000} s`, err);
    if (e.name === 'TimeoutError' || e.name === 'AbortError' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT') {
      throw new NetworkError(`no answer within ${timeoutMs / 1000} s`, err);
    }
    throw new NetworkError(maskKey(e.code ?? e.message ?? String(err), base), err);
  } finally {
    void dispatcher.destroy().catch(() => undefined);
  }
}

/** Sends one signal to a ping URL (see pingBase), retrying briefly when the monitor cannot be reached. */
export function sendPing(base: string, signal: PingSignal, opts: PingOptions = {}): Promise<PingOutcome<unknown>> {
  const budget = opts.budget ?? new PingBudget(ATTEMPT_TIMEOUT_MS * 3);
  return withRetries((t) => pingOnce(base, signal, opts.log, t), budget, opts.sleep ?? defaultSleep);
}

/** The answer of a status lookup: the target's ping URL, or `none` when it is not a heartbeat target. */
export type PingUrlLookup = { kind: 'ok'; value: string } | { kind: 'none' } | { kind: 'failed'; error: ApiError | NetworkError; retried: number };

/**
 * The target's ping URL from `GET /api/status/{target}` (with the API token), retried like a ping.
 * A `ping_url` that is not one (see pingBase) counts as none.
 */
export async function lookupPingUrl(server: { baseUrl: string; token?: string }, target: string, opts: Pick<PingOptions, 'budget' | 'sleep'> = {}): Promise<PingUrlLookup> {
  const budget = opts.budget ?? new PingBudget(ATTEMPT_TIMEOUT_MS * 3);
  const got = await withRetries(
    (timeoutMs) => new HttpClient({ baseUrl: server.baseUrl, token: server.token, timeoutMs, connectTimeoutMs: ATTEMPT_TIMEOUT_MS }).json<TargetStatusJson>('GET', `/api/status/${encodeURIComponent(target)}`),
    budget,
    opts.sleep ?? defaultSleep,
  );
  if (got.kind === 'failed') return got;
  const url = typeof got.value.ping_url === 'string' ? pingBase(got.value.ping_url) : undefined;
  return url ? { kind: 'ok', value: url } : { kind: 'none' };
}

/** The last `max` bytes of a stream (stdin), read as it comes without holding more than about twice that. */
export async function readStreamTail(stream: AsyncIterable<Buffer | string>, max: number): Promise<Buffer> {
  let held: Buffer[] = [];
  let size = 0;
  for await (const c of stream) {
    const chunk = typeof c === 'string' ? Buffer.from(c) : c;
    held.push(chunk);
    size += chunk.length;
    if (size > 2 * max) {
      const last = tailBytes(Buffer.concat(held, size), max);
      held = [last];
      size = last.length;
    }
  }
  return tailBytes(Buffer.concat(held, size), max);
}

/** The last `max` bytes of a file, read from where they start (a large log is not read whole). */
export async function readFileTail(path: string, max: number): Promise<Buffer> {
  const { open } = await import('node:fs/promises');
  const fh = await open(path, 'r');
  try {
    const st = await fh.stat();
    // A pipe or a device (`--log /dev/stdin`, `<(...)`) has no size to seek from: read it through.
    if (!st.isFile()) return await readStreamTail(fh.createReadStream({ autoClose: false }), max);
    const size = st.size;
    // A few bytes more than wanted, so that tailBytes can drop a character cut at the start.
    const want = Math.min(size, max + 4);
    const buf = Buffer.alloc(want);
    const { bytesRead } = await fh.read(buf, 0, want, size - want);
    return tailBytes(buf.subarray(0, bytesRead), max);
  } finally {
    await fh.close();
  }
}
