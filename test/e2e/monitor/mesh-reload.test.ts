// The monitor as a long-running daemon: the rate limit window, three instances in a mesh,
// SIGHUP reload with a good and a bad file, restart keeping history, and alert hooks.
import { afterEach, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import { chmodSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tempDir } from '../../helpers/tmp.js';
import { freePort, waitFor } from '../../helpers/wait.js';
import { healthServer } from '../../helpers/monitor-fixtures.js';
import { startMonitor, type MonitorNode } from '../../helpers/monitor-node.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function monitor(yaml: string, flags = {}, dir = tempDir()): Promise<MonitorNode> {
  cleanups.push(() => dir.remove());
  const m = await startMonitor(dir.path, yaml, flags);
  cleanups.push(() => m.stop());
  return m;
}

describe('rate limit', () => {
  it('60 requests per window pass; the 61st is 429 even with a wrong token; /api/health is not limited', async () => {
    const m = await monitor('token: mon-token\n');
    for (let i = 0; i < 60; i++) expect((await m.get('/api/status')).status).toBe(200);
    const over = await m.get('/api/status', 'wrong-token');
    expect(over.status).toBe(429);
    expect(over.body.error).toMatch(/rate limit exceeded/);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await m.get('/api/status', null)).status).toBe(429);
    expect((await m.get('/api/health', null)).status).toBe(200);
  });
});

describe('mesh', () => {
  it('three instances poll each other; /api/mesh has every instance; a peer with nothing cached says so', async () => {
    const health = await healthServer();
    cleanups.push(health.close);
    const ports = [await freePort(), await freePort(), await freePort()];
    const names = ['mon-a', 'mon-b', 'mon-c'];
    const down = await freePort();
    const nodes: MonitorNode[] = [];
    for (let i = 0; i < 3; i++) {
      const peers = names
        .map((n, j) => ({ n, j }))
        .filter(({ j }) => j !== i)
        .map(({ n, j }) => `    - { name: ${n}, url: "http://127.0.0.1:${ports[j]}", token: tok-${n} }`)
        .join('\n');
      const extra = i === 0 ? `\n    - { name: mon-gone, url: "http://127.0.0.1:${down}", token: x }` : '';
      const yaml = `name: ${names[i]}\ntoken: tok-${names[i]}\nrate_limit: { requests: 100000 }\nmesh:\n  interval: 200ms\n  peers:\n${peers}${extra}\ntargets:\n  shop-${i}:\n    url: ${health.url}\n    interval: 200ms\n    timeout: 2s\n`;
      const dir = tempDir();
      cleanups.push(() => dir.remove());
      writeFileSync(`${dir.path}/monitor.yaml`, yaml);
      const { startService } = await import('../../../daemon/start.js');
      const { createLogger } = await import('../../../daemon/logger.js');
      const { Writable } = await import('node:stream');
      const sink = new Writable({ write: (_c, _e, cb) => cb() });
      const svc = await startService('monitor', { host: '127.0.0.1', port: ports[i]!, dataDir: dir.path, configPath: `${dir.path}/monitor.yaml`, options: {}, env: {}, logger: createLogger({ level: 'silent', stream: sink }), out: sink });
      cleanups.push(() => svc.close());
      nodes.push({ url: svc.url, get: async (p: string, t = `tok-${names[i]}`) => {
        const r = await fetch(svc.url + p, { headers: { authorization: `Bearer ${t}` } });
        return { status: r.status, body: await r.json(), headers: r.headers };
      } } as MonitorNode);
    }
    const a = nodes[0]!;
    const info = (await a.get('/api/peer/info')).body;
    expect(info).toMatchObject({ name: 'mon-a', targets: 1 });
    expect(typeof info.version).toBe('string');
    expect(typeof info.started_at).toBe('string');
    const mesh = await waitFor(async () => {
      const m = (await a.get('/api/mesh')).body;
      return m.instances['mon-b']?.targets?.['shop-1'] && m.instances['mon-c']?.targets?.['shop-2'] ? m : undefined;
    }, 'every instance in the mesh');
    expect(Object.keys(mesh.instances).sort()).toEqual(['mon-a', 'mon-b', 'mon-c', 'mon-gone']);
    expect(mesh.instances['mon-a']).toMatchObject({ instance: { name: 'mon-a' }, targets: { 'shop-0': { status: 'operational' } } });
    expect(mesh.instances['mon-b'].instance.name).toBe('mon-b');
    expect(mesh.instances['mon-gone']).toMatchObject({ last_seen: null });
    expect(mesh.instances['mon-gone'].error).toMatch(/no status data cached/);
    const status = (await a.get('/api/peer/status')).body;
    expect(status.peers['mon-b']).toMatchObject({ status: 'up' });
    expect(typeof status.peers['mon-b'].latency_ms).toBe('number');
    expect(status.peers['mon-gone']).toMatchObject({ status: 'down', last_seen: null });
    expect(status.targets['shop-0']).toMatchObject({ label: 'shop-0', status: 'operational' });
  });
});

