// Monitor rules that need no network (the fixed window is in test/daemon/plugins): config errors
// with line numbers, health body words, WHOIS dates, and TargetStatus before any check.
import { describe, expect, it } from 'vitest';
import { parseDuration, parseMonitorConfig } from '../../../../src/config/monitor.js';
import { configProblems } from '../../../helpers/monitor-config.js';
import { bodyStatus } from '../../../../daemon/services/monitor/checks/health.js';
import { parseWhois, parseWhoisDate } from '../../../../daemon/services/monitor/checks/whois.js';
import { buildTargetStatus } from '../../../../daemon/services/monitor/status.js';
import { pct } from '../../../../src/monitor/uptime.js';
import { SqliteMonitorStore } from '../../../../src/store/monitor-sqlite.js';

describe('configuration', () => {
  it('reports every problem with its file and line', () => {
    const text = 'name: x\ntargets:\n  api:\n    url: ftp://nope\n    interval: soon\n  ok:\n    url: http://127.0.0.1/health\n    tls: { port: 99999 }\ncolour: red\n';
    expect(configProblems(text)).toEqual([
      'm.yaml:9: colour is not a known setting (known: name, token, rate_limit, dashboard, badges, retention_days, rollup_retention_days, incident_threshold, confirm, alerts, public_url, mesh, targets, maintenance, remind_every)',
      'm.yaml:4: targets.api.url must be an http(s) URL, got "ftp://nope"',
      'm.yaml:5: targets.api.interval must be a duration: seconds, or a string like 30s, 5m, 2h, 7d',
      'm.yaml:8: targets.ok.tls.port must be a whole number from 1 to 65535',
    ]);
    expect(() => parseMonitorConfig('a: [1,\n', 'bad.yaml')).toThrow(/^bad.yaml:\d+: /);
  });
  it('fills the documented defaults', () => {
    const c = parseMonitorConfig('targets:\n  api:\n    url: http://127.0.0.1/h\n');
    expect(c).toMatchObject({ rateLimit: { requests: 60, windowMs: 60_000 }, dashboard: false, retentionDays: 14, incidentThreshold: 3 });
    expect(c.targets[0]).toMatchObject({ name: 'api', label: 'api', intervalMs: 60_000, timeoutMs: 10_000 });
    expect(parseDuration('1.5m')).toBe(90_000);
    expect(parseDuration(2)).toBe(2000);
    expect(parseDuration('0s')).toBeUndefined();
  });
});

describe('health body status', () => {
  it('maps common status words; an unknown word is degraded; no word defers to HTTP', () => {
    expect(bodyStatus({ status: 'OK' })).toBe('operational');
    expect(bodyStatus({ status: 'warn' })).toBe('degraded');
    expect(bodyStatus({ state: 'unhealthy' })).toBe('down');
    expect(bodyStatus({ status: 'purple' })).toBe('degraded');
    expect(bodyStatus({ uptime: 5 })).toBeUndefined();
    expect(bodyStatus('ok')).toBeUndefined();
  });
});

describe('WHOIS parsing', () => {
  it('finds the expiry in the formats registries print', () => {
    expect(parseWhois('Registry Expiry Date: 2027-08-13T04:00:00Z\nRegistrar: R Inc.').expiresMs).toBe(Date.parse('2027-08-13T04:00:00Z'));
    expect(parseWhois('Registrar: R Inc.\n').registrar).toBe('R Inc.');
    expect(parseWhoisDate('2027.01.31')).toBe(Date.parse('2027-01-31T00:00:00Z'));
    expect(parseWhoisDate('31-Jan-2027')).toBe(Date.parse('2027-01-31T00:00:00Z'));
    expect(parseWhois('paid-till: 2027-03-01T00:00:00Z').expiresMs).toBe(Date.parse('2027-03-01T00:00:00Z'));
    expect(parseWhois('No match for domain').expiresMs).toBeUndefined();
  });
});

describe('TargetStatus incidents', () => {
  it('lists at most 10, most recent first, the open one among them and as current_incident', async () => {
    const store = new SqliteMonitorStore(':memory:');
    const cfg = parseMonitorConfig('targets:\n  api:\n    url: http://127.0.0.1/h\n');
    const t0 = Date.UTC(2026, 10, 1);
    for (let i = 0; i < 12; i++) {
      const inc = await store.openIncident('api', new Date(t0 + i * 3_600_000).toISOString(), 'HTTP 500', 3);
      await store.resolveIncident(inc.id, new Date(t0 + i * 3_600_000 + 60_000).toISOString());
    }
    const open = await store.openIncident('api', new Date(t0 + 12 * 3_600_000).toISOString(), 'timeout', 3);
    const s = await buildTargetStatus(store, cfg.targets[0]!, t0 + 13 * 3_600_000);
    const incidents = s.incidents as { id: number; started_at: string; status: string }[];
    expect(incidents).toHaveLength(10);
    expect(incidents[0]).toMatchObject({ id: open.id, status: 'open' });
    expect(incidents.map((i) => Date.parse(i.started_at))).toEqual(Array.from({ length: 10 }, (_, k) => t0 + (12 - k) * 3_600_000));
    expect(s.current_incident).toMatchObject({ id: open.id, status: 'open', cause: 'timeout' });
    await store.close();
  });
});

describe('TargetStatus before any check', () => {
  it('latest is null, recent empty, uptimes null, latency omitted', async () => {
    const store = new SqliteMonitorStore(':memory:');
    const cfg = parseMonitorConfig('targets:\n  api:\n    url: http://127.0.0.1/h\n    tests: { command: [true] }\n');
    const s = await buildTargetStatus(store, cfg.targets[0]!, Date.now());
    expect(s).toMatchObject({ label: 'api', latest: null, recent: [], uptime_24h: null, uptime_7d: null });
    expect(s).not.toHaveProperty('latency_24h');
    expect(s.test_staleness).toMatchObject({ stale: true, last_pass_at: null });
    await store.close();
  });
});

describe('uptime percentage', () => {
  it('has two decimals rounded down, so any failed check keeps it below 100', () => {
    expect(pct({ total: 0, up: 0 })).toBeNull();
    expect(pct({ total: 100_000, up: 100_000 })).toBe(100);
    expect(pct({ total: 100_000, up: 99_999 })).toBe(99.99);
    expect(pct({ total: 3, up: 2 })).toBe(66.66);
    expect(pct({ total: 8640, up: 0 })).toBe(0);
  });
});

describe('the shipped example configuration', () => {
  it('daemon/examples/monitor.yaml is valid', async () => {
    const { loadMonitorConfig } = await import('../../../../src/config/monitor.js');
    const cfg = loadMonitorConfig(new URL('../../../../daemon/examples/monitor.yaml', import.meta.url).pathname);
    expect(cfg.targets.map((t) => t.name)).toEqual(['api', 'www', 'search', 'cache', 'nightly-backup']);
    const [, , search, cache, backup] = cfg.targets;
    expect(search!.conditions).toHaveLength(5);
    expect(cache!.tcp).toEqual({ host: '10.0.0.5', port: 6379, send: 'PING\r\n', expect: { text: '+PONG' } });
    expect(backup!.heartbeat).toEqual({ schedule: '0 3 * * *', timezone: 'Europe/Berlin', graceMs: 1_800_000 });
  });
});
