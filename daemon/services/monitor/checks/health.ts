// The health check: GET the target's URL and turn the answer into operational, degraded or
// down. Redirects are followed (the target's headers stay on its origin, hops stay off the
// monitor's network); the final HTTP status decides first (anything but 2xx is down); a JSON
// body's `status` from the configured origin, or slowness, can lower it. A target's
// `conditions` replace the status and body rules: all must hold, or the first that fails is down.
import type { TargetConfig } from '../../../../src/config/monitor.js';
import type { Snapshot } from '../../../../src/store/monitor.js';
import { evaluateConditions, needsCertificate, type Condition, type ConditionAnswer } from '../../../../src/monitor/conditions.js';
import { getFollowing, RedirectLoopError, RedirectRefusedError, type HopPolicy } from './http.js';
import { checkTls } from './tls.js';
import type { Dispatcher } from 'undici';
import { readCapped, ResponseTooLargeError } from '../../../../src/client/http.js';

const UP = new Set(['ok', 'up', 'pass', 'passing', 'healthy', 'operational', 'green', 'available']);
const DEGRADED = new Set(['degraded', 'warn', 'warning', 'partial', 'yellow', 'slow', 'maintenance']);
const DOWN = new Set(['down', 'fail', 'failing', 'error', 'critical', 'unhealthy', 'red', 'unavailable', 'outage']);

/** Reads a health body's own status word (`status`, or `state`); undefined when it has none. */
export function bodyStatus(body: unknown): 'operational' | 'degraded' | 'down' | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const b = body as Record<string, unknown>;
  const raw = typeof b.status === 'string' ? b.status : typeof b.state === 'string' ? b.state : undefined;
  if (raw === undefined) return undefined;
  const w = raw.trim().toLowerCase();
  if (UP.has(w)) return 'operational';
  if (DEGRADED.has(w)) return 'degraded';
  if (DOWN.has(w)) return 'down';
  return 'degraded'; // a status word we do not know is not a clean bill of health
}

/** A health body past this size is not read further (and not kept as details): memory stays bounded. */
export const MAX_BODY_BYTES = 256 * 1024;

/** The body as text, or undefined once it passes `max` bytes (announced or streamed; the rest is not read). */
async function bodyText(res: Dispatcher.ResponseData, max: number): Promise<string | undefined> {
  try {
    return await readCapped(res.body, max, 'health body', res.headers['content-length']);
  } catch (err) {
    if (err instanceof ResponseTooLargeError) return undefined;
    throw err;
  }
}

/**
 * One health check. `hops` (how redirect hosts resolve and classify) is injected by tests only.
 * An answer from another origin than the configured one (after a redirect) is judged by its HTTP
 * status alone and leaves no `details`: its body is not the target's word, and it is public.
 */
export async function checkHealth(t: TargetConfig, now: () => number, stop?: AbortSignal, hops?: HopPolicy): Promise<Snapshot> {
  const started = now();
  const checked_at = new Date(started).toISOString();
  const conditions = t.conditions?.length ? t.conditions : undefined;
  // Read beside the request (its own handshake), only when a condition asks for it; never left
  // rejected, since nobody awaits it when the request fails first.
  const certificate = conditions && needsCertificate(conditions) ? certificateTimeLeft(t, now).catch(() => undefined) : undefined;
  try {
    const signal = stop ? AbortSignal.any([AbortSignal.timeout(t.timeoutMs), stop]) : AbortSignal.timeout(t.timeoutMs);
    const opts = { headers: { 'user-agent': 'mkt-monitor', accept: 'application/json' }, secretHeaders: t.headers, timeoutMs: t.timeoutMs, signal, hops };
    return await getFollowing(t.url, opts, async (res, onOrigin): Promise<Snapshot> => {
      let text: string | undefined;
      if (onOrigin) text = await bodyText(res, MAX_BODY_BYTES);
      else res.body.on('error', () => undefined).destroy(); // unread: destroying it reports an abort
      const elapsed = Math.max(1, Math.round(now() - started));
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = undefined;
      }
      const details = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
      if (conditions) {
        const bodyUnread = !onOrigin ? 'the answer came from another origin' : text === undefined ? `larger than ${MAX_BODY_BYTES} bytes` : undefined;
        return judged(t, conditions, { status: res.statusCode, responseTimeMs: elapsed, body: text ?? '', ...(bodyUnread ? { bodyUnread } : {}), certificateExpiresInMs: await certificate }, checked_at, details);
      }
      if (res.statusCode < 200 || res.statusCode >= 300) {
        const snap: Snapshot = { status: 'down', checked_at, response_time_ms: 0, error: `HTTP ${res.statusCode}` };
        if (details) snap.details = details;
        return snap;
      }
      const own = bodyStatus(body);
      const slow = t.degradedAfterMs !== undefined && elapsed > t.degradedAfterMs;
      const status = own ?? 'operational';
      const snap: Snapshot = { status: slow && status === 'operational' ? 'degraded' : status, checked_at, response_time_ms: own === 'down' ? 0 : elapsed };
      if (details) snap.details = details;
      if (own === 'down') snap.error = `the endpoint reports status ${JSON.stringify((details?.status ?? details?.state) as string)}`;
      return snap;
    });
  } catch (err) {
    const e = err as { name?: string; code?: string; message?: string };
    const timedOut = e.name === 'TimeoutError' || e.name === 'AbortError' || /timeout/i.test(e.code ?? '');
    const known = err instanceof RedirectLoopError ? 'redirect loop' : err instanceof RedirectRefusedError ? err.message : undefined;
    return { status: 'down', checked_at, response_time_ms: 0, error: timedOut ? `timed out after ${t.timeoutMs} ms` : (known ?? e.code ?? e.message ?? String(err)) };
  }
}

/**
 * The time left on the certificate of the configured host and port (a handshake of its own, the
 * chain not judged: the request itself fails on an untrusted one); 0 on http, as Gatus does, so
 * `> 48h` fails; undefined when the handshake fails.
 */
async function certificateTimeLeft(t: TargetConfig, now: () => number): Promise<number | undefined> {
  const u = new URL(t.url);
  if (u.protocol !== 'https:') return 0;
  const r = await checkTls({ host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port || 443), warnDays: 0 }, t.timeoutMs, now);
  return r.not_after === null ? undefined : Date.parse(r.not_after) - now();
}

/** The snapshot for an answer judged by conditions; a slow answer over degraded_after is still degraded. */
function judged(t: TargetConfig, conditions: readonly Condition[], answer: ConditionAnswer, checked_at: string, details: Record<string, unknown> | undefined): Snapshot {
  const failed = evaluateConditions(conditions, answer);
  const slow = t.degradedAfterMs !== undefined && answer.responseTimeMs > t.degradedAfterMs;
  const snap: Snapshot = failed
    ? { status: 'down', checked_at, response_time_ms: 0, error: failed }
    : { status: slow ? 'degraded' : 'operational', checked_at, response_time_ms: answer.responseTimeMs };
  if (details) snap.details = details;
  return snap;
}
