// One mesh peer must not silence an alert (issue 28, finding 3): a real monitor `a` with
// `confirm: {quorum: 2}` polls fake mesh peers on 127.0.0.1 whose /api/peer/status answers carry
// forged claims (alerted while voting up, a made-up instance name that sorts first, `confirmed`
// from a sender that never alerts). The incident opens and its alerts still go out, from `a`.
import { afterEach, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startMonitor } from '../../helpers/monitor-node.js';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The monitored endpoint: 503 while `down.value`. */
async function health(): Promise<{ url: string; down: { value: boolean } }> {
  const down = { value: false };
  const origin = await listen((_req, res) => res.writeHead(down.value ? 503 : 200, { 'content-type': 'application/json' }).end(down.value ? '{"status":"down"}' : '{"status":"ok"}'));
  return { url: `${origin}/health`, down };
}

/** The alert hook: every event with its sending instance. */
async function hook(): Promise<{ url: string; got: { event: string; instance: string }[] }> {
  const got: { event: string; instance: string }[] = [];
  const origin = await listen((req, res) => {
    let b = '';
    req.on('data', (c) => (b += c));
    req.on('end', () => {
      const body = JSON.parse(b) as { event: string; instance: string };
      got.push({ event: body.event, instance: body.instance });
      res.writeHead(204).end();
    });
  });
  return { url: `${origin}/hook`, got };
}

/** A hostile mesh peer: answers /api/peer/status with whatever `claims.api` says about target `api`. */
async function fakePeer(instanceName: string, api: Record<string, unknown>): Promise<{ url: string; claims: { api: Record<string, unknown> } }> {
  const claims = { api };
  const url = await listen((_req, res) => {
    const body = { instance: { name: instanceName, version: '0.0.0', started_at: new Date(0).toISOString(), targets: 1 }, targets: { api: { label: 'api', response_time_ms: 1, checked_at: new Date().toISOString(), ...claims.api } }, peers: {} };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  return { url, claims };
}

/** The real monitor `a`: quorum 2, threshold 2, checks and mesh polls every 200 ms. */
async function monitorA(target: string, hookUrl: string, peers: { name: string; url: string }[]): Promise<{ logs: string[]; incident(): Promise<unknown> }> {
  const list = peers.map((p) => `    - { name: "${p.name}", url: "${p.url}", token: tok }`).join('\n');
  const yaml = `name: a\ntoken: tok\nrate_limit: { requests: 100000 }\nincident_threshold: 2\nconfirm: { quorum: 2 }\nalerts:\n  - url: ${hookUrl}\nmesh:\n  interval: 200ms\n  peers:\n${list}\ntargets:\n  api:\n    url: "${target}"\n    interval: 200ms\n    timeout: 2s\n`;
  const dir = tempDir();
  cleanups.push(() => dir.remove());
  const node = await startMonitor(dir.path, yaml, { alertBackoffMs: [50, 50] });
  cleanups.push(() => node.stop());
  return {
    logs: node.logs,
    async incident() {
      return ((await node.get('/api/status/api', 'tok')).body as { current_incident?: unknown }).current_incident;
    },
  };
}

const DOWN = { status: 'down', confirmed: true };
const alertedClaim = () => ({ incident: { started_at: new Date().toISOString(), alerted: true } });

describe('forged mesh claims do not silence alerts (issue 28)', () => {
  it('a peer voting up that claims "already alerted", and one naming itself "!" to be elected, silence nothing: a alerts, then sends the resolution', async () => {
    const h = await health();
    const alerts = await hook();
    const x = await fakePeer('!', { ...DOWN }); // would win the election by its own name, never alerts
    const y = await fakePeer('y', { status: 'operational', ...alertedClaim() });
    const a = await monitorA(h.url, alerts.url, [
      { name: 'x', url: x.url },
      { name: 'y', url: y.url },
    ]);
    h.down.value = true;
    await waitFor(() => a.incident(), 'the incident opens on a');
    await waitFor(async () => alerts.got.length > 0, 'the opening alert');
    expect(alerts.got).toEqual([{ event: 'incident.opened', instance: 'a' }]);
    h.down.value = false;
    x.claims.api = { status: 'operational' };
    await waitFor(async () => !(await a.incident()), 'the incident resolves on a');
    await waitFor(async () => alerts.got.length > 1, 'the resolution alert');
    expect(alerts.got).toEqual([
      { event: 'incident.opened', instance: 'a' },
      { event: 'incident.resolved', instance: 'a' },
    ]);
  });

  it('an elected sender (named "0" here) that never shows its alert sent: a sends it after the bound, and the resolution after', async () => {
    const h = await health();
    const alerts = await hook();
    const zero = await fakePeer('0', { ...DOWN });
    const a = await monitorA(h.url, alerts.url, [{ name: '0', url: zero.url }]);
    h.down.value = true;
    await waitFor(() => a.incident(), 'the incident opens on a');
    // The bound is 2 × 200 ms + 200 ms + 5 s; the wait allows for a loaded machine.
    await waitFor(async () => alerts.got.length > 0, 'the opening alert, sent by a after the bound', 40_000);
    expect(alerts.got).toEqual([{ event: 'incident.opened', instance: 'a' }]);
    expect(a.logs.join('\n')).toContain('no vantage point voting down showed the opening alert sent in time; sending it from here');
    h.down.value = false;
    zero.claims.api = { status: 'operational' };
    await waitFor(async () => alerts.got.length > 1, 'the resolution alert');
    expect(alerts.got[1]).toEqual({ event: 'incident.resolved', instance: 'a' });
  });

  it('a peer voting down that claimed the opening and never shows the resolution sent: a sends the resolution after the bound', async () => {
    const h = await health();
    const alerts = await hook();
    const x = await fakePeer('x', { ...DOWN, ...alertedClaim() });
    const a = await monitorA(h.url, alerts.url, [{ name: 'x', url: x.url }]);
    h.down.value = true;
    await waitFor(() => a.incident(), 'the incident opens on a');
    // The claim of a point voting down is taken: a leaves the opening to x.
    expect(alerts.got).toEqual([]);
    h.down.value = false;
    x.claims.api = { status: 'operational' }; // recovered there too, and no resolution shown sent
    await waitFor(async () => !(await a.incident()), 'the incident resolves on a');
    await waitFor(async () => alerts.got.length > 0, 'the resolution alert, sent by a after the bound', 40_000);
    expect(alerts.got).toEqual([{ event: 'incident.resolved', instance: 'a' }]);
    expect(a.logs.join('\n')).toContain('no vantage point voting up showed the resolution alert sent in time; sending it from here');
  });
});
