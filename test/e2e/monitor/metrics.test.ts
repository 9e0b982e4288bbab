// GET /metrics of a real monitor checked by Prometheus' own `promtool check metrics`: base units
// (seconds, no `_ms`), a per-target response time histogram instead of quantile gauges, the
// default process metrics, a target removed by a reload gone; and MonitorMetrics fed directly
// with what a config cannot hold (label values needing escapes) or a test cannot wait for.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';
import { healthServer, type HealthServer } from '../../helpers/monitor-fixtures.js';
import { startMonitor, type MonitorNode } from '../../helpers/monitor-node.js';
import { MonitorMetrics } from '../../../daemon/services/monitor/metrics.js';
import type { TargetStatus } from '../../../daemon/services/monitor/status.js';

/** A target name with every character the config allows. */
const DOTTED = 'shop.eu-1_a';

const dir = tempDir();
let up: HealthServer;
let failing: HealthServer;
let mon: MonitorNode;

function targetYaml(name: string, url: string): string {
  return `  '${name}':\n    url: ${url}\n    interval: 100ms\n    timeout: 2s\n`;
}

function configYaml(withFailing: boolean): string {
  return `name: mon-metrics\ntoken: mon-token\nrate_limit: { requests: 1000000 }\ntargets:\n${targetYaml('up', up.url)}${withFailing ? targetYaml('failing', failing.url) : ''}${targetYaml(DOTTED, up.url)}`;
}