describe('reload and restart', () => {
  it('SIGHUP reload applies a good file, keeps the running config on a bad one, and history survives a restart', async () => {
    const health = await healthServer();
    cleanups.push(health.close);
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const base = `token: mon-token\nrate_limit: { requests: 100000 }\ntargets:\n  one:\n    url: ${health.url}\n    interval: 100ms\n    timeout: 2s\n`;
    let m = await startMonitor(dir.path, base);
    await waitFor(async () => (await m.get('/api/status/one')).body.recent?.length >= 3, 'history');
    writeFileSync(m.configPath, base + `  two:\n    url: ${health.url}\n    interval: 100ms\n    timeout: 2s\n`);
    await m.service.runtime.reload!();
    await waitFor(async () => (await m.get('/api/status/two')).body.latest, 'the added target');
    writeFileSync(m.configPath, base + '  three:\n    url: not a url\n');
    await expect(m.service.runtime.reload!()).rejects.toThrow(/monitor.yaml:\d+: targets.three.url must be an http\(s\) URL/);
    expect((await m.get('/api/status/two')).status).toBe(200);
    const before = (await m.get('/api/status/one')).body.recent.length;
    await m.stop();
    writeFileSync(`${dir.path}/monitor.yaml`, base);
    m = await startMonitor(dir.path, base);
    cleanups.push(() => m.stop());
    const after = (await m.get('/api/status/one')).body;
    expect(after.recent.length).toBeGreaterThanOrEqual(before);
  });
});

describe('secrets in the config file', () => {
  it('warns at start and at reload when a file holding a token is readable by every user; not once it is 0640', async () => {
    const yaml = 'token: mon-token\n';
    const m = await monitor(yaml);
    const warned = (): number => m.logs.filter((l) => l.includes('readable by every user')).length;
    chmodSync(m.configPath, 0o644);
    await m.service.runtime.reload!();
    expect(warned()).toBeGreaterThanOrEqual(1);
    const n = warned();
    chmodSync(m.configPath, 0o640);
    await m.service.runtime.reload!();
    expect(warned()).toBe(n);
    expect(m.logs.join('\n')).not.toContain('mon-token');
  });
});

describe('alerts', () => {
  it('posts JSON and Slack-style hooks when an incident opens and resolves, retrying a failing hook', async () => {
    const got: { path: string; body: any }[] = []; // eslint-disable-line @typescript-eslint/no-explicit-any -- hook bodies inspected in the test
    let failFirst = true;
    const hook = createServer((req, res) => {
      let b = '';
      req.on('data', (c) => (b += c));
      req.on('end', () => {
        if (req.url === '/flaky' && failFirst) {
          failFirst = false;
          return res.writeHead(500).end();
        }
        got.push({ path: req.url ?? '', body: JSON.parse(b) });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => hook.close(() => r())));
    const hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}`;
    const health = await healthServer();
    cleanups.push(health.close);
    health.mode = 'failing';
    const yaml = `token: mon-token\nincident_threshold: 2\nalerts:\n  - url: ${hookUrl}/flaky\n  - url: ${hookUrl}/slack\n    format: slack\ntargets:\n  api:\n    url: ${health.url}\n    interval: 100ms\n    timeout: 2s\n`;
    await monitor(yaml, { alertBackoffMs: [50, 50] });
    await waitFor(async () => got.some((g) => g.path === '/flaky' && g.body.event === 'incident.opened') && got.some((g) => g.path === '/slack'), 'the opened alerts');
    health.mode = 'operational';
    await waitFor(async () => got.some((g) => g.body.event === 'incident.resolved'), 'the resolved alert');
    const opened = got.find((g) => g.path === '/flaky' && g.body.event === 'incident.opened')!.body;
    expect(opened).toMatchObject({ target: 'api', label: 'api', incident: { status: 'open', cause: 'HTTP 500' } });
    expect(got.find((g) => g.path === '/slack')!.body.text).toMatch(/api .* is down: HTTP 500/);
  });
});
