// Route checks: GET each configured path on the target's origin and compare the status code.
import { request } from 'undici';
import type { TargetConfig } from '../../../../src/config/monitor.js';
import type { RouteResult } from '../../../../src/store/monitor.js';
import { dispatcherFor } from './http.js';

export async function checkRoutes(t: TargetConfig, now: () => number, stop?: AbortSignal): Promise<RouteResult[]> {
  const origin = new URL(t.url).origin;
  return Promise.all(
    t.routes.map(async (r): Promise<RouteResult> => {
      const started = now();
      const checked_at = new Date(started).toISOString();
      try {
        const res = await request(origin + r.path, {
          method: 'GET',
          headers: { 'user-agent': 'mkt-monitor', ...t.headers },
          dispatcher: dispatcherFor(t.timeoutMs),
          signal: stop ? AbortSignal.any([AbortSignal.timeout(t.timeoutMs), stop]) : AbortSignal.timeout(t.timeoutMs),
        });
        await res.body.dump();
        const ok = res.statusCode === r.status;
        return { path: r.path, status_code: res.statusCode, ok, checked_at, response_time_ms: Math.max(1, Math.round(now() - started)) };
      } catch (err) {
        const e = err as { code?: string; message?: string };
        return { path: r.path, status_code: 0, ok: false, checked_at, response_time_ms: 0, error: e.code ?? e.message ?? String(err) };
      }
    }),
  );
}
