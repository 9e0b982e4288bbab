// `mkt auth login|status|logout` against real servers (issue 30 items 2 and 5): the token is
// proved before it is saved (refused: exit 4, unreachable: exit 3, nothing saved either way), the
// server defaults as every client command's does, and the sync sign-in is shown by `auth status`
// and removed by `auth logout marketplace`.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../../commands/root/run.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { startMonitor, type MonitorNode } from '../../helpers/monitor-node.js';
import { startNode, TOKEN, type TicketNode } from '../../helpers/tickets-node.js';
import { tempDir } from '../../helpers/tmp.js';
import { freePort } from '../../helpers/wait.js';
import { admin, startSyncWorld, type SyncWorld } from '../../e2e/sync-client/harness.js';

const dirs: { remove(): void }[] = [];
let tickets: TicketNode;
let monitor: MonitorNode;
let openMonitor: MonitorNode;
let world: SyncWorld;

const MONITOR_YAML = 'targets:\n  market:\n    url: http://127.0.0.1:9/\n    interval: 1h\n';

beforeAll(async () => {
  const t = tempDir();
  const m = tempDir();
  const o = tempDir();
  dirs.push(t, m, o);
  tickets = await startNode(t.path);
  monitor = await startMonitor(m.path, `token: mon-token\n${MONITOR_YAML}`);
  openMonitor = await startMonitor(o.path, MONITOR_YAML);
  world = await startSyncWorld();
});
afterAll(async () => {
  await Promise.all([tickets?.stop(), monitor?.stop(), openMonitor?.stop(), world?.close()]);
  dirs.forEach((d) => d.remove());
});

function home(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const d = tempDir();
  dirs.push(d);
  return { XDG_CONFIG_HOME: d.path, MKT_CREDENTIAL_STORE: 'file', ...extra };
}

async function mkt(env: NodeJS.ProcessEnv, args: string[], opts: { stdin?: string; tty?: boolean } = {}): Promise<{ code: number; out: string; err: string }> {
  const io = fakeIO({ env, stdin: opts.stdin, tty: opts.tty });
  const code = await run(args, io);
  return { code, out: io.out(), err: io.err() };
}

const credentialsFile = (env: NodeJS.ProcessEnv): string => join(env.XDG_CONFIG_HOME!, 'mkt', 'credentials.json');
const configFile = (env: NodeJS.ProcessEnv): string => join(env.XDG_CONFIG_HOME!, 'mkt', 'config.json');
const saved = (env: NodeJS.ProcessEnv): Record<string, string> => (existsSync(credentialsFile(env)) ? (JSON.parse(readFileSync(credentialsFile(env), 'utf8')) as Record<string, string>) : {});

