// Proves a token against its server before `mkt auth login` saves it (gh's `auth login` asks
// GET /user): one cheap, read-only, authenticated request per service, and who the server says we are.
import { ApiError, HttpClient } from './http.js';
import type { ServiceName } from '../config/services.js';

export interface TokenProof {
  /** What the server told us about the holder of the token, for a person to read. */
  identity: string;
  /** Something the user should know although the token was accepted. */
  warning?: string;
}

/** The server answered, but not as the service asked for would (a wrong URL or port). */
export class WrongServiceError extends Error {
  constructor(
    readonly service: ServiceName,
    readonly url: string,
    readonly detail: string,
  ) {
    super(`${url} does not answer as a ${service} server (${detail})`);
    this.name = 'WrongServiceError';
  }
}

/**
 * The request that proves a token, per service:
 * - tickets: GET /sync/node (every tickets route needs the token; it names the node);
 * - monitor: GET /api/status (needs the token when the monitor has one configured);
 * - marketplace: GET /api/user (the account of the token, as gh's GET /user).
 */
export const PROOF_PATH: Record<ServiceName, string> = {
  tickets: '/sync/node',
  monitor: '/api/status',
  marketplace: '/api/user',
};

function client(url: string, token: string | undefined): HttpClient {
  return new HttpClient({ baseUrl: url, token, timeoutMs: 15_000, connectTimeoutMs: 5_000, maxResponseBytes: 16 * 1024 * 1024 });
}

/**
 * Asks the server whether `token` is good. Throws ApiError (401/403: the token is refused; other
 * statuses as the server said them), NetworkError (unreachable) or WrongServiceError.
 */
export async function proveToken(service: ServiceName, url: string, token: string): Promise<TokenProof> {
  const http = client(url, token);
  const path = PROOF_PATH[service];
  const read = async <T>(): Promise<T> => {
    try {
      return await http.json<T>('GET', path);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) throw new WrongServiceError(service, url, `GET ${path}: HTTP 404`);
      throw err;
    }
  };
  if (service === 'tickets') {
    const body = await read<{ node_id?: unknown }>();
    if (typeof body?.node_id !== 'string') throw new WrongServiceError(service, url, `GET ${path} named no node`);
    return { identity: `node ${body.node_id}` };
  }
  if (service === 'monitor') {
    const body = await read<{ targets?: unknown }>();
    if (typeof body?.targets !== 'object' || body.targets === null) throw new WrongServiceError(service, url, `GET ${path} listed no targets`);
    const n = Object.keys(body.targets).length;
    const identity = `${n} target${n === 1 ? '' : 's'} watched`;
    // A monitor without a configured token lets every request pass, so the check above proved nothing.
    const anonymous = await client(url, undefined).send('GET', path);
    if (anonymous.status >= 200 && anonymous.status < 300) {
      return { identity, warning: `the monitor at ${url} has no API token configured: it answers without one, so this token was not checked` };
    }
    return { identity };
  }
  const body = await read<{ name?: unknown; scope?: unknown }>();
  if (typeof body?.name !== 'string') throw new WrongServiceError(service, url, `GET ${path} named no account`);
  return { identity: typeof body.scope === 'string' ? `user ${body.name} (token scope ${body.scope})` : `user ${body.name}` };
}
