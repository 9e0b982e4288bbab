// Check edge cases against real local servers: WHOIS referrals (IANA style), health redirects,
// and DNS resolver addresses that node:dns cannot use.
import { createServer as createHttp } from 'node:http';
import { createServer as createTcp, type AddressInfo, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkWhois, parseReferral } from '../../../../daemon/services/monitor/checks/whois.js';
import { checkHealth } from '../../../../daemon/services/monitor/checks/health.js';
import { checkRoutes } from '../../../../daemon/services/monitor/checks/routes.js';
import { checkDns } from '../../../../daemon/services/monitor/checks/dns.js';
import { checkTls } from '../../../../daemon/services/monitor/checks/tls.js';
import { createServer as createHttps } from 'node:https';
import { makeCert } from '../../../helpers/monitor-fixtures.js';
import { tempDir } from '../../../helpers/tmp.js';
import { ConfigError, isResolverAddress, parseMonitorConfig, type TargetConfig } from '../../../../src/config/monitor.js';

const closers: (() => Promise<void>)[] = [];
const now = (): number => Date.now();

async function tcp(answer: (query: string) => string): Promise<{ address: string; queries: string[] }> {
  const queries: string[] = [];
  const server: Server = createTcp((sock) =>
    sock.once('data', (d) => {
      const q = d.toString().trim();
      queries.push(q);
      sock.end(answer(q));
    }),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise((r) => server.close(() => r())));
  return { address: `127.0.0.1:${(server.address() as AddressInfo).port}`, queries };
}

