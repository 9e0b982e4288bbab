// "Down" confirmed from several vantage points (issue 15): three monitors in a mesh, each with
// its own SQLite, check the same target `api` with `confirm: {quorum: 2}`. Down from one place is
// regional (no incident, no alert); down from two opens the incident on those two and its alert
// goes out once across the mesh, and so does the resolution; a peer that is stopped is no vote.
import { afterEach, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import { writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { startService, type RunningService } from '../../../daemon/start.js';
import { createLogger } from '../../../daemon/logger.js';
import { tempDir } from '../../helpers/tmp.js';
import { freePort, waitFor } from '../../helpers/wait.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const NAMES = ['a', 'b', 'c'] as const;
type Name = (typeof NAMES)[number];
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** One health endpoint for every vantage point: `?vp=NAME` answers 503 while NAME is in `down`. */
async function healthByVantage(): Promise<{ url: string; down: Set<string> }> {
  const down = new Set<string>();
  const server = createServer((req, res) => {
    const vp = new URL(req.url ?? '/', 'http://x').searchParams.get('vp') ?? '';
    if (down.has(vp)) return res.writeHead(503, { 'content-type': 'application/json' }).end('{"status":"down"}');
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/health`, down };
}

/** The alert hook every instance posts to: it records the event and the sending instance. */
async function hookServer(): Promise<{ url: string; got: { event: string; instance: string }[] }> {
  const got: { event: string; instance: string }[] = [];
  const server = createServer((req, res) => {
    let b = '';
    req.on('data', (c) => (b += c));
    req.on('end', () => {
      const body = JSON.parse(b) as { event: string; instance: string };
      got.push({ event: body.event, instance: body.instance });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got };
}

interface Node {
  name: Name;
  service: RunningService;
  logs: string[];
  get(path: string): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- bodies inspected field by field
  stop(): Promise<void>;
}

/** Starts the named instances (of a, b, c, each knowing the other two) on fixed ports. */
async function mesh(health: string, hook: string, start: readonly Name[] = NAMES): Promise<Record<Name, Node | undefined>> {
  const ports = { a: await freePort(), b: await freePort(), c: await freePort() };
  const nodes = {} as Record<Name, Node | undefined>;
  for (const name of start) {
    const peers = NAMES.filter((n) => n !== name)
      .map((n) => `    - { name: ${n}, url: "http://127.0.0.1:${ports[n]}", token: tok }`)
      .join('\n');
    const yaml = `name: ${name}\ntoken: tok\nrate_limit: { requests: 100000 }\ndashboard: true\nincident_threshold: 2\nconfirm: { quorum: 2 }\nalerts:\n  - url: ${hook}\nmesh:\n  interval: 200ms\n  peers:\n${peers}\ntargets:\n  api:\n    url: "${health}?vp=${name}"\n    interval: 200ms\n    timeout: 2s\n`;
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    writeFileSync(`${dir.path}/monitor.yaml`, yaml);
    const logs: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _e, cb) {
        logs.push(...chunk.toString().split('\n').filter(Boolean));
        cb();
      },
    });
    const service = await startService('monitor', { host: '127.0.0.1', port: ports[name], dataDir: dir.path, configPath: `${dir.path}/monitor.yaml`, options: { alertBackoffMs: [50, 50] }, env: {}, logger: createLogger({ level: 'debug', stream: sink, pretty: false }), out: sink });
    let stopped: Promise<void> | undefined;
    const stop = (): Promise<void> => (stopped ??= service.close());
    cleanups.push(stop);
    nodes[name] = {
      name,
      service,
      logs,
      stop,
      async get(path) {
        const r = await fetch(service.url + path, { headers: { authorization: 'Bearer tok' } });
        const text = await r.text();
        return r.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text;
      },
    };
  }
  return nodes;
}

const status = (n: Node) => n.get('/api/status/api');
interface Point {
  name: string;
  self?: boolean;
  status: string | null;
  checked_at: string | null;
  error?: string;
}
const point = (s: { vantage_points?: Point[] }, name: string): Point | undefined => s.vantage_points?.find((p) => p.name === name);

describe('mesh confirmation, quorum 2 of three vantage points', () => {
  it('down from one place is regional: no incident, no alert; from two it opens on those two and alerts once; the recovery is sent once', async () => {
    const health = await healthByVantage();
    const hook = await hookServer();
    const { a, b, c } = (await mesh(health.url, hook.url)) as Record<Name, Node>;
    // Every instance has every other's answer before anything goes down.
    for (const n of [a, b, c]) await waitFor(async () => (await status(n)).vantage_points?.every((p: { status: string | null }) => p.status === 'operational'), `${n.name} sees all three up`);

    // 1. Down for a only.
    health.down.add('a');
    const regional = await waitFor(async () => {
      const s = await status(a);
      return s.regional === true && point(s, 'b')?.status === 'operational' && point(s, 'c')?.status === 'operational' ? s : undefined;
    }, 'a shows a regional outage');
    expect(point(regional, 'a')).toMatchObject({ self: true, status: 'down' });
    expect(regional.down_from).toEqual(['a']);
    await sleep(1500); // several check and mesh intervals, well past incident_threshold: 2
    for (const n of [a, b, c]) expect((await status(n)).current_incident).toBeUndefined();
    expect(hook.got).toEqual([]);
    expect(a.logs.filter((l) => l.includes('down not confirmed')).length).toBe(1);
    expect(a.logs.join('\n')).toContain('a regional problem, no incident');
    // b sees it too: down from a, not confirmed.
    expect(await status(b)).toMatchObject({ down_from: ['a'], regional: true });
    const page = (await a.get('/')) as string;
    expect(page).toMatch(/<li class="vp down" data-vantage="a" data-status="down" data-self="true"/);
    expect(page).toMatch(/<li class="vp operational" data-vantage="b" data-status="operational"/);
    expect(page).toContain('data-regional="true"');

    // 2. Down for a and b.
    health.down.add('b');
    await waitFor(async () => (await status(a)).current_incident && (await status(b)).current_incident, 'incidents on a and b');
    await waitFor(async () => hook.got.length > 0, 'the opened alert');
    await sleep(2000); // a second alert, if any instance sent one, would be here by now
    // The sender is the lowest-named point that sees the outage confirmed when it decides
    // (docs/monitor.md, "Who sends the alert"): a, unless b reached its quorum before a had seen
    // b down, which a loaded machine decides. Either way exactly one alert, from a down-voter.
    expect(hook.got).toHaveLength(1);
    const sender = hook.got[0]!.instance;
    expect(['a', 'b']).toContain(sender);
    expect(hook.got).toEqual([{ event: 'incident.opened', instance: sender }]);
    const [sent, silent] = sender === 'a' ? [a, b] : [b, a];
    expect((await status(c)).current_incident).toBeUndefined();
    const confirmed = await status(c);
    expect(confirmed.down_from).toEqual(['a', 'b']);
    expect(confirmed.regional).toBeUndefined();
    expect(point(confirmed, 'c')).toMatchObject({ self: true, status: 'operational' });
    const peerStatus = await silent.get('/api/peer/status');
    expect(peerStatus.targets.api).toMatchObject({ status: 'down', confirmed: true, incident: { alerted: false } });
    expect((await sent.get('/api/peer/status')).targets.api).toMatchObject({ incident: { alerted: true } });

    // Recovery everywhere: one resolution, from the instance that sent the opening.
    health.down.clear();
    await waitFor(async () => !(await status(a)).current_incident && !(await status(b)).current_incident, 'both incidents resolved');
    await waitFor(async () => hook.got.length > 1, 'the resolved alert');
    await sleep(2000);
    expect(hook.got).toEqual([
      { event: 'incident.opened', instance: sender },
      { event: 'incident.resolved', instance: sender },
    ]);
  });
});

describe('mesh confirmation: a peer that does not answer is no vote', () => {
  it('a down, b stopped, c up: no incident (1 of 2 voters); then c stopped too: too few voters, still none, and the log says why', async () => {
    const health = await healthByVantage();
    const hook = await hookServer();
    const { a, c } = (await mesh(health.url, hook.url, ['a', 'c'])) as Record<Name, Node>;
    await waitFor(async () => point(await status(a), 'c')?.status === 'operational', 'a sees c');
    health.down.add('a');
    const s = await waitFor(async () => {
      const x = await status(a);
      return x.regional === true ? x : undefined;
    }, 'a regional');
    expect(point(s, 'b')).toMatchObject({ status: null, error: 'no answer' });
    await sleep(1500);
    expect((await status(a)).current_incident).toBeUndefined();
    expect(a.logs.join('\n')).toContain('down from 1 of 2 vantage points, below the quorum of 2');

    await c.stop();
    await waitFor(async () => point(await status(a), 'c')?.error === 'no answer', 'c no longer answers');
    await waitFor(async () => a.logs.some((l) => l.includes('only 1 vantage point answered; a quorum of 2 cannot be reached')), 'the too-few-voters log line');
    await sleep(1000);
    const alone = await status(a);
    expect(alone.current_incident).toBeUndefined();
    // Still shown as down from here only, unconfirmed.
    expect(alone).toMatchObject({ down_from: ['a'], regional: true });
    expect(hook.got).toEqual([]);
  });
});
