// Issue 32, "Dependencies", with the real binary (`mkt serve monitor`): a router and a web server
// behind it (`depends_on: [router]`), both HTTP targets served here. Both fail: one alert, the
// router's, naming web; none for web, whose status shows `caused_by: router`. The router recovers
// while web stays down: web alerts then, on its own, once. (Reminders run on a clock the binary
// does not let a test set, and at least a minute apart: dependencies-engine.test.ts drives them.)
import { createServer } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveBinary, type Served } from '../../helpers/serve-binary.js';
import { startAlertHook, type AlertHook } from '../../helpers/alert-hook.js';
import { listenLocal } from '../../helpers/local-http.js';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';

interface Status {
  caused_by?: string;
  current_incident?: { id: number; checks: number; caused_by?: string; timeline?: { at: string; kind: string; detail?: string }[] };
  incidents?: { status: string; caused_by?: string }[];
}

/** An alert as the JSON hook receives it, with the fields of issue 32. */
interface DepAlert {
  event: string;
  target: string;
  affected?: string[];
  reminder?: number;
  incident: { id: number; caused_by?: string };
}

const dir = tempDir();
const closers: (() => Promise<void> | void)[] = [];
const down = new Set<string>();
let hook: AlertHook;
let server: Served;

async function status(target: string): Promise<Status> {
  const res = await fetch(`${server.url}/api/status/${target}`, { headers: { authorization: 'Bearer mon-token' } });
  expect(res.status).toBe(200);
  return (await res.json()) as Status;
}

const alerts = (): DepAlert[] => hook.alerts as unknown as DepAlert[];
const summary = (): string[] => alerts().map((a) => `${a.event} ${a.target}${a.affected ? ` affected ${a.affected.join(',')}` : ''}`);

beforeAll(async () => {
  hook = await startAlertHook();
  const targets = createServer((req, res) => {
    const name = (req.url ?? '/').slice(1);
    res.writeHead(down.has(name) ? 503 : 200, { 'content-type': 'application/json' }).end(down.has(name) ? '{"status":"down"}' : '{"status":"ok"}');
  });
  const base = await listenLocal(targets, (c) => closers.push(c));
  const config = join(dir.path, 'monitor.yaml');
  // The router needs three down checks, web two: web reaches its threshold first and waits for
  // the router's incident instead of alerting ahead of it.
  writeFileSync(
    config,
    `name: mon-deps
token: mon-token
rate_limit: { requests: 1000000 }
alerts:
  - url: ${hook.url}
targets:
  router:
    url: ${base}/router
    interval: 200ms
    timeout: 2s
    incident_threshold: 3
  web:
    url: ${base}/web
    interval: 200ms
    timeout: 2s
    incident_threshold: 2
    depends_on: [router]
`,
  );
  server = await serveBinary('monitor', join(dir.path, 'data'), { MKT_CONFIG: config });
}, 60_000);

afterAll(async () => {
  server?.child.kill('SIGTERM');
  await server?.exited;
  await hook?.close();
  for (const c of closers) await c();
  dir.remove();
});

describe('depends_on with the real binary', () => {
  it('one alert for the router naming web, none for web (caused_by in its status); web alerts on its own once the router recovers', async () => {
    down.add('router').add('web');
    await waitFor(async () => (await status('web')).caused_by === 'router', 'web caused_by router');
    const web = await status('web');
    expect(web.current_incident).toMatchObject({ caused_by: 'router' });
    expect(web.incidents?.[0]).toMatchObject({ status: 'open', caused_by: 'router' });
    // Several more down checks of both: still the router's alert alone.
    const id = web.current_incident!.id;
    await waitFor(async () => ((await status('web')).current_incident?.checks ?? 0) >= 6, 'six down checks of web');
    await waitFor(async () => alerts().length >= 1, 'the router\'s alert');
    expect(summary()).toEqual(['incident.opened router affected web']);
    expect((await status('router')).caused_by).toBeUndefined();

    down.delete('router');
    await waitFor(async () => alerts().some((a) => a.target === 'web'), 'web\'s own alert');
    await waitFor(async () => alerts().some((a) => a.event === 'incident.resolved' && a.target === 'router'), 'the router\'s resolution');
    // Two POSTs in flight may land in either order; each once.
    expect([...summary()].sort()).toEqual(['incident.opened router affected web', 'incident.opened web', 'incident.resolved router']);
    expect(alerts().find((a) => a.target === 'web')!.incident).toMatchObject({ id, caused_by: 'router' });
    const after = await status('web');
    expect(after.current_incident?.id).toBe(id);
    // caused_by names the parent the incident opened under; the status keeps showing it while that incident is open.
    expect(after.caused_by).toBe('router');
    // Its timeline, as one target's status carries it: opened under the router, then its own alert.
    await waitFor(async () => (await status('web')).current_incident?.timeline?.some((e) => e.kind === 'alerted'), 'web\'s timeline showing its alert');
    const kinds = (await status('web')).current_incident!.timeline!.map((e) => e.kind);
    expect(kinds.slice(0, 2)).toEqual(['opened', 'caused_by']);
    expect(kinds).toContain('alerted');
    expect((await status('web')).current_incident!.timeline!.find((e) => e.kind === 'caused_by')?.detail).toBe('router');

    // Web recovers: its resolution is alerted, as its opening was.
    down.delete('web');
    await waitFor(async () => alerts().some((a) => a.event === 'incident.resolved' && a.target === 'web'), 'web\'s resolution');
    expect([...summary()].sort()).toEqual(['incident.opened router affected web', 'incident.opened web', 'incident.resolved router', 'incident.resolved web']);
    expect((await status('web')).caused_by).toBeUndefined();
  }, 90_000);
});
