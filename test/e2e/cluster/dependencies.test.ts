// Issue 32, "a three-instance cluster sends each alert once", for dependencies: three `mkt serve
// monitor` processes (the real binary) on one PostgreSQL database, a router and six children
// behind it (`depends_on: [router]`, their leases spread over the three). The router fails with
// them: one alert, the router's, naming every child, none from any child on any instance; the
// router recovers while the children stay down: each child alerts on its own exactly once, though
// the instance that resolved the router owns few of them; then each child's resolution, once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { freshDatabaseUrl } from '../../helpers/pg.js';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';
import { serveBinary, type Served } from '../../helpers/serve-binary.js';
import { startAlertHook, type AlertHook } from '../../helpers/alert-hook.js';

// Two seconds, not one: a child waits for a parent whose down streak has not reached its threshold
// only while the parent's latest check is recent (two intervals and a timeout), and on a loaded
// CI machine three instances checking every second fell behind that, so a child alerted on its
// own, as it should when its parent's checks are overdue (CI under a busy core, 2026-11-30).
const INTERVAL_MS = 2_000;
// The router's timeout sets the rest of that recency bound (two intervals and a timeout). Its checks
// answer at once from the local target server, so a long timeout slows nothing and only widens the
// bound: 16 s, against 5.5 s with 1.5 s, when a child failed to wait for its parent under CI, a
// fuzz run and a busy core together (2026-12-01).
const ROUTER_TIMEOUT_MS = 12_000;
/** Each wait is bounded by the checks it needs (three of the router's, two of a child's), several times over. */
const WAIT_MS = 20 * INTERVAL_MS;
const TOKEN = 'cluster-token';
const children = ['c1', 'c2', 'c3', 'c4', 'c5', 'c6'];

const failing = new Set<string>();
let targetServer: Server;
let hook: AlertHook;
const dirs = [tempDir('mkt-mon-deps-'), tempDir('mkt-mon-deps-'), tempDir('mkt-mon-deps-')];
const instances: Served[] = [];

interface DepAlert {
  event: string;
  target: string;
  affected?: string[];
}
const alerts = (): DepAlert[] => hook.alerts as unknown as DepAlert[];
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function status(base: string, target: string): Promise<{ caused_by?: string; current_incident?: { checks: number } }> {
  const res = await fetch(`${base}/api/status/${target}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return (await res.json()) as { caused_by?: string; current_incident?: { checks: number } };
}

beforeAll(async () => {
  targetServer = createServer((req, res) => {
    const name = (req.url ?? '/').slice(1);
    if (failing.has(name)) return res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"boom"}');
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
  });
  await new Promise<void>((r) => targetServer.listen(0, '127.0.0.1', r));
  const port = (targetServer.address() as AddressInfo).port;
  hook = await startAlertHook();
  const url = (n: string): string => `http://127.0.0.1:${port}/${n}`;
  // The router needs three down checks, the children two: they wait for its incident.
  const yaml = `name: cluster\ntoken: ${TOKEN}\nrate_limit: { requests: 100000 }\nincident_threshold: 2\nalerts:\n  - url: "${hook.url}"\ntargets:\n  router: { url: "${url('router')}", interval: ${INTERVAL_MS}ms, timeout: ${ROUTER_TIMEOUT_MS}ms, incident_threshold: 3 }\n${children.map((c) => `  ${c}: { url: "${url(c)}", interval: ${INTERVAL_MS}ms, timeout: 1500ms, depends_on: [router] }`).join('\n')}\n`;
  const dbUrl = await freshDatabaseUrl();
  for (const d of dirs) writeFileSync(join(d.path, 'monitor.yaml'), yaml);
  instances.push(...(await Promise.all(dirs.map((d) => serveBinary('monitor', d.path, { MKT_DATABASE_URL: dbUrl, MKT_LOG_LEVEL: 'warn' })))));
  // Every target checked (operational) before anything fails: the leases have settled.
  await waitFor(async () => {
    for (const t of ['router', ...children]) if (!(await status(instances[0]!.url, t).then((s) => (s as { latest?: { status: string } }).latest?.status === 'operational'))) return false;
    return true;
  }, 'every target checked once', WAIT_MS);
}, 180_000);

afterAll(async () => {
  for (const s of instances) s.child.kill('SIGKILL');
  targetServer?.closeAllConnections();
  await new Promise((r) => targetServer?.close(r));
  await hook?.close();
  for (const d of dirs) d.remove();
});

describe('dependencies on a cluster of three', () => {
  it('one alert for the router naming its children; each child alerts once on its own after the router recovers, and resolves once', async () => {
    for (const t of ['router', ...children]) failing.add(t);
    // Every child's incident opened under the router, as every instance shows it.
    for (const c of children) await waitFor(async () => (await status(instances[0]!.url, c)).caused_by === 'router', `${c} caused_by router`, WAIT_MS);
    for (const s of instances) for (const c of children) expect((await status(s.url, c)).caused_by, `${c} on ${s.url}`).toBe('router');
    await sleep(3 * INTERVAL_MS); // time for a child's alert, were one to come
    expect(alerts().map((a) => `${a.event} ${a.target}`)).toEqual(['incident.opened router']);
    expect([...(alerts()[0]!.affected ?? [])].sort()).toEqual(children);

    failing.delete('router');
    await waitFor(async () => children.every((c) => alerts().some((a) => a.target === c)), 'every child\'s own alert', WAIT_MS);
    await sleep(3 * INTERVAL_MS);
    const byTarget = (t: string): string[] => alerts().filter((a) => a.target === t).map((a) => a.event);
    expect(byTarget('router')).toEqual(['incident.opened', 'incident.resolved']);
    for (const c of children) expect(byTarget(c), c).toEqual(['incident.opened']);

    for (const c of children) failing.delete(c);
    await waitFor(async () => children.every((c) => byTarget(c).length === 2), 'every child\'s resolution', WAIT_MS);
    await sleep(2 * INTERVAL_MS);
    for (const c of children) expect(byTarget(c), c).toEqual(['incident.opened', 'incident.resolved']);
    expect(alerts()).toHaveLength(2 + 2 * children.length);
  }, 300_000);
});
