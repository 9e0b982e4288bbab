// Spec service A against real local targets: health, routes, DNS, TLS, WHOIS and tests checks,
// TargetStatus fields and omission rules, incidents, trends, auth and errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';
import { dnsServer, healthServer, httpsServer, makeCert, testCommand, whoisServer, type HealthServer } from '../../helpers/monitor-fixtures.js';
import { startMonitor, type MonitorNode } from '../../helpers/monitor-node.js';
import { VERSION } from '../../../src/version.js';

const dir = tempDir();
const closers: (() => Promise<void>)[] = [];
let health: HealthServer;
let mon: MonitorNode;
let tests: ReturnType<typeof testCommand>;
const expiry = new Date(Date.now() + 40 * 86_400_000).toISOString().slice(0, 10) + 'T00:00:00Z';

beforeAll(async () => {
  health = await healthServer();
  const pem = makeCert(dir.path, 30);
  const https = await httpsServer(pem);
  const dns = await dnsServer({ 'app.test': ['192.0.2.10', '192.0.2.11'] });
  const whois = await whoisServer(expiry);
  tests = testCommand(dir.path);
  closers.push(health.close, https.close, dns.close, whois.close);
  const yaml = `
name: mon-test
token: mon-token
rate_limit: { requests: 1000000 }
targets:
  web:
    label: Web shop
    url: ${health.url}
    interval: 150ms
    timeout: 1500ms
    headers: { X-Probe: mkt }
    routes:
      - path: /v1/items
        status: 200
      - path: /admin
        status: 200
    dns:
      - name: app.test
        type: A
        expected: [192.0.2.11, 192.0.2.10]
        server: ${dns.address}
      - name: app.test
        type: A
        expected: [192.0.2.99]
        server: ${dns.address}
    tls: { host: localhost, port: ${https.port}, warn_days: 45 }
    whois: { domain: example.test, server: ${whois.address}, warn_days: 30 }
  plain:
    url: ${health.origin}/v1/items
    interval: 150ms
    timeout: 2s
  tested:
    url: ${health.origin}/v1/items
    interval: 1h
    tests:
      command: ${JSON.stringify(tests.command)}
      interval: 100ms
      stale_after: 1h
      timeout: 5s
`;
  mon = await startMonitor(dir.path, yaml, { tlsCa: pem.cert });
  closers.unshift(() => mon.stop());
  await waitFor(async () => (await mon.get('/api/status/web')).body.recent?.length >= 10, 'ten checks of web');
});

afterAll(async () => {
  for (const c of closers) await c();
  dir.remove();
});

describe('authentication and limits', () => {
  it('/api/health is public and reports the version', async () => {
    const r = await mon.get('/api/health', null);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'operational', version: VERSION });
  });

  it('a missing or malformed header is 401 saying so; a wrong token is 401 saying it is invalid', async () => {
    for (const path of ['/api/status', '/api/status/web', '/api/trends/web', '/api/peer/info', '/api/mesh', '/metrics', '/openapi.json']) {
      const none = await mon.get(path, null);
      expect(none.status).toBe(401);
      expect(none.body.error).toMatch(/missing or malformed/);
      const res = await fetch(mon.url + path, { headers: { authorization: 'Token mon-token' } });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: string }).error).toMatch(/missing or malformed/);
      const wrong = await mon.get(path, 'nope');
      expect(wrong.status).toBe(401);
      expect(wrong.body.error).toBe('invalid token');
    }
  });

  it('/openapi.json needs the token like every route but /api/health and the dashboard (spec Authentication 1)', async () => {
    const none = await mon.get('/openapi.json', null);
    expect(none).toMatchObject({ status: 401, body: { error: expect.stringMatching(/missing or malformed/) as string } });
    expect((await mon.get('/openapi.json', 'nope')).status).toBe(401);
    expect((await mon.get('/openapi.json')).status).toBe(200);
    // An unknown route is not a route: 404 {"error"} without a token.
    expect(await mon.get('/no/such/route', null)).toMatchObject({ status: 404, body: { error: expect.any(String) as string } });
  });

  it('an unknown target is 404 naming it, in status and trends', async () => {
    for (const path of ['/api/status/ghost', '/api/trends/ghost']) {
      const r = await mon.get(path);
      expect(r.status).toBe(404);
      expect(r.body.error).toMatch(/unknown target: ghost/);
    }
  });

  it('peer routes are 503 when the mesh is not enabled', async () => {
    for (const path of ['/api/peer/info', '/api/peer/status', '/api/mesh']) {
      const r = await mon.get(path);
      expect(r.status).toBe(503);
      expect(r.body.error).toMatch(/mesh is not enabled/);
    }
  });
});

