// Connection pools for outbound checks, one per timeout (the connect timeout is a pool setting),
// and the health check's redirect following. Route checks see the raw status.
import type { LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, request, type Dispatcher } from 'undici';
import { addressClass, resolveChecked, systemLookup, type AddressClass, type Lookup } from './address.js';

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

/** A redirect off the configured origin to an address the monitor does not reach for others. */
export class RedirectRefusedError extends Error {
  constructor(url: URL, reason: string) {
    // The message is public (dashboard, /api/status): the hop's origin and path only, shortened.
    const shown = `${url.protocol}//${url.host}${url.pathname}`;
    super(`redirect to ${shown.length > 120 ? `${shown.slice(0, 119)}…` : shown} not followed: ${reason}`);
    this.name = 'RedirectRefusedError';
  }
}

/** How hops are resolved and classified; tests inject both (they have no public DNS). */
export interface HopPolicy {
  lookup: Lookup;
  classify: (ip: string) => AddressClass;
}

export const systemHops: HopPolicy = { lookup: systemLookup, classify: addressClass };

export interface FollowOptions {
  /** Sent on every hop (user-agent, accept). */
  headers: Record<string, string>;
  /** The target's configured headers (API keys, tokens): sent only while the chain stays on the first origin. */
  secretHeaders: Record<string, string>;
  timeoutMs: number;
  signal: AbortSignal;
  hops?: HopPolicy;
}

function location(res: Dispatcher.ResponseData): string | undefined {
  const l = res.headers.location;
  return Array.isArray(l) ? l[0] : l;
}

/** A URL's host as a resolver or an address check takes it (IPv6 without brackets). */
function hostOf(u: URL): string {
  return u.hostname.replace(/^\[|\]$/g, '');
}

/** `p`, or the signal's reason once it aborts: a resolver that hangs does not outlive the check. */
function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => (signal.removeEventListener('abort', onAbort), resolve(v)),
      (e: unknown) => (signal.removeEventListener('abort', onAbort), reject(e as Error)),
    );
  });
}

/** A socket lookup that answers only with the addresses checked for each host: no second DNS answer to rebind. */
function pinnedLookup(checked: Map<string, string[]>): LookupFunction {
  return (hostname, options, callback) => {
    const addresses = checked.get(hostname);
    queueMicrotask(() => {
      if (!addresses) return callback(Object.assign(new Error(`${hostname} was not checked`), { code: 'ENOTFOUND' }), '', 4);
      if (options.all) return callback(null, addresses.map((address): LookupAddress => ({ address, family: isIP(address) })));
      callback(null, addresses[0]!, isIP(addresses[0]!));
    });
  };
}

/**
 * GETs `url`, following up to MAX_REDIRECTS redirects (a longer chain ends on its 3xx), and
 * hands the final answer to `read` with whether every hop stayed on the configured origin
 * (scheme, host and port). Like a browser dropping `Authorization`, the configured headers are
 * dropped for good once a redirect leaves that origin. A hop off the origin was chosen by the
 * remote side, so it follows the WHOIS referral rule: every address of its host must be public
 * unicast, or, when the configured target is itself on loopback or a private range (a local
 * set-up), loopback or private too. Every connection goes to the addresses checked here.
 */
export async function getFollowing<T>(url: string, opts: FollowOptions, read: (res: Dispatcher.ResponseData, onOrigin: boolean) => Promise<T>): Promise<T> {
  const policy = opts.hops ?? systemHops;
  const configured = new URL(url);
  // The configured host is the operator's choice: resolved once, not judged, and its class sets
  // how far redirects may reach.
  const firstHost = hostOf(configured);
  const firstAddresses = isIP(firstHost) ? [firstHost] : await abortable(policy.lookup(firstHost), opts.signal);
  if (firstAddresses.length === 0) throw Object.assign(new Error(`${firstHost} resolves to no address`), { code: 'ENOTFOUND' });
  const localTarget = firstAddresses.every((a) => policy.classify(a) === 'local');
  const allowed = (ip: string): boolean => {
    const c = policy.classify(ip);
    return c === 'public' || (localTarget && c === 'local');
  };
  const checked = new Map([[firstHost, firstAddresses]]);
  // One pool per check, whose sockets can only reach checked addresses; no keep-alive, so a
  // health check sees a fresh connection, as a new visitor would.
  const agent = new Agent({ connect: { timeout: opts.timeoutMs, lookup: pinnedLookup(checked) }, pipelining: 0 });
  let current = configured;
  let onOrigin = true;
  const seen = new Set([current.href]);
  try {
    for (let hops = 0; ; hops++) {
      const res = await request(current, {
        method: 'GET',
        headers: onOrigin ? { ...opts.headers, ...opts.secretHeaders } : opts.headers,
        dispatcher: agent,
        signal: opts.signal,
        headersTimeout: opts.timeoutMs,
        bodyTimeout: opts.timeoutMs,
      });
      const loc = location(res);
      if (!REDIRECT_STATUSES.has(res.statusCode) || loc === undefined || hops >= MAX_REDIRECTS) return await read(res, onOrigin);
      let next: URL;
      try {
        next = new URL(loc, current);
      } catch {
        return await read(res, onOrigin);
      }
      if (next.protocol !== 'http:' && next.protocol !== 'https:') return await read(res, onOrigin);
      await res.body.dump();
      next.hash = '';
      if (seen.has(next.href)) throw new RedirectLoopError(next.href);
      seen.add(next.href);
      if (next.origin !== configured.origin) {
        onOrigin = false;
        const r = await abortable(resolveChecked(hostOf(next), allowed, policy.lookup), opts.signal);
        if (!r.ok) throw new RedirectRefusedError(next, r.reason);
        if (!isIP(hostOf(next))) checked.set(hostOf(next), r.addresses);
      }
      current = next;
    }
  } finally {
    void agent.destroy().catch(() => undefined);
  }
}
