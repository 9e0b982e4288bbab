// A monitor with parts left unconfigured, as a newcomer meets it after `mkt serve all` (issue 30,
// items 6 and 11): no targets, no mesh, no dashboard. Each says so, with the exit code of a standing
// answer (1), never an empty table, a passing --fail-on, a "server failed" or a bare 404.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../../commands/root/run.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { tempDir } from '../../helpers/tmp.js';
import { startMonitor, type MonitorNode } from '../../helpers/monitor-node.js';

const dir = tempDir();
const dashDir = tempDir();
let mon: MonitorNode;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  mon = await startMonitor(dir.path, 'name: bare\ntoken: mon-token\nrate_limit: { requests: 100000 }\n');
  env = { XDG_CONFIG_HOME: dir.path, MKT_CREDENTIAL_STORE: 'file', MKT_MONITOR_URL: mon.url, MKT_MONITOR_TOKEN: 'mon-token' };
});
afterAll(async () => {
  await mon.stop();
  dir.remove();
  dashDir.remove();
});

/** The pino records of a monitor's log (the `listening on` line is plain text). */
function records(node: MonitorNode): { msg?: string; url?: string }[] {
  return node.logs.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg?: string; url?: string });
}

async function mkt(args: string[], tty = false): Promise<{ code: number; out: string; err: string }> {
  const io = fakeIO({ env, tty });
  const code = await run(['monitor', ...args], io);
  return { code, out: io.out(), err: io.err() };
}

describe('a monitor with nothing configured', () => {
  it('status says there are no targets on stderr, prints no empty table, and --json keeps the empty object', async () => {
    for (const tty of [true, false]) {
      const r = await mkt(['status'], tty);
      expect(r.code).toBe(0);
      expect(r.out).toBe('');
      expect(r.err).toBe(`no targets configured on ${mon.url}\n`);
    }
    const json = await mkt(['status', '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.out)).toEqual({ targets: {} });
  });

  it('status --fail-on fails: a monitor that watches nothing cannot vouch that anything is up', async () => {
    for (const level of ['down', 'degraded']) {
      const r = await mkt(['status', '--fail-on', level]);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(new RegExp(`^mkt: no targets configured on ${mon.url}: a monitor that watches nothing cannot vouch that anything is up\n`));
    }
    expect((await mkt(['status', '--fail-on', 'down', '--json'])).code).toBe(1);
  });

  it('report says the same; its JSON is an empty list of reports, its CSV the header alone', async () => {
    const r = await mkt(['report']);
    expect(r.code).toBe(0);
    expect(r.out).toBe('');
    expect(r.err).toBe(`no targets configured on ${mon.url}\n`);
    expect(JSON.parse((await mkt(['report', '--json'])).out)).toEqual({ reports: [] });
    const csv = await mkt(['report', '--format', 'csv']);
    expect(csv.out).toMatch(/^target,label,from,to,[^\n]*\r\n$/);
    expect(csv.err).toBe(`no targets configured on ${mon.url}\n`);
  });

  it('watch without a terminal says the same', async () => {
    const r = await mkt(['watch']);
    expect(r.code).toBe(0);
    expect(r.err).toBe(`no targets configured on ${mon.url}\n`);
  });

  it('mesh exits 1 saying the monitor has no mesh and how to configure one (spec: the server answers 503)', async () => {
    const r = await mkt(['mesh']);
    expect(r.code).toBe(1);
    expect(r.err).toBe(`mkt: monitor mesh: ${mon.url} has no peer mesh configured\nhint: add a \`mesh:\` section (its \`peers\`, or \`peers: []\` alone) to that monitor's configuration and reload it; see docs/monitor.md#mesh\n`);
    expect((await mkt(['mesh', '--json'])).code).toBe(1);
    const wire = await mon.get('/api/mesh');
    expect(wire.status).toBe(503);
    expect(wire.body.error).toMatch(/^the peer mesh is not enabled on this instance: add a `mesh:` section/);
  });

  it('GET / says the dashboard is off and how to turn it on: 404, public, not in the API document; the start-up log says so too', async () => {
    const r = await mon.get('/', null);
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: expect.stringMatching(/^the dashboard is off on this monitor: set `dashboard: true` in its configuration and restart it \(docs\/monitor\.md#dashboard\)/) });
    const doc = (await mon.get('/openapi.json')).body as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).not.toContain('/');
    expect(records(mon).some((l) => l.msg?.startsWith('dashboard off: GET / answers 404'))).toBe(true);
  });

  it('with `dashboard: true` the start-up log names the page', async () => {
    const dash = await startMonitor(dashDir.path, 'name: dash\ntoken: t\ndashboard: true\n');
    try {
      const line = records(dash).find((l) => l.msg === 'dashboard on');
      expect(line?.url).toBe(`${dash.url}/`);
      expect((await dash.get('/', null)).status).toBe(200);
    } finally {
      await dash.stop();
    }
  });
});