describe('rate limit under concurrency and restarts (issue 11: limiters reserve before they spend)', () => {
  it('30 concurrent requests against a limit of 10 let 10 through, /openapi.json counts, and the window survives a restart', async () => {
    const own = tempDir('mkt-monitor-limit-');
    const yaml = `name: limited\ntoken: mon-token\nrate_limit: { requests: 10, window: 1h }\ntargets:\n  web:\n    url: ${health.url}\n    interval: 1h\n`;
    try {
      const first = await startMonitor(own.path, yaml);
      let statuses: number[];
      try {
        statuses = (await Promise.all(Array.from({ length: 30 }, (_, i) => first.get(i % 3 === 0 ? '/openapi.json' : '/api/status')))).map((r) => r.status);
        expect((await first.get('/api/health', null)).status).toBe(200);
      } finally {
        await first.stop();
      }
      expect(statuses.filter((c) => c === 200)).toHaveLength(10);
      expect(statuses.filter((c) => c === 429)).toHaveLength(20);
      const second = await startMonitor(own.path, yaml);
      try {
        const after = await second.get('/api/status');
        expect(after.status).toBe(429);
        expect(Number(after.headers.get('retry-after'))).toBeGreaterThan(3000);
        // Spec A, authentication rule 4: the rate limit is checked before the token.
        expect((await second.get('/api/status', 'wrong-token')).status).toBe(429);
        expect((await second.get('/api/status', null)).status).toBe(429);
      } finally {
        await second.stop();
      }
    } finally {
      own.remove();
    }
  });
});

describe('the guard on HEAD routes (fastify adds one for each GET)', () => {
  it('each HEAD counts once against the limit and needs the token; public routes stay public', async () => {
    const own = tempDir('mkt-monitor-head-');
    try {
      const m = await startMonitor(own.path, `name: head\ntoken: mon-token\nrate_limit: { requests: 3, window: 1h }\ntargets:\n  web:\n    url: ${health.url}\n    interval: 1h\n`);
      try {
        const head = async (path: string, token?: string): Promise<number> => (await fetch(m.url + path, { method: 'HEAD', headers: token ? { authorization: `Bearer ${token}` } : {} })).status;
        // A guard run twice a HEAD would spend the limit of 3 in two requests.
        const statuses = [await head('/api/status'), await head('/api/status', 'mon-token'), await head('/api/status'), await head('/api/status', 'mon-token')];
        expect(statuses).toEqual([401, 200, 401, 429]);
        expect(await head('/api/health')).toBe(200);
      } finally {
        await m.stop();
      }
    } finally {
      own.remove();
    }
  });
});