let origin = '';
beforeAll(async () => {
  const server = createHttp((req, res) => {
    if (req.url === '/health') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    if (req.url === '/slow') return void setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}'), 150);
    if (req.url === '/huge') {
      // A JSON body far past the cap, streamed: the check must neither buffer it nor keep it.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"status":"down","pad":"');
      const chunk = 'x'.repeat(64 * 1024);
      let sent = 0;
      const more = (): void => {
        while (sent < 64 && res.write(chunk)) sent++;
        if (sent < 64) res.once('drain', more);
        else res.end('"}');
      };
      res.on('error', () => undefined);
      return more();
    }
    if (req.url === '/old') return res.writeHead(301, { location: '/health' }).end();
    if (req.url === '/loop') return res.writeHead(302, { location: '/loop' }).end();
    const hop = /^\/hop\/(\d+)$/.exec(req.url ?? '');
    if (hop) return res.writeHead(302, { location: `/hop/${Number(hop[1]) + 1}` }).end();
    return res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  closers.push(() => new Promise((r) => server.close(() => r())));
});

afterAll(async () => {
  for (const c of closers) await c();
});

function target(url: string, extra: Partial<TargetConfig> = {}): TargetConfig {
  return { name: 't', label: 't', url, intervalMs: 60_000, timeoutMs: 2000, headers: {}, routes: [], dns: [], ...extra };
}

describe('WHOIS referrals (whois.iana.org only names the registry)', () => {
  it('follows a refer: line to the registry and reports the answering server and the chain', async () => {
    const expiry = new Date(Date.now() + 90 * 86_400_000).toISOString().slice(0, 10) + 'T00:00:00Z';
    const registry = await tcp((q) => `Domain Name: ${q.toUpperCase()}\r\nRegistrar: Ref Registrar\r\nRegistry Expiry Date: ${expiry}\r\n`);
    const iana = await tcp(() => `% IANA WHOIS server\r\n\r\nrefer:        ${registry.address}\r\n\r\ndomain:       TEST\r\n`);
    const r = await checkWhois({ domain: 'example.test', server: iana.address, warnDays: 30 }, 2000, now);
    expect(r).toMatchObject({ server: registry.address, referred_by: [iana.address], registrar: 'Ref Registrar', expires_at: new Date(expiry).toISOString(), warning: false });
    expect(r).not.toHaveProperty('error');
    expect(registry.queries).toEqual(['example.test']);
  });

  it('follows at most two referrals, never the same server twice; no expiry is an error with a warning', async () => {
    const self = await tcp(() => 'refer: 127.0.0.1:1\r\n');
    const loop = await tcp(() => `whois: ${self.address}\r\n`);
    const r = await checkWhois({ domain: 'example.test', server: loop.address, warnDays: 30 }, 2000, now);
    // loop -> self -> 127.0.0.1:1 (two referrals, the limit): the last server is unreachable.
    expect(r).toMatchObject({ server: '127.0.0.1:1', referred_by: [loop.address, self.address], expires_at: null, warning: true });
    expect(r.error).toMatch(/^127\.0\.0\.1:1: /);
    let selfAddress = '';
    const selfRef = await tcp(() => `refer: ${selfAddress}\r\n`);
    selfAddress = selfRef.address;
    const r2 = await checkWhois({ domain: 'x.test', server: selfRef.address, warnDays: 30 }, 2000, now);
    expect(r2).toMatchObject({ server: selfRef.address, expires_at: null, warning: true, error: 'no expiry date found in the WHOIS answer' });
    expect(selfRef.queries).toEqual(['x.test']);
  });

  it('reads referrals without borrowing the next line for an empty value', () => {
    expect(parseReferral('Registrar WHOIS Server: \r\nRegistrar: X\r\n')).toBeUndefined();
    expect(parseReferral('Registrar WHOIS Server: http://whois.example/\r\n')).toBeUndefined();
    expect(parseReferral('refer:        whois.verisign-grs.com\n')).toBe('whois.verisign-grs.com');
    expect(parseReferral('Registrar WHOIS Server: whois://whois.example.net\n')).toBe('whois.example.net');
  });
});

describe('health check redirects', () => {
  it('follows a redirect to the health endpoint and judges the final answer', async () => {
    const s = await checkHealth(target(`${origin}/old`), now);
    expect(s).toMatchObject({ status: 'operational', details: { status: 'ok' } });
    expect(s.response_time_ms).toBeGreaterThan(0);
  });

  it('a chain longer than five redirects ends on its 3xx, which is down (response time 0, an error); a loop is down', async () => {
    const s = await checkHealth(target(`${origin}/hop/0`), now);
    expect(s).toMatchObject({ status: 'down', response_time_ms: 0, error: 'HTTP 302' });
    const l = await checkHealth(target(`${origin}/loop`), now);
    expect(l).toMatchObject({ status: 'down', response_time_ms: 0, error: 'redirect loop' });
  });

  it('route checks see the raw status, so a route can expect a redirect', async () => {
    const [r] = await checkRoutes(target(`${origin}/health`, { routes: [{ path: '/old', status: 301 }] }), now);
    expect(r).toMatchObject({ path: '/old', status_code: 301, ok: true });
  });
});

describe('health body size', () => {
  it('a body past 256 KiB is not kept as details; the HTTP status alone decides', async () => {
    const s = await checkHealth(target(`${origin}/huge`), now);
    expect(s.status).toBe('operational');
    expect(s).not.toHaveProperty('details');
    expect(s.response_time_ms).toBeGreaterThan(0);
  });
});

describe('degraded_after', () => {
  it('an answer slower than degraded_after but within the timeout is degraded, keeping its response time', async () => {
    const s = await checkHealth(target(`${origin}/slow`, { degradedAfterMs: 50 }), now);
    expect(s.status).toBe('degraded');
    expect(s.response_time_ms).toBeGreaterThanOrEqual(140);
    expect(s).not.toHaveProperty('error');
    expect((await checkHealth(target(`${origin}/slow`), now)).status).toBe('operational');
    expect((await checkHealth(target(`${origin}/slow`, { degradedAfterMs: 50, timeoutMs: 100 }), now)).status).toBe('down');
  });

  it('check-config: degraded_after must be a duration shorter than the timeout', () => {
    const c = parseMonitorConfig('targets:\n  a:\n    url: http://127.0.0.1/h\n    timeout: 2s\n    degraded_after: 500ms\n');
    expect(c.targets[0]!.degradedAfterMs).toBe(500);
    expect(parseMonitorConfig('targets:\n  a:\n    url: http://127.0.0.1/h\n').targets[0]).not.toHaveProperty('degradedAfterMs');
    expect(() => parseMonitorConfig('targets:\n  a:\n    url: http://127.0.0.1/h\n    timeout: 2s\n    degraded_after: 3s\n', 'm.yaml')).toThrow('m.yaml:5: targets.a.degraded_after must be shorter than the timeout (2000 ms)');
  });
});

describe('TLS by IP address', () => {
  it('an IPv6 host (hex letters included) is sent no SNI name, as RFC 6066 requires', async () => {
    const dir = tempDir();
    const pem = makeCert(dir.path, 30);
    dir.remove();
    const server = createHttps(pem, (_q, r) => r.end('ok'));
    await new Promise<void>((r) => server.listen(0, '::', r));
    closers.push(() => new Promise((r) => server.close(() => r())));
    const warnings: string[] = [];
    const onWarning = (w: Error & { code?: string }): void => void warnings.push(w.code ?? w.message);
    process.on('warning', onWarning);
    const r = await checkTls({ host: '::ffff:7f00:1', port: (server.address() as AddressInfo).port, warnDays: 14 }, 2000, now, pem.cert);
    await new Promise((res) => setImmediate(res));
    process.off('warning', onWarning);
    expect(warnings).not.toContain('DEP0123');
    // The certificate names localhost and 127.0.0.1, not this address: reported, not fatal.
    expect(r).toMatchObject({ hostname_match: false, valid: false, warning: true, issuer: 'localhost' });
    expect(r.days_left).toBeGreaterThanOrEqual(28);
  });
});

describe('DNS resolver addresses', () => {
  it('check-config rejects a resolver given by name, with its line', () => {
    const text = 'targets:\n  a:\n    url: http://127.0.0.1/h\n    dns:\n      - name: example.test\n        expected: [192.0.2.1]\n        server: dns.example\n';
    let err: ConfigError | undefined;
    try {
      parseMonitorConfig(text, 'm.yaml');
    } catch (e) {
      err = e as ConfigError;
    }
    expect(err?.problems).toHaveLength(1);
    expect(err!.problems[0]).toMatch(/^m\.yaml:7: targets\.a\.dns\.0\.server must be a resolver IP address/);
    for (const ok of ['192.0.2.53', '192.0.2.53:5353', '2001:db8::53', '[2001:db8::53]:53']) expect(isResolverAddress(ok), ok).toBe(true);
    for (const bad of ['dns.example', 'dns.example:53', '192.0.2.53:0', '192.0.2.53:70000', '[192.0.2.53]:53']) expect(isResolverAddress(bad), bad).toBe(false);
  });

  it('a resolver address node:dns refuses fails that record only, never the whole check', async () => {
    const results = await checkDns([{ name: 'example.test', type: 'A', expected: ['192.0.2.1'], server: 'dns.example' }], 500, now);
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ name: 'example.test', matches: false, actual: [] });
    expect(results[0]!.error).toBeTruthy();
  });
});