/** Runs `promtool check metrics` on `body` (stdin), as a Prometheus operator would. */
async function promtool(body: string): Promise<{ code: number | null; output: string }> {
  if (spawnSync('promtool', ['--version']).error) throw new Error('promtool is missing: run scripts/ensure-test-tools.sh (npm test does; Debian package prometheus)');
  const child = spawn('promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const code = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  child.stdin.end(body);
  return { code: await code, output };
}

async function scrape(): Promise<string> {
  const r = await mon.get('/metrics');
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return r.body as string;
}

/** The sample lines of `body` (no comments, no blank lines). */
function samples(body: string): string[] {
  return body.split('\n').filter((l) => l && !l.startsWith('#'));
}

beforeAll(async () => {
  up = await healthServer();
  failing = await healthServer();
  failing.mode = 'failing';
  mon = await startMonitor(dir.path, configYaml(true));
  // Every target checked, and the healthy one timed, before the first scrape.
  await waitFor(async () => {
    const s = (await mon.get('/api/status')).body.targets;
    return s?.up?.latest && s.failing?.latest && s[DOTTED]?.latest;
  }, 'a check of every target');
});

afterAll(async () => {
  await mon?.stop();
  await up?.close();
  await failing?.close();
  dir.remove();
});

describe('GET /metrics (Prometheus exposition through prom-client)', () => {
  it('passes promtool check metrics with no complaint', async () => {
    const body = await scrape();
    const { code, output } = await promtool(body);
    expect(output, body).toBe('');
    expect(code).toBe(0);
  });

  it('has the response time histogram per target, default process metrics, and no _ms names or quantile labels', async () => {
    const body = await scrape();
    const lines = samples(body);
    const upBucket = lines.find((l) => l.startsWith('mkt_monitor_check_duration_seconds_bucket{') && l.includes('le="+Inf"') && l.includes('target="up"'));
    expect(upBucket, body).toMatch(/ [1-9]\d*$/);
    expect(body).toMatch(/^mkt_monitor_check_duration_seconds_count\{target="up"\} [1-9]\d*$/m);
    expect(body).toMatch(/^mkt_monitor_check_duration_seconds_sum\{target="up"\} \d/m);
    expect(body).toMatch(/^# TYPE mkt_monitor_check_duration_seconds histogram$/m);
    expect(body).toMatch(/^process_cpu_seconds_total \d/m);
    expect(body).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
    for (const line of body.split('\n')) {
      expect(line).not.toContain('_ms');
      expect(line).not.toContain('quantile=');
    }
    expect(body).toMatch(/^mkt_monitor_checks_total\{kind="health"\} [1-9]\d*$/m);
    expect(body).toMatch(/^mkt_monitor_target_checks_total\{target="up",status="operational"\} [1-9]\d*$/m);
    expect(body).toMatch(/^mkt_monitor_target_checks_total\{target="failing",status="down"\} [1-9]\d*$/m);
    expect(body).toMatch(/^mkt_monitor_target_up\{target="up"\} 1$/m);
    expect(body).toMatch(/^mkt_monitor_target_up\{target="failing"\} 0$/m);
    expect(body).toMatch(/^mkt_monitor_target_status\{target="failing",status="down"\} 1$/m);
    expect(body).toMatch(/^mkt_monitor_response_time_seconds\{target="up"\} (0\.\d+|[1-9][\d.e-]*)$/m);
    expect(body).toMatch(/^mkt_monitor_uptime_ratio\{target="up",window="24h"\} 1$/m);
    expect(body).toMatch(/^mkt_monitor_uptime_ratio\{target="failing",window="7d"\} 0$/m);
    expect(body).toMatch(/^mkt_monitor_open_incidents\{target="up"\} 0$/m);
    expect(body).toMatch(/^mkt_monitor_in_maintenance\{target="up"\} 0$/m);
    // No TLS or WHOIS check configured: no expiry sample.
    expect(body).not.toMatch(/^mkt_monitor_(tls_cert|domain)_expiry_timestamp_seconds\{/m);
  });

  it('labels a target named with dots, dashes and underscores as is', async () => {
    const body = await scrape();
    expect(body).toContain(`mkt_monitor_target_up{target="${DOTTED}"} 1`);
    expect(samples(body).find((l) => l.startsWith(`mkt_monitor_check_duration_seconds_count{target="${DOTTED}"} `)), body).toMatch(/ [1-9]\d*$/);
  });

  it('drops a target removed by a reload from every family, gauges and counters alike', async () => {
    expect(samples(await scrape()).some((l) => l.includes('target="failing"'))).toBe(true);
    writeFileSync(mon.configPath, configYaml(false));
    await mon.service.runtime.reload!();
    // A check of `failing` in flight during the reload must not bring it back either.
    await new Promise((r) => setTimeout(r, 300));
    const body = await scrape();
    expect(samples(body).filter((l) => l.includes('target="failing"'))).toEqual([]);
    expect(body).toMatch(/^mkt_monitor_target_up\{target="up"\} 1$/m);
    expect(body).toMatch(/^mkt_monitor_check_duration_seconds_count\{target="up"\} [1-9]\d*$/m);
    const { code, output } = await promtool(body);
    expect(output, body).toBe('');
    expect(code).toBe(0);
  });
});

describe('MonitorMetrics', () => {
  const T = '2025-06-01T12:00:00.000Z';
  const snap = (status: string, ms: number, maintenance?: boolean) => ({ status, checked_at: T, response_time_ms: ms, ...(maintenance ? { maintenance } : {}) });
  const status = (extra: Record<string, unknown>): TargetStatus => ({ label: 'x', latest: snap('operational', 120), recent: [], ...extra });

  it('escapes quotes, backslashes and newlines in label values, and promtool accepts the result', async () => {
    const odd = 'say "hi" \\ back\nnext';
    const m = new MonitorMetrics(async () => ({ [odd]: status({ uptime_24h: 99.5 }) }));
    m.observe(odd, 'health', [snap('operational', 120)]);
    const body = await m.render();
    const label = 'target="say \\"hi\\" \\\\ back\\nnext"';
    expect(body).toContain(`mkt_monitor_target_up{${label}} 1`);
    expect(body).toContain(`mkt_monitor_uptime_ratio{${label},window="24h"} 0.995`);
    expect(body).toContain(`mkt_monitor_check_duration_seconds_count{${label}} 1`);
    expect(await promtool(body)).toEqual({ code: 0, output: '' });
  });

  it('reads every uptime window, expiries as Unix seconds, maintenance and incidents from the status', async () => {
    const m = new MonitorMetrics(async () => ({
      a: status({ uptime_24h: 100, uptime_7d: 99, uptime_30d: 98.5, uptime_90d: 97, uptime_365d: null, tls: { not_after: '2030-01-02T00:00:00.000Z' }, whois: { expires_at: '2031-05-06T00:00:00.000Z' }, maintenance: { name: 'w', title: 'W', start: T, end: T }, current_incident: { id: 1 } }),
      b: status({ latest: snap('down', 0), tls: { not_after: null }, whois: { expires_at: 'not a date' } }),
    }));
    m.observe('a', 'health', [snap('operational', 250, true)]);
    m.observe('b', 'health', [snap('down', 0)]);
    m.observe('a', 'tls', []);
    const body = await m.render();
    for (const [w, v] of [['24h', '1'], ['7d', '0.99'], ['30d', '0.985'], ['90d', '0.97']]) expect(body).toContain(`mkt_monitor_uptime_ratio{target="a",window="${w}"} ${v}\n`);
    expect(body).not.toContain('window="365d"');
    expect(body).toContain(`mkt_monitor_tls_cert_expiry_timestamp_seconds{target="a"} ${Date.parse('2030-01-02T00:00:00Z') / 1000}\n`);
    expect(body).toContain(`mkt_monitor_domain_expiry_timestamp_seconds{target="a"} ${Date.parse('2031-05-06T00:00:00Z') / 1000}\n`);
    expect(body).not.toMatch(/expiry_timestamp_seconds\{target="b"\}/);
    expect(body).toContain('mkt_monitor_in_maintenance{target="a"} 1\n');
    expect(body).toContain('mkt_monitor_in_maintenance{target="b"} 0\n');
    expect(body).toContain('mkt_monitor_open_incidents{target="a"} 1\n');
    expect(body).toContain('mkt_monitor_maintenance_checks_total{target="a"} 1\n');
    expect(body).not.toContain('mkt_monitor_maintenance_checks_total{target="b"}');
    expect(body).toContain('mkt_monitor_response_time_seconds{target="a"} 0.12\n');
    expect(body).toContain('mkt_monitor_target_up{target="b"} 0\n');
    expect(body).toContain('mkt_monitor_checks_total{kind="health"} 2\n');
    expect(body).toContain('mkt_monitor_checks_total{kind="tls"} 1\n');
    // A check without a response (0 ms) is counted but not timed.
    expect(body).toContain('mkt_monitor_target_checks_total{target="b",status="down"} 1\n');
    expect(body).not.toContain('mkt_monitor_check_duration_seconds_count{target="b"}');
    expect(body).toMatch(/^mkt_monitor_check_duration_seconds_bucket\{le="0.25",target="a"\} 1$/m);
    expect(await promtool(body)).toEqual({ code: 0, output: '' });
  });

  it('counts a group of pings, recorded in one call, as many checks', async () => {
    const m = new MonitorMetrics(async () => ({ job: status({}) }));
    m.observe('job', 'health', [snap('operational', 0), snap('operational', 1500), snap('down', 0), snap('operational', 0, true), snap('operational', 0)]);
    const body = await m.render();
    expect(body).toContain('mkt_monitor_checks_total{kind="health"} 5\n');
    expect(body).toContain('mkt_monitor_target_checks_total{target="job",status="operational"} 4\n');
    expect(body).toContain('mkt_monitor_target_checks_total{target="job",status="down"} 1\n');
    expect(body).toContain('mkt_monitor_maintenance_checks_total{target="job"} 1\n');
    expect(body).toContain('mkt_monitor_check_duration_seconds_count{target="job"} 1\n');
  });

  it('forget() removes the counters of targets no longer configured, also against a late check', async () => {
    let statuses: Record<string, TargetStatus> = { a: status({}), b: status({}) };
    const m = new MonitorMetrics(async () => statuses);
    m.observe('a', 'health', [snap('operational', 10)]);
    m.observe('b', 'health', [snap('down', 10, true)]);
    statuses = { a: status({}) };
    m.forget(new Set(['a']));
    m.observe('b', 'health', [snap('down', 10)]);
    const body = await m.render();
    expect(body).not.toContain('target="b"');
    expect(body).toContain('mkt_monitor_target_checks_total{target="a",status="operational"} 1\n');
    expect(body).toContain('mkt_monitor_checks_total{kind="health"} 3\n');
  });

  it('two instances in one process keep separate registries', async () => {
    const one = new MonitorMetrics(async () => ({}));
    const two = new MonitorMetrics(async () => ({}));
    one.observe('a', 'health', [snap('operational', 10)]);
    expect(await one.render()).toContain('mkt_monitor_checks_total{kind="health"} 1\n');
    expect(await two.render()).not.toContain('mkt_monitor_checks_total{kind="health"}');
  });
});