describe('TargetStatus', () => {
  it('has every configured result and at most 10 recent snapshots, most recent first', async () => {
    const s = (await mon.get('/api/status/web')).body;
    expect(s.label).toBe('Web shop');
    expect(s.recent).toHaveLength(10);
    expect(s.latest).toEqual(s.recent[0]);
    const stamps = s.recent.map((r: { checked_at: string }) => r.checked_at);
    expect([...stamps].sort().reverse()).toEqual(stamps);
    expect(s.latest).toMatchObject({ status: 'operational', details: { status: 'ok', database: 'up' } });
    expect(s.latest.response_time_ms).toBeGreaterThan(0);
    expect(s.latest.error).toBeUndefined();
    expect(s.uptime_24h).toBe(100);
    expect(s.uptime_7d).toBe(100);
    expect(s.latency_24h).toMatchObject({ count: expect.any(Number), min: expect.any(Number), p50: expect.any(Number), p95: expect.any(Number), p99: expect.any(Number), max: expect.any(Number), mean: expect.any(Number) });
    expect(s.latency_24h.min).toBeLessThanOrEqual(s.latency_24h.p50);
    expect(s.latency_24h.p99).toBeLessThanOrEqual(s.latency_24h.max);
  });

  it('route_status lists the configured routes with their status codes', async () => {
    const s = (await mon.get('/api/status/web')).body;
    expect(s.route_status.map((r: { path: string; status_code: number; ok: boolean }) => [r.path, r.status_code, r.ok])).toEqual([
      ['/admin', 403, false],
      ['/v1/items', 200, true],
    ]);
  });

  it('dns_status compares the answer set from the configured resolver', async () => {
    const s = (await mon.get('/api/status/web')).body;
    const byExpected = (v: string) => s.dns_status.find((d: { expected: string[] }) => d.expected.includes(v));
    expect(s.dns_status).toHaveLength(2);
    expect(byExpected('192.0.2.10')).toMatchObject({ name: 'app.test', record_type: 'A', actual: ['192.0.2.10', '192.0.2.11'], matches: true });
    expect(byExpected('192.0.2.99')).toMatchObject({ matches: false });
  });

  it('tls and whois hold the latest certificate and registration results', async () => {
    const s = await waitFor(async () => {
      const b = (await mon.get('/api/status/web')).body;
      return b.tls && b.whois ? b : undefined;
    }, 'tls and whois results');
    expect(s.tls).toMatchObject({ host: 'localhost', valid: true, hostname_match: true, trusted: true, issuer: 'localhost', warning: true });
    expect(s.tls.days_left).toBeGreaterThanOrEqual(28);
    expect(s.tls.days_left).toBeLessThanOrEqual(30);
    expect(s.whois).toMatchObject({ domain: 'example.test', registrar: 'Test Registrar Inc.', warning: false, expires_at: new Date(expiry).toISOString() });
    expect(s.whois.days_left).toBeGreaterThanOrEqual(38);
    // The response serializer keeps every field of the objects the spec leaves open.
    expect(Object.keys(s.tls).sort()).toEqual(['checked_at', 'days_left', 'host', 'hostname_match', 'issuer', 'not_after', 'not_before', 'port', 'subject', 'trusted', 'valid', 'warning']);
    expect(Object.keys(s.whois).sort()).toEqual(['checked_at', 'days_left', 'domain', 'expires_at', 'registrar', 'server', 'warning']);
  });

  it('OpenAPI documents the TargetStatus response, its nullable and omitted fields, and the error bodies', async () => {
    const doc = (await mon.get('/openapi.json')).body;
    const op = doc.paths['/api/status/{target}'].get;
    const schema = op.responses['200'].content['application/json'].schema;
    expect(schema.required.sort()).toEqual(['label', 'latest', 'recent', 'uptime_24h', 'uptime_7d']);
    expect(schema.properties.latest.type).toEqual(['object', 'null']);
    const codes = (o: { responses: object }): string[] => Object.keys(o.responses).filter((c) => c !== 'default').sort();
    expect(codes(op)).toEqual(['200', '401', '404', '429']);
    expect(codes(doc.paths['/api/mesh'].get)).toEqual(['200', '401', '429', '503']);
  });

  it('omits every optional field that is not configured or has nothing recorded', async () => {
    const s = (await mon.get('/api/status/plain')).body;
    for (const f of ['tls', 'test_staleness', 'current_incident', 'incidents', 'route_status', 'dns_status', 'whois', 'test_duration_drift']) expect(s, f).not.toHaveProperty(f);
    expect(s.latency_24h).toBeDefined();
    const all = (await mon.get('/api/status')).body;
    expect(Object.keys(all.targets).sort()).toEqual(['plain', 'tested', 'web']);
  });
});

describe('state changes', () => {
  it('degraded, then down with response time 0 and an error; three failures open an incident; recovery resolves it', async () => {
    health.mode = 'degraded';
    await waitFor(async () => (await mon.get('/api/status/web')).body.latest.status === 'degraded', 'degraded');
    health.mode = 'failing';
    const down = await waitFor(async () => {
      const b = (await mon.get('/api/status/web')).body;
      return b.current_incident ? b : undefined;
    }, 'an incident');
    expect(down.latest).toMatchObject({ status: 'down', response_time_ms: 0, error: 'HTTP 500' });
    expect(down.current_incident).toMatchObject({ status: 'open', ended_at: null, cause: 'HTTP 500' });
    expect(down.current_incident.checks).toBeGreaterThanOrEqual(3);
    expect(down.incidents[0].id).toBe(down.current_incident.id);
    health.mode = 'operational';
    const up = await waitFor(async () => {
      const b = (await mon.get('/api/status/web')).body;
      return !b.current_incident && b.latest.status === 'operational' ? b : undefined;
    }, 'recovery');
    expect(up.incidents[0]).toMatchObject({ status: 'resolved', id: down.current_incident.id });
    expect(up.incidents[0].ended_at).not.toBeNull();
    expect(up.uptime_24h).toBeLessThan(100);
  });

  it('a body that reports itself down is down; a slow answer times out as down', async () => {
    health.mode = 'body-down';
    const b = await waitFor(async () => {
      const s = (await mon.get('/api/status/web')).body;
      return s.latest.status === 'down' ? s : undefined;
    }, 'body-down');
    expect(b.latest.details).toEqual({ status: 'down', database: 'gone' });
    health.mode = 'slow';
    const slow = await waitFor(async () => {
      const s = (await mon.get('/api/status/web')).body;
      return /timed out/.test(s.latest.error ?? '') ? s : undefined;
    }, 'a timeout');
    expect(slow.latest.response_time_ms).toBe(0);
    health.mode = 'operational';
  });

  it('test runs: staleness from the last passing run, and a duration drift warning when tests slow down', async () => {
    const first = await waitFor(async () => {
      const s = (await mon.get('/api/status/tested')).body;
      return s.test_staleness?.last_pass_at ? s : undefined;
    }, 'a passing test run');
    expect(first.test_staleness).toMatchObject({ stale: false, last_exit_code: 0, last_passed: true, stale_after_s: 3600 });
    expect(first).not.toHaveProperty('test_duration_drift');
    tests.set(1, 0);
    await waitFor(async () => (await mon.get('/api/status/tested')).body.test_staleness.last_exit_code === 1, 'a failing run');
    tests.set(0, 0);
    await waitFor(async () => (await mon.get('/api/status/tested')).body.test_staleness.last_exit_code === 0, 'passing again');
    await new Promise((r) => setTimeout(r, 1200)); // a baseline of fast runs
    tests.set(0, 2_000);
    const drift = await waitFor(async () => (await mon.get('/api/status/tested')).body.test_duration_drift, 'a drift warning', 30_000);
    expect(drift.ratio).toBeGreaterThan(1.5);
    expect(drift.message).toMatch(/usual time/);
    tests.set(0, 0);
  });
});

