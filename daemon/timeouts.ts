// Server timeouts against slow clients (slowloris): how long headers, a buffered body and a
// silent socket may take, with the defaults every `mkt serve` uses and their fastify/node options.

export interface ServerTimeouts {
  /** From the first byte of a request until its headers are complete (node `headersTimeout`). */
  headersMs: number;
  /** From the start of reading a JSON or text body until all of it arrived; 408 after that. */
  requestMs: number;
  /** No byte in either direction on a connection with a request in progress: closed. */
  idleMs: number;
  /** How long a keep-alive connection may wait for its next request. */
  keepAliveMs: number;
}

export const DEFAULT_TIMEOUTS: Readonly<ServerTimeouts> = {
  headersMs: 15_000,
  requestMs: 60_000,
  idleMs: 60_000,
  // fastify's default: longer than the 60 s idle timeout of common load balancers, so that a
  // balancer never reuses a connection the server is just closing.
  keepAliveMs: 72_000,
};

export function resolveTimeouts(t: Partial<ServerTimeouts> = {}): ServerTimeouts {
  const out = { ...DEFAULT_TIMEOUTS };
  for (const k of Object.keys(out) as (keyof ServerTimeouts)[]) {
    const v = t[k];
    if (v === undefined) continue;
    if (!Number.isFinite(v) || v <= 0) throw new RangeError(`timeout ${k} must be a positive number of milliseconds, got ${v}`);
    out[k] = v;
  }
  return out;
}

/**
 * The fastify options for these timeouts. Node's own `requestTimeout` stays off: it would also
 * cut streamed blob uploads and git pushes, which may take long for large files; those are
 * bounded by the idle timeout instead, and buffered bodies by `requestMs` (plugins/body.ts).
 * The idle timeout is not among them: daemon/idle-sweep.ts applies it, not node's socket timer.
 */
export function fastifyTimeoutOptions(t: ServerTimeouts) {
  return {
    keepAliveTimeout: t.keepAliveMs,
    requestTimeout: 0,
    http: {
      headersTimeout: t.headersMs,
      requestTimeout: 0,
      // Node checks header deadlines on this interval (default 30 s, which would double a 15 s limit).
      connectionsCheckingInterval: Math.max(50, Math.min(5_000, Math.floor(t.headersMs / 4))),
    },
  };
}