describe('mkt auth login: the token is checked before it is saved (issue 30 item 2)', () => {
  it('tickets, as the README writes it (`< tickets/token`, no --server): the server comes from MKT_TICKETS_URL, then the saved profile', async () => {
    const env = home({ MKT_TICKETS_URL: tickets.url });
    const r = await mkt(env, ['auth', 'login', 'tickets'], { stdin: `${TOKEN}\n` });
    expect(r.code, r.err).toBe(0);
    const node = (await tickets.req('GET', '/sync/node')).body.node_id as string;
    expect(r.err).toContain(`Logged in to tickets at ${tickets.url} (server from MKT_TICKETS_URL): node ${node}`);
    expect(r.err).not.toContain(TOKEN);
    expect(statSync(credentialsFile(env)).mode & 0o777).toBe(0o600);
    expect(saved(env)).toEqual({ [`tickets@${tickets.url}`]: TOKEN });
    // The saved token and profile serve the next command, without the variable.
    const { MKT_TICKETS_URL: _, ...bare } = env;
    const list = await mkt(bare, ['tickets', 'list', '--json']);
    expect(list.code, list.err).toBe(0);
    // A second login without --server or variable goes to the profile's server.
    const again = await mkt(bare, ['auth', 'login', 'tickets'], { stdin: `${TOKEN}\n` });
    expect(again.code, again.err).toBe(0);
    expect(again.err).toContain(`at ${tickets.url} (server from the saved profile)`);
  });

  it('a wrong token exits 4 and saves nothing, not even the profile', async () => {
    const env = home();
    const r = await mkt(env, ['auth', 'login', 'tickets', '--server', tickets.url], { stdin: 'not-the-token\n' });
    expect(r.code).toBe(4);
    expect(r.err).toMatch(/^mkt: token refused by tickets at .*\(HTTP 401\); nothing saved$/m);
    expect(existsSync(credentialsFile(env))).toBe(false);
    expect(existsSync(configFile(env))).toBe(false);
  });

  it('a wrong token does not replace a good saved one', async () => {
    const env = home();
    expect((await mkt(env, ['auth', 'login', 'tickets', '--server', tickets.url], { stdin: `${TOKEN}\n` })).code).toBe(0);
    expect((await mkt(env, ['auth', 'login', 'tickets', '--server', tickets.url], { stdin: 'typo\n' })).code).toBe(4);
    expect(saved(env)).toEqual({ [`tickets@${tickets.url}`]: TOKEN });
    // status and logout see what login saved.
    const status = await mkt(env, ['auth', 'status', '--json']);
    const body = JSON.parse(status.out) as { credential_store: string; services: { service: string; server: string; token: string }[] };
    expect(body.credential_store).toBe('file');
    expect(body.services.find((s) => s.service === 'tickets')).toMatchObject({ server: tickets.url, token: 'file' });
    expect(status.out).not.toContain(TOKEN);
    expect((await mkt(env, ['auth', 'logout', 'tickets'])).code).toBe(0);
    expect(saved(env)).toEqual({});
    expect((await mkt(env, ['auth', 'logout', 'tickets'])).code).toBe(1);
  });

  it('an unreachable server exits 3 and saves nothing', async () => {
    const env = home({ MKT_TICKETS_URL: `http://127.0.0.1:${await freePort()}` });
    const r = await mkt(env, ['auth', 'login', 'tickets'], { stdin: `${TOKEN}\n` });
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/cannot reach .*; nothing saved/);
    expect(existsSync(credentialsFile(env))).toBe(false);
  });

  it('a server that is not the service asked for is a negative answer (exit 1), nothing saved', async () => {
    const env = home();
    const r = await mkt(env, ['auth', 'login', 'tickets', '--server', openMonitor.url], { stdin: 'x\n' });
    expect(r.code).toBe(1);
    expect(r.err).toContain(`${openMonitor.url} does not answer as a tickets server`);
    const m = await mkt(env, ['auth', 'login', 'marketplace', '--server', openMonitor.url], { stdin: 'x\n' });
    expect(m.code).toBe(1);
    expect(m.err).toContain(`${openMonitor.url} does not answer as a marketplace server`);
    expect(existsSync(credentialsFile(env))).toBe(false);
  });

  it('monitor: its token is checked; a monitor without a configured token warns that nothing was checked', async () => {
    const env = home();
    expect((await mkt(env, ['auth', 'login', 'monitor', '--server', monitor.url], { stdin: 'nope\n' })).code).toBe(4);
    const ok = await mkt(env, ['auth', 'login', 'monitor', '--server', monitor.url], { stdin: 'mon-token\n' });
    expect(ok.code, ok.err).toBe(0);
    expect(ok.err).toContain(`Logged in to monitor at ${monitor.url}: 1 target watched`);
    expect(ok.err).not.toMatch(/warning/);
    const open = await mkt(env, ['auth', 'login', 'monitor', '--server', openMonitor.url], { stdin: 'anything\n' });
    expect(open.code, open.err).toBe(0);
    expect(open.err).toMatch(/^mkt: warning: the monitor at .* has no API token configured/m);
  });

  it('marketplace: a personal access token is checked; a wrong or revoked one exits 4', async () => {
    const made = await admin(world.dataDir, ['token', 'create', 'ada', '--scope', 'read']);
    expect(made.code, made.err).toBe(0);
    const token = /\bmkt_[A-Za-z0-9_-]+/.exec(made.out)![0];
    const env = home();
    const ok = await mkt(env, ['auth', 'login', 'marketplace', '--server', world.url], { stdin: `${token}\n` });
    expect(ok.code, ok.err).toBe(0);
    expect(ok.err).toContain(`Logged in to marketplace at ${world.url}: user ada (token scope read)`);
    const bad = await mkt(home(), ['auth', 'login', 'marketplace', '--server', world.url], { stdin: `${token.slice(0, -2)}xx\n` });
    expect(bad.code).toBe(4);
    // The route itself: no credential is a 401 with a Bearer challenge, the token names its account.
    const anonymous = await fetch(`${world.url}/api/user`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer /);
    const me = await fetch(`${world.url}/api/user`, { headers: { authorization: `Bearer ${token}` } });
    expect(await me.json()).toMatchObject({ name: 'ada', via: 'token', scope: 'read' });
  });
});