describe('trends', () => {
  it('defaults to 24 hours in 60-minute buckets; overall and 168-hour baseline', async () => {
    const t = (await mon.get('/api/trends/web')).body;
    expect(t).toMatchObject({ target: 'web', window_hours: 24, bucket_minutes: 60 });
    expect(t.buckets).toHaveLength(24);
    const last = t.buckets[23];
    expect(last.count).toBeGreaterThan(0);
    expect(t.overall.count).toBe(t.buckets.reduce((n: number, b: { count: number }) => n + b.count, 0));
    expect(t.baseline.count).toBeGreaterThanOrEqual(t.overall.count);
  });
  it('takes hours and bucket_minutes; bad values are 400', async () => {
    const t = (await mon.get('/api/trends/web?hours=2&bucket_minutes=15')).body;
    expect(t.buckets).toHaveLength(8);
    expect((await mon.get('/api/trends/web?hours=0')).status).toBe(400);
    expect((await mon.get('/api/trends/web?hours=abc')).status).toBe(400);
    expect((await mon.get('/api/trends/web?hours=8760&bucket_minutes=1')).status).toBe(400);
  });
});

describe('metrics', () => {
  it('serves Prometheus text with check counts, status, response time and uptime', async () => {
    const m = await mon.get('/metrics');
    expect(m.status).toBe(200);
    expect(m.headers.get('content-type')).toMatch(/text\/plain/);
    expect(m.body).toMatch(/^mkt_monitor_checks_total\{kind="health"\} \d+$/m);
    expect(m.body).toMatch(/^mkt_monitor_target_up\{target="web"\} [01]$/m);
    expect(m.body).toMatch(/^mkt_monitor_uptime_ratio\{target="plain",window="24h"\} 1$/m);
    expect(m.body).toMatch(/^mkt_monitor_target_checks_total\{target="plain",status="operational"\} [1-9]\d*$/m);
    expect(m.body).toMatch(/^mkt_monitor_check_duration_seconds_count\{target="plain"\} [1-9]\d*$/m);
    const certExpiry = Number(/^mkt_monitor_tls_cert_expiry_timestamp_seconds\{target="web"\} (\S+)$/m.exec(m.body)?.[1]);
    expect((certExpiry - Date.now() / 1000) / 86_400).toBeGreaterThan(29);
    expect((certExpiry - Date.now() / 1000) / 86_400).toBeLessThan(31);
    expect(m.body).toMatch(new RegExp(`^mkt_monitor_domain_expiry_timestamp_seconds\\{target="web"\\} ${Date.parse(expiry) / 1000}$`, 'm'));
    expect(m.body).not.toMatch(/^mkt_monitor_tls_cert_expiry_timestamp_seconds\{target="plain"\}/m);
    // Every sample line belongs to a family declared with # TYPE (valid exposition format).
    const families = new Set([...m.body.matchAll(/^# TYPE (\S+) (counter|gauge|histogram)$/gm)].map((x: RegExpMatchArray) => x[1]));
    for (const line of m.body.split('\n').filter((l: string) => l && !l.startsWith('#'))) {
      const name = line.split(/[{ ]/)[0]!;
      expect(families.has(name) || families.has(name.replace(/_(bucket|sum|count)$/, '')), line).toBe(true);
    }
  });
});
