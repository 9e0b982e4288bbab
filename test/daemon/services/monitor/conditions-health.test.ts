// Issue 31, "Conditions on an HTTP answer", against real local HTTP servers through checkHealth:
// each placeholder, conditions replacing the default rules (a 404 can be operational),
// degraded_after beside them, the body limit, an answer from another origin, and a path that
// tries to reach outside the answer.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { checkHealth, MAX_BODY_BYTES } from '../../../../daemon/services/monitor/checks/health.js';
import type { TargetConfig } from '../../../../src/config/monitor.js';
import { parseCondition } from '../../../../src/monitor/conditions.js';
import { listenLocal } from '../../../helpers/local-http.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});
const now = (): number => Date.now();

/** A real server answering every request with `handle`. */
async function site(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  return listenLocal(createServer(handle), (c) => closers.push(c));
}
const json = (status: number, body: unknown) => (_q: IncomingMessage, res: ServerResponse): void => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

function target(url: string, conditions: string[] | undefined, extra: Partial<TargetConfig> = {}): TargetConfig {
  return { name: 't', label: 't', url, intervalMs: 60_000, timeoutMs: 5000, headers: {}, routes: [], dns: [], ...(conditions ? { conditions: conditions.map(parseCondition) } : {}), ...extra };
}

describe('conditions decide operational or down instead of the default rules', () => {
  it('[STATUS] == 404 is operational on a 404 (down without conditions)', async () => {
    const url = await site(json(404, { error: 'gone' }));
    expect(await checkHealth(target(url, undefined), now)).toMatchObject({ status: 'down', error: 'HTTP 404' });
    const s = await checkHealth(target(url, ['[STATUS] == 404']), now);
    expect(s).toMatchObject({ status: 'operational', details: { error: 'gone' } });
    expect(s.error).toBeUndefined();
    expect(s.response_time_ms).toBeGreaterThan(0);
  });

  it('the first failing condition is the error: [BODY].status == ok (was "starting")', async () => {
    const url = await site(json(200, { status: 'starting', db: { ok: true, lag_ms: 12 } }));
    const s = await checkHealth(target(url, ['[STATUS] == 200', '[BODY].db.ok == true', '[BODY].status == ok', '[BODY].db.lag_ms < 5']), now);
    expect(s).toEqual({ status: 'down', checked_at: s.checked_at, response_time_ms: 0, error: 'condition failed: [BODY].status == ok (was "starting")', details: { status: 'starting', db: { ok: true, lag_ms: 12 } } });
  });

  it('a body status word the default rules call down is operational when the conditions hold', async () => {
    const url = await site(json(200, { status: 'down', maintenance: true }));
    expect((await checkHealth(target(url, undefined), now)).status).toBe('down');
    expect((await checkHealth(target(url, ['[BODY].maintenance == true']), now)).status).toBe('operational');
  });

  it('a 500 fails [STATUS] == 200 naming the status', async () => {
    const url = await site(json(500, { status: 'ok' }));
    expect(await checkHealth(target(url, ['[STATUS] == any(200, 204)', '[BODY].status == ok']), now)).toMatchObject({ status: 'down', error: 'condition failed: [STATUS] == any(200, 204) (was 500)' });
  });

  it('[RESPONSE_TIME] is the answer time in ms', async () => {
    const url = await site(json(200, {}));
    expect((await checkHealth(target(url, ['[RESPONSE_TIME] < 60s', '[RESPONSE_TIME] >= 1']), now)).status).toBe('operational');
    const s = await checkHealth(target(url, ['[RESPONSE_TIME] > 60000']), now);
    expect(s.status).toBe('down');
    expect(s.error).toMatch(/^condition failed: \[RESPONSE_TIME\] > 60000 \(was \d+\)$/);
  });

  it('degraded_after still lowers operational to degraded; a failing condition stays down', async () => {
    const url = await site(json(200, { status: 'ok' }));
    // Any answer takes at least 1 ms, so degraded_after 0 makes every answer slow without timing anything.
    expect((await checkHealth(target(url, ['[STATUS] == 200'], { degradedAfterMs: 0 }), now)).status).toBe('degraded');
    expect((await checkHealth(target(url, ['[STATUS] == 201'], { degradedAfterMs: 0 }), now)).status).toBe('down');
    expect((await checkHealth(target(url, ['[STATUS] == 200'], { degradedAfterMs: 60_000 }), now)).status).toBe('operational');
  });

  it('[BODY] is the whole text of a body that is not JSON (keyword check)', async () => {
    const url = await site((_q, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('PONG ready\n'));
    expect((await checkHealth(target(url, ['[BODY] == pat(PONG*)', '[BODY] != pat(*error*)']), now)).status).toBe('operational');
    expect(await checkHealth(target(url, ['[BODY] == ready']), now)).toMatchObject({ status: 'down', error: 'condition failed: [BODY] == ready (was "PONG ready")' });
    expect(await checkHealth(target(url, ['[BODY].status == ok']), now)).toMatchObject({ status: 'down', error: 'condition failed: [BODY].status == ok (was missing: the body is not JSON)' });
  });

  it('[CERTIFICATE_EXPIRATION] on http is 0, so > 48h fails', async () => {
    const url = await site(json(200, {}));
    expect(await checkHealth(target(url, ['[STATUS] == 200', '[CERTIFICATE_EXPIRATION] > 48h']), now)).toMatchObject({ status: 'down', error: 'condition failed: [CERTIFICATE_EXPIRATION] > 48h (was 0s)' });
  });
});

describe('what a condition can see of the answer', () => {
  it('a path cannot reach outside the parsed body: constructor, __proto__, toString are missing', async () => {
    const url = await site(json(200, { status: 'ok', list: [1] }));
    for (const c of ['[BODY].constructor.name == Object', '[BODY].__proto__ == pat(*)', '[BODY].toString == pat(*)', '[BODY].list.length == 1', '[BODY].status.constructor.name == String']) {
      expect(await checkHealth(target(url, [c]), now)).toMatchObject({ status: 'down', error: `condition failed: ${c} (was missing)` });
    }
  });

  it('a body over the limit is not read: [BODY] fails naming why, [STATUS] still holds', async () => {
    const big = 'x'.repeat(MAX_BODY_BYTES + 1024);
    const url = await site((_q, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end(big));
    expect(await checkHealth(target(url, ['[BODY] == pat(x*)']), now)).toMatchObject({ status: 'down', error: `condition failed: [BODY] == pat(x*) (was not read: larger than ${MAX_BODY_BYTES} bytes)` });
    expect((await checkHealth(target(url, ['[STATUS] == 200']), now)).status).toBe('operational');
  });

  it('after a redirect to another origin, [STATUS] is the final answer and [BODY] is not read', async () => {
    const other = await site(json(200, { status: 'ok' }));
    const url = await site((_q, res) => void res.writeHead(302, { location: `${other}/elsewhere` }).end());
    expect((await checkHealth(target(url, ['[STATUS] == 200']), now)).status).toBe('operational');
    expect(await checkHealth(target(url, ['[BODY].status == ok']), now)).toMatchObject({ status: 'down', error: 'condition failed: [BODY].status == ok (was not read: the answer came from another origin)' });
  });

  it('a connection that fails is down with its own reason, whatever the conditions', async () => {
    const url = await site(() => undefined);
    const s = await checkHealth(target(url, ['[STATUS] == any(200, 500)'], { timeoutMs: 300 }), now);
    expect(s).toMatchObject({ status: 'down', error: 'timed out after 300 ms' });
  });
});
