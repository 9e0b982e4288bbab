// The one map from HTTP client failures to CLI errors (and so to exit codes; the table is in
// docs/cli.md), with a login hint on 401, a retry hint on 429, and flags named in 400 texts.
import { AuthError, FieldRefusalError, isCliError, NegativeError, UnreachableError, UsageError, type CliError } from './errors.js';
import { ApiError, NetworkError } from '../client/http.js';

/**
 * Which flag of the running command sets each request field (`{ title: '--title' }`), so that a
 * schema refusal (`body.title must NOT have more than 500 characters`) names what the user typed.
 */
export type FieldFlags = Readonly<Record<string, string>>;

export interface ApiErrorContext {
  /** The running command's field → flag map, for fields whose flag has another name (see FieldFlags). */
  flags?: FieldFlags;
}

/**
 * A service that lacks a feature because it is not set up (the monitor without a mesh, spec: 503
 * "the peer mesh is not enabled") says so: 501, or 503 whose text says "not enabled" or "not
 * configured". Any other 503 (closing, database lost) is the server failing: try again.
 */
const NOT_CONFIGURED = /\bnot (enabled|configured)\b/i;

export function isNotConfigured(err: ApiError): boolean {
  return err.status === 501 || (err.status === 503 && NOT_CONFIGURED.test(err.message));
}

/** Seconds until Retry-After (delta-seconds or an HTTP date), or undefined when absent or unreadable. */
export function retryAfterSeconds(headers: ApiError['headers'], now = Date.now()): number | undefined {
  const raw = headers['retry-after'];
  const v = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  if (!v) return undefined;
  if (/^\d+$/.test(v)) return Number(v);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** AJV's texts as the server words them: `body.title`, `querystring.hours`, `params.id`. */
const VALIDATION = /^(body|querystring|params|headers)\.([A-Za-z0-9_$]+)((?:\.[^\s.]+)*) (.+)$/s;

/**
 * A 400 answer as a usage error: a schema refusal of one field becomes a FieldRefusalError naming
 * its flag from `flags` (commands/root/run.ts names the running command's option of the same name
 * when the map has none); any other text is kept as it came.
 */
export function describeRefusal(message: string, flags: FieldFlags = {}): UsageError {
  const m = VALIDATION.exec(message);
  if (!m) return new UsageError(message);
  const [, , field, rest, why] = m as unknown as [string, string, string, string, string];
  // `body.tags.1` is the second value of a repeated flag.
  const item = /^\.(\d+)$/.exec(rest);
  const detail = item ? ` (value ${Number(item[1]) + 1})` : rest ? ` (${rest.slice(1)})` : '';
  return new FieldRefusalError(field, detail, why.replace(/\bNOT\b/g, 'not'), flags[field]);
}

/** Maps one failure; anything that is not a client failure is returned unchanged. */
export function toCliError(err: unknown, service: string, ctx: ApiErrorContext = {}): unknown {
  if (isCliError(err)) return err;
  if (err instanceof NetworkError) return new UnreachableError(err.message);
  if (err instanceof ApiError) return fromStatus(err, service, ctx);
  return err;
}

function fromStatus(err: ApiError, service: string, ctx: ApiErrorContext): CliError {
  const s = err.status;
  if (s === 401) return new AuthError(`${err.message} (HTTP 401)`, `run \`mkt auth login ${service} --server URL\``);
  if (s === 403) return new AuthError(`${err.message} (HTTP 403)`);
  // The request as the command line made it cannot be taken: fix the input.
  if (s === 400 || s === 422) return describeRefusal(err.message, ctx.flags);
  if (s === 413 || s === 414 || s === 415 || s === 431) return new UsageError(`${err.message} (HTTP ${s})`);
  // Try again later: the same command may succeed.
  if (s === 429) {
    const after = retryAfterSeconds(err.headers);
    return new UnreachableError(`${err.message} (HTTP 429)`, after === undefined ? 'rate limited; retry later' : `rate limited; retry after ${after} s`);
  }
  if (s === 408) return new UnreachableError(`${err.message} (HTTP 408)`, 'the server timed out waiting for the request; retry');
  // A feature the server has not set up: a standing answer, not a failure.
  if (isNotConfigured(err)) return new NegativeError(`not configured on the server: ${err.message} (HTTP ${s})`);
  if (s >= 500) return new UnreachableError(`server error: ${err.message} (HTTP ${s})`);
  // 402, 404, 409, 410, 412 and the rest of 4xx: the answer is no.
  return new NegativeError(err.message);
}

/** Runs a client call, translating failures for the service named (with the command's flags, if given). */
export async function callApi<T>(service: string, fn: () => Promise<T>, ctx?: ApiErrorContext): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toCliError(err, service, ctx);
  }
}
