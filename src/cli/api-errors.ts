// Maps HTTP client failures to CLI errors (and so to exit codes), with a login hint on 401.
import { AuthError, isCliError, NegativeError, UnreachableError, UsageError } from './errors.js';
import { ApiError, NetworkError } from '../client/http.js';

export function toCliError(err: unknown, service: string): unknown {
  if (isCliError(err)) return err;
  if (err instanceof NetworkError) return new UnreachableError(err.message);
  if (err instanceof ApiError) {
    if (err.status === 401 || err.status === 403) {
      return new AuthError(`${err.message} (HTTP ${err.status})`, err.status === 401 ? `run \`mkt auth login ${service} --server URL\`` : undefined);
    }
    if (err.status === 400) return new UsageError(err.message);
    if (err.status >= 500) return new UnreachableError(`server error: ${err.message} (HTTP ${err.status})`);
    return new NegativeError(err.message);
  }
  return err;
}

/** Runs a client call, translating failures for the service named. */
export async function callApi<T>(service: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toCliError(err, service);
  }
}
