// Silences end to end (issue 32): the API behind the token with its validation, the CLI
// (`mkt monitor silence add|list|rm`, in-process through the real command tree) against a real
// monitor, alerts held while a target is silenced (the incident still opens, its timeline says
// why no alert went out) and sent again once the silence is removed, silences surviving a
// restart, shown escaped on the dashboard, capped at 1,000 (a flood), and shared by a cluster of
// three instances on one PostgreSQL database.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../../commands/root/run.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';
import { freshDatabaseUrl } from '../../helpers/pg.js';
import { healthServer, type HealthServer } from '../../helpers/monitor-fixtures.js';
import { startAlertHook, type AlertHook } from '../../helpers/alert-hook.js';
import { startMonitor, type MonitorNode } from '../../helpers/monitor-node.js';

const TOKEN = 'mon-token';

async function api(node: MonitorNode, method: string, path: string, body?: unknown, token: string | null = TOKEN): Promise<{ status: number; body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read bodies field by field
  const headers: Record<string, string> = {};
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(node.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

function yaml(health: HealthServer, hook: AlertHook, extra = ''): string {
  return `name: mon-silences
token: ${TOKEN}
rate_limit: { requests: 1000000 }
${extra}alerts:
  - url: ${hook.url}
targets:
  api: { url: "${health.url}", interval: 200ms, timeout: 2s, incident_threshold: 2 }
  web: { url: "${health.url}", interval: 60s, timeout: 2s }
`;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The target's open incident with its timeline, once it has one that `ok` accepts. */
async function openIncident(node: MonitorNode, target: string, ok: (timeline: { kind: string; detail?: string }[]) => boolean, what: string): Promise<{ id: number; timeline: { kind: string; detail?: string }[] }> {
  return waitFor(async () => {
    const inc = (await node.get(`/api/status/${target}`)).body.current_incident;
    return inc && ok(inc.timeline ?? []) ? inc : undefined;
  }, what);
}

describe('one monitor', () => {
  let health: HealthServer;
  let hook: AlertHook;
  let dir: { path: string; remove(): void };
  let node: MonitorNode;
  let cliEnv: NodeJS.ProcessEnv;

  async function mkt(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string; err: string }> {
    const io = fakeIO({ env: { ...cliEnv, ...env }, cwd: dir.path });
    const code = await run(['monitor', 'silence', ...args], io);
    return { code, out: io.out(), err: io.err() };
  }

  beforeAll(async () => {
    health = await healthServer();
    hook = await startAlertHook();
    dir = tempDir();
    node = await startMonitor(dir.path, yaml(health, hook, 'dashboard: true\n'));
    cliEnv = { XDG_CONFIG_HOME: dir.path, MKT_CREDENTIAL_STORE: 'file', MKT_MONITOR_URL: node.url, MKT_MONITOR_TOKEN: TOKEN };
    cleanups.push(() => dir.remove(), () => hook.close(), () => health.close(), () => node.stop());
  });

  afterEach(async () => {
    for (const s of (await api(node, 'GET', '/api/silences')).body.silences) await api(node, 'DELETE', `/api/silences/${s.id}`);
  });

  it('the API needs the token: 401 {"error"} without it, on each method', async () => {
    for (const [method, path, body] of [['POST', '/api/silences', { target: 'api', duration: '1h', reason: 'x' }], ['GET', '/api/silences'], ['DELETE', '/api/silences/sil_aaaaaaaaaaaa']] as const) {
      const r = await api(node, method, path, body, null);
      expect(r.status, `${method} ${path}`).toBe(401);
      expect(typeof r.body.error).toBe('string');
      expect((await api(node, method, path, body, 'wrong')).status).toBe(401);
    }
    expect((await api(node, 'GET', '/api/silences')).body.silences).toEqual([]);
  });

  it('create, list, delete; the answer carries id, target, all, reason and the times', async () => {
    const before = Date.now();
    const one = await api(node, 'POST', '/api/silences', { target: 'api', duration: '2h', reason: 'deploy 4.2' });
    expect(one.status).toBe(201);
    expect(one.body).toMatchObject({ target: 'api', all: false, reason: 'deploy 4.2' });
    expect(one.body.id).toMatch(/^sil_[a-z2-7]{12}$/);
    const created = Date.parse(one.body.created_at);
    expect(created).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(one.body.expires_at) - created).toBe(2 * 3_600_000);
    const all = await api(node, 'POST', '/api/silences', { all: true, duration: 90 * 60, reason: 'network work' });
    expect(all.status).toBe(201);
    expect(all.body).toMatchObject({ target: null, all: true });
    expect(Date.parse(all.body.expires_at) - Date.parse(all.body.created_at)).toBe(90 * 60_000);
    // Soonest to expire first.
    expect((await api(node, 'GET', '/api/silences')).body.silences).toEqual([all.body, one.body]);
    expect((await api(node, 'DELETE', `/api/silences/${one.body.id}`)).status).toBe(204);
    const again = await api(node, 'DELETE', `/api/silences/${one.body.id}`);
    expect(again.status).toBe(404);
    expect(again.body.error).toContain(one.body.id);
    expect((await api(node, 'GET', '/api/silences')).body.silences).toEqual([all.body]);
  });

  it('refuses bad input with 4xx {"error"} and stores nothing', async () => {
    const cases: [unknown, number, RegExp][] = [
      [{ target: 'nope', duration: '1h', reason: 'r' }, 404, /unknown target: nope/],
      [{ target: 'api', all: true, duration: '1h', reason: 'r' }, 400, /either `target`.*or `all: true`/],
      [{ duration: '1h', reason: 'r' }, 400, /either `target`/],
      [{ all: false, duration: '1h', reason: 'r' }, 400, /either `target`/],
      [{ target: 'api', duration: '59s', reason: 'r' }, 400, /from 1m to 30d/],
      [{ target: 'api', duration: '31d', reason: 'r' }, 400, /from 1m to 30d/],
      [{ target: 'api', duration: 'soon', reason: 'r' }, 400, /not a duration/],
      [{ target: 'api', duration: '1h', reason: '' }, 400, /reason/],
      [{ target: 'api', duration: '1h', reason: '   ' }, 400, /reason must not be blank/],
      [{ target: 'api', duration: '1h', reason: 'x'.repeat(201) }, 400, /reason/],
      [{ target: 'api', duration: '1h', reason: 'clear \u001b[2J screen' }, 400, /reason/],
      [{ target: 'api', duration: '1h' }, 400, /reason/],
    ];
    for (const [body, status, text] of cases) {
      const r = await api(node, 'POST', '/api/silences', body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.body.error, JSON.stringify(body)).toMatch(text);
    }
    const malformed = await fetch(node.url + '/api/silences', { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: '{"target":' });
    expect(malformed.status).toBe(400);
    expect(typeof ((await malformed.json()) as { error: unknown }).error).toBe('string');
    expect((await api(node, 'GET', '/api/silences')).body.silences).toEqual([]);
  });

  it('the CLI: add (a target, --all), list (lines, --json), rm; exit codes 2 for usage, 1 for unknown, 4 without the token', async () => {
    const added = await mkt(['add', 'api', '--for', '2h', '--reason', 'deploy', '--json']);
    expect(added.code).toBe(0);
    const silence = JSON.parse(added.out);
    expect(silence).toMatchObject({ target: 'api', reason: 'deploy', all: false });
    const all = await mkt(['add', '--all', '--for', '30m', '--reason', 'network work']);
    expect(all.code).toBe(0);
    // One line a silence in a pipe: id, target or "all targets", until, reason.
    const [allId, allTarget, allUntil, allReason] = all.out.trimEnd().split('\t');
    expect(allId).toMatch(/^sil_/);
    expect([allTarget, allReason]).toEqual(['all targets', 'network work']);
    expect(allUntil).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
    const list = await mkt(['list']);
    expect(list.code).toBe(0);
    expect(list.out.trimEnd().split('\n').map((l) => l.split('\t')[0])).toEqual([allId, silence.id]);
    expect(list.out).toContain(`${silence.id}\tapi\t`);
    const json = JSON.parse((await mkt(['list', '--json'])).out);
    expect(json.silences.map((s: { id: string }) => s.id)).toEqual([allId, silence.id]);

    // Usage errors (exit 2): no target nor --all, both, a bad duration (the flag named), a missing --reason.
    expect((await mkt(['add', '--for', '1h', '--reason', 'r'])).code).toBe(2);
    expect((await mkt(['add', 'api', '--all', '--for', '1h', '--reason', 'r'])).code).toBe(2);
    const badFor = await mkt(['add', 'api', '--for', '10s', '--reason', 'r']);
    expect(badFor.code).toBe(2);
    expect(badFor.err).toMatch(/1m to 30d/);
    expect((await mkt(['add', 'api', '--for', '1h'])).code).toBe(2);
    // The answer is no (exit 1): an unknown target, an unknown silence.
    const unknown = await mkt(['add', 'nope', '--for', '1h', '--reason', 'r']);
    expect(unknown).toMatchObject({ code: 1 });
    expect(unknown.err).toMatch(/unknown target: nope/);
    expect((await mkt(['rm', 'sil_aaaaaaaaaaaa'])).code).toBe(1);
    // Without the token: exit 4.
    expect((await mkt(['list'], { MKT_MONITOR_TOKEN: 'wrong' })).code).toBe(4);

    const rm = await mkt(['rm', silence.id]);
    expect(rm.code).toBe(0);
    expect(rm.err).toContain(`silence ${silence.id} removed`);
    expect((await mkt(['rm', silence.id])).code).toBe(1);
    expect((await mkt(['rm', allId!])).code).toBe(0);
    const empty = await mkt(['list']);
    expect(empty).toMatchObject({ code: 0, out: '' });
    expect(empty.err).toBe('no active silences\n');
  });

  it('the dashboard lists active silences, their reasons escaped', async () => {
    await api(node, 'POST', '/api/silences', { target: 'web', duration: '1h', reason: '<script>alert(1)</script> & "deploy"' });
    const page = await waitFor(async () => {
      const html = (await node.get('/', null)).body as string;
      return html.includes('class="silences"') ? html : undefined;
    }, 'the dashboard to show the silence (it renders at most every 5 s)', 15_000);
    expect(page).toContain('Silenced: <ul><li>web until ');
    expect(page).toContain('(&#60;script&#62;alert(1)&#60;/script&#62; &#38; &#34;deploy&#34;)');
    expect(page).not.toContain('<script>alert(1)');
  });

  it('while the target is silenced its incident opens with no alert (the timeline says why); after `silence rm` the resolution alerts', async () => {
    await waitFor(async () => (await node.get('/api/status/api')).body.latest?.status === 'operational', 'a first check of api');
    const added = await mkt(['add', 'api', '--for', '1h', '--reason', 'deploy 4.2', '--json']);
    const silence = JSON.parse(added.out) as { id: string };
    health.mode = 'failing';
    const inc = await openIncident(node, 'api', (tl) => tl.some((e) => e.kind === 'silenced'), 'the incident with its silenced alert');
    const held = inc.timeline.find((e) => e.kind === 'silenced')!;
    expect(held.detail).toContain('deploy 4.2');
    expect(held.detail).toContain(silence.id);
    const line = node.logs.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'alert silenced');
    expect(line).toMatchObject({ target: 'api', event: 'incident.opened', silence: silence.id, incident: inc.id });
    // Checks go on while silenced, and still nothing reaches the hook for api.
    const seen = (await node.get('/api/status/api')).body.latest.checked_at as string;
    await waitFor(async () => (await node.get('/api/status/api')).body.latest.checked_at !== seen, 'another check while silenced');
    expect(hook.alerts.filter((a) => a.target === 'api')).toEqual([]);

    expect((await mkt(['rm', silence.id])).code).toBe(0);
    health.mode = 'operational';
    const resolved = await waitFor(async () => hook.alerts.find((a) => a.target === 'api' && a.event === 'incident.resolved'), 'the resolution alert');
    expect(resolved.incident.id).toBe(inc.id);
    expect(hook.alerts.filter((a) => a.target === 'api').map((a) => a.event)).toEqual(['incident.resolved']);
  });

  it('silences survive a restart on the same data dir', async () => {
    const made = await api(node, 'POST', '/api/silences', { all: true, duration: '1h', reason: 'kept' });
    await node.stop();
    node = await startMonitor(dir.path, yaml(health, hook, 'dashboard: true\n'));
    cliEnv.MKT_MONITOR_URL = node.url;
    expect((await api(node, 'GET', '/api/silences')).body.silences).toEqual([made.body]);
  });
});

it('a flood: 1,000 active silences at most; the 1,001st is 409 {"error"} and nothing more is stored', async () => {
  const health = await healthServer();
  const hook = await startAlertHook();
  const dir = tempDir();
  const node = await startMonitor(dir.path, yaml(health, hook));
  cleanups.push(() => dir.remove(), () => hook.close(), () => health.close(), () => node.stop());
  // 20 clients at a time, as a script gone wrong would.
  const answers: number[] = [];
  for (let i = 0; i < 1000; i += 20) answers.push(...(await Promise.all([...Array(20)].map(async (_, j) => (await api(node, 'POST', '/api/silences', { all: true, duration: '1h', reason: `flood ${i + j}` })).status))));
  expect(answers.every((s) => s === 201)).toBe(true);
  const over = await Promise.all([...Array(10)].map(() => api(node, 'POST', '/api/silences', { target: 'api', duration: '1h', reason: 'one more' })));
  for (const r of over) {
    expect(r.status).toBe(409);
    expect(r.body.error).toMatch(/at most 1000/);
  }
  const list = (await api(node, 'GET', '/api/silences')).body.silences as { reason: string }[];
  expect(list).toHaveLength(1000);
  expect(list.some((s) => s.reason === 'one more')).toBe(false);
  // Removing one makes room for one.
  expect((await api(node, 'DELETE', `/api/silences/${(list[0] as unknown as { id: string }).id}`)).status).toBe(204);
  expect((await api(node, 'POST', '/api/silences', { target: 'api', duration: '1h', reason: 'one more' })).status).toBe(201);
  expect((await api(node, 'POST', '/api/silences', { target: 'api', duration: '1h', reason: 'and another' })).status).toBe(409);
});

it('a cluster of three on one PostgreSQL: a silence made through A is listed by B and C and holds the alert whichever instance sends it', async () => {
  const health = await healthServer();
  const hook = await startAlertHook();
  const env = { MKT_DATABASE_URL: await freshDatabaseUrl() };
  cleanups.push(() => hook.close(), () => health.close());
  const nodes: MonitorNode[] = [];
  for (let i = 0; i < 3; i++) {
    const dir = tempDir();
    const node = await startMonitor(dir.path, yaml(health, hook), {}, env);
    cleanups.push(() => dir.remove(), () => node.stop());
    nodes.push(node);
  }
  const [a, b, c] = nodes as [MonitorNode, MonitorNode, MonitorNode];
  await waitFor(async () => (await a.get('/api/status/api')).body.latest?.status === 'operational', 'a first check of api');
  const made = await api(a, 'POST', '/api/silences', { target: 'api', duration: '1h', reason: 'cluster deploy' });
  expect(made.status).toBe(201);
  for (const n of [b, c]) expect((await api(n, 'GET', '/api/silences')).body.silences).toEqual([made.body]);

  health.mode = 'failing';
  const inc = await openIncident(b, 'api', (tl) => tl.some((e) => e.kind === 'silenced'), 'the incident with its silenced alert');
  // Whichever instance claimed the alert held it: one silenced event, no alert for api anywhere.
  expect(inc.timeline.filter((e) => e.kind === 'silenced')).toHaveLength(1);
  const holders = nodes.filter((n) => n.logs.some((l) => l.includes('"msg":"alert silenced"')));
  expect(holders).toHaveLength(1);
  expect(hook.alerts.filter((x) => x.target === 'api')).toEqual([]);

  // Removed through C: the resolution is sent once, by whichever instance resolves it.
  expect((await api(c, 'DELETE', `/api/silences/${made.body.id}`)).status).toBe(204);
  for (const n of nodes) expect((await api(n, 'GET', '/api/silences')).body.silences).toEqual([]);
  health.mode = 'operational';
  await waitFor(async () => hook.alerts.find((x) => x.target === 'api' && x.event === 'incident.resolved'), 'the resolution alert');
  // Give a second sender time to show itself: the other instances check on.
  const seen = (await a.get('/api/status/api')).body.latest.checked_at as string;
  await waitFor(async () => (await a.get('/api/status/api')).body.latest.checked_at !== seen, 'another check after the resolution');
  expect(hook.alerts.filter((x) => x.target === 'api').map((x) => `${x.event} ${x.incident.id}`)).toEqual([`incident.resolved ${inc.id}`]);
});
