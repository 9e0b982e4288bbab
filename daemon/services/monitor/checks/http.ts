// Connection pools for outbound checks, one per timeout (the connect timeout is a pool setting).
// Health checks follow redirects as a browser would; route checks see the raw status.
import { Agent, interceptors, type Dispatcher } from 'undici';

/** Redirects a health check follows before it judges the final answer. */
export const MAX_REDIRECTS = 5;

const agents = new Map<number, Agent>();
const following = new Map<number, Dispatcher>();

export function dispatcherFor(timeoutMs: number): Agent {
  let a = agents.get(timeoutMs);
  if (!a) {
    // No keep-alive: a health check should see a fresh connection, as a new visitor would.
    a = new Agent({ connect: { timeout: timeoutMs }, pipelining: 0 });
    agents.set(timeoutMs, a);
  }
  return a;
}

/** The same pool, following up to MAX_REDIRECTS redirects (a longer chain ends on its 3xx). */
export function followingDispatcherFor(timeoutMs: number): Dispatcher {
  let d = following.get(timeoutMs);
  if (!d) {
    d = dispatcherFor(timeoutMs).compose(interceptors.redirect({ maxRedirections: MAX_REDIRECTS }));
    following.set(timeoutMs, d);
  }
  return d;
}