describe('mkt auth status and logout see the sync sign-in (issue 30 item 5)', () => {
  it('status shows the sync session under the marketplace (app, email, device, expiry), never a secret; logout marketplace removes it, files stay 0600', async () => {
    const d = world.device('auth-status');
    const login = await d.mkt(['login', '--app-key', world.appKey, '--email', world.email, '--device', 'laptop'], `${world.password}\n`);
    expect(login.code, login.err).toBe(0);
    const init = await d.mkt(['key', 'init'], `${world.password}\n`);
    expect(init.code, init.err).toBe(0);
    const secrets = Object.values(saved(d.env));
    expect(secrets).toHaveLength(2);

    const json = await mkt(d.env, ['auth', 'status', '--json']);
    expect(json.code, json.err).toBe(0);
    const body = JSON.parse(json.out) as { services: { service: string; sync?: Record<string, unknown>[] }[] };
    const market = body.services.find((s) => s.service === 'marketplace')!;
    expect(market.sync).toEqual([
      {
        server: world.url,
        app_name: 'Notes',
        email: world.email,
        device_id: expect.any(String),
        device_name: 'laptop',
        token: 'file',
        expires_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        expired: false,
        keys_held: true,
      },
    ]);
    expect(Date.parse(market.sync![0]!.expires_at as string)).toBeGreaterThan(Date.now());
    expect(body.services.find((s) => s.service === 'tickets')).not.toHaveProperty('sync');
    const human = await mkt(d.env, ['auth', 'status'], { tty: true });
    expect(human.out).toMatch(/Sync sign-ins/);
    expect(human.out).toMatch(new RegExp(`${world.email}\\s+laptop \\(`));
    for (const secret of secrets) {
      expect(json.out).not.toContain(secret);
      expect(human.out + human.err).not.toContain(secret);
    }

    const out = await mkt(d.env, ['auth', 'logout', 'marketplace']);
    expect(out.code, out.err).toBe(0);
    expect(out.err).toMatch(/and of sync there/);
    expect(saved(d.env)).toEqual({});
    expect(statSync(credentialsFile(d.env)).mode & 0o777).toBe(0o600);
    const profiles = join(d.env.XDG_CONFIG_HOME!, 'mkt', 'sync', 'profiles.json');
    expect(JSON.parse(readFileSync(profiles, 'utf8'))).toEqual({});
    expect(statSync(profiles).mode & 0o777).toBe(0o600);
    expect((await d.mkt(['status'])).code).toBe(4);
    expect((JSON.parse((await mkt(d.env, ['auth', 'status', '--json'])).out) as typeof body).services[0]!.sync).toEqual([]);
    // Nothing is left to log out of.
    expect((await mkt(d.env, ['auth', 'logout', 'marketplace'])).code).toBe(1);
  });

  it('mkt sync logout keeps working on its own', async () => {
    const d = world.device('sync-logout');
    expect((await d.mkt(['login', '--app-key', world.appKey, '--email', world.email, '--device', 'desk'], `${world.password}\n`)).code).toBe(0);
    const out = await d.mkt(['logout']);
    expect(out.code, out.err).toBe(0);
    expect(saved(d.env)).toEqual({});
    expect((await d.mkt(['logout'])).code).toBe(1);
  });
});
