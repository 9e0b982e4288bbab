// Connection pools for outbound checks, one per timeout (the connect timeout is a pool setting),
// and the health check's redirect following. Route checks see the raw status.
import { Agent, request, type Dispatcher } from 'undici';

/** Redirects a health check follows before it judges the final answer. */
export const MAX_REDIRECTS = 5;

const REDIRECT_STATUSES = new Set([300, 301, 302, 303, 307, 308]);

const agents = new Map<number, Agent>();

export function dispatcherFor(timeoutMs: number): Agent {
  let a = agents.get(timeoutMs);
  if (!a) {
    // No keep-alive: a health check should see a fresh connection, as a new visitor would.
    a = new Agent({ connect: { timeout: timeoutMs }, pipelining: 0 });
    agents.set(timeoutMs, a);
  }
  return a;
}

export class RedirectLoopError extends Error {
  constructor(url: string) {
    super(`redirect loop at ${url}`);
    this.name = 'RedirectLoopError';
  }
}

export interface FollowOptions {
  /** Sent on every hop (user-agent, accept). */
  headers: Record<string, string>;
  /** The target's configured headers (API keys, tokens): sent only while the chain stays on the first origin. */
  secretHeaders: Record<string, string>;
  timeoutMs: number;
  signal: AbortSignal;
}

function location(res: Dispatcher.ResponseData): string | undefined {
  const l = res.headers.location;
  return Array.isArray(l) ? l[0] : l;
}

/**
 * GETs `url`, following up to MAX_REDIRECTS redirects (a longer chain ends on its 3xx). Like a
 * browser dropping `Authorization`, the configured headers are dropped for good once a redirect
 * leaves the origin (scheme, host and port) they were configured for: an open redirect on the
 * target must not hand its secrets to another host.
 */
export async function getFollowing(url: string, opts: FollowOptions): Promise<Dispatcher.ResponseData> {
  let current = new URL(url);
  let trusted = true;
  const seen = new Set([current.href]);
  for (let hops = 0; ; hops++) {
    const res = await request(current, {
      method: 'GET',
      headers: trusted ? { ...opts.headers, ...opts.secretHeaders } : opts.headers,
      dispatcher: dispatcherFor(opts.timeoutMs),
      signal: opts.signal,
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
    });
    const loc = location(res);
    if (!REDIRECT_STATUSES.has(res.statusCode) || loc === undefined || hops >= MAX_REDIRECTS) return res;
    let next: URL;
    try {
      next = new URL(loc, current);
    } catch {
      return res;
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:') return res;
    await res.body.dump();
    next.hash = '';
    if (seen.has(next.href)) throw new RedirectLoopError(next.href);
    seen.add(next.href);
    if (next.origin !== current.origin) trusted = false;
    current = next;
  }
}
