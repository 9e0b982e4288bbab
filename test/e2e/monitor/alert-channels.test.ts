// Alert channels end to end (issue 32): a real monitor whose target goes down sends a mail that a
// real SMTP server receives, a signed webhook and a PagerDuty trigger; `mkt monitor alerts --json`
// shows each channel's last send (a redirecting one failed); the webhook's URL token, the SMTP
// password and the routing key appear nowhere in the daemon's log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { run } from '../../../commands/root/run.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { healthServer, type HealthServer } from '../../helpers/monitor-fixtures.js';
import { startMonitor, type MonitorNode } from '../../helpers/monitor-node.js';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';

const URL_TOKEN = 'Zq8hookTOKENv3Lx';
const SMTP_PASSWORD = 'smtpPASSWORDk29';
const ROUTING_KEY = 'R0UTINGkey00000000000000000000ab';
const HOOK_SECRET = 'whsec_e2eSECRET77';

const dir = tempDir();
let up: HealthServer;
let mon: MonitorNode;
const mails: { raw: string; to: string[] }[] = [];
const posts: { path: string; headers: IncomingHttpHeaders; body: string }[] = [];
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  up = await healthServer();
  const smtp = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth: (a, _s, cb) => (a.username === 'alerts' && a.password === SMTP_PASSWORD ? cb(null, { user: 'alerts' }) : cb(new Error('Invalid username or password'))),
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push({ raw: Buffer.concat(chunks).toString('utf8'), to: session.envelope.rcptTo.map((r) => r.address) });
        cb();
      });
    },
  });
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise((r) => smtp.close(() => r())));
  const http = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      posts.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      if (req.url?.startsWith('/moved')) res.writeHead(302, { location: '/hook' }).end();
      else res.writeHead(202).end('{}');
    });
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise((r) => (http.closeAllConnections(), http.close(() => r()))));
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const smtpPort = (smtp.server.address() as AddressInfo).port;
  mon = await startMonitor(
    dir.path,
    `name: e2e-alerts\ntoken: mon-token\nrate_limit: { requests: 100000 }\npublic_url: https://status.example.com\n` +
      `alerts:\n` +
      `  - {name: ops-mail, type: email, smtp: "smtp://alerts@127.0.0.1:${smtpPort}", smtp_password_env: MKT_SMTP_PASSWORD, from: mkt@example.com, to: [ops@example.com]}\n` +
      `  - {name: hook, url: "${base}/hook?token=${URL_TOKEN}", secret: ${HOOK_SECRET}}\n` +
      `  - {name: pager, type: pagerduty, routing_key: ${ROUTING_KEY}, url: "${base}/v2/enqueue"}\n` +
      `  - {name: moved, url: "${base}/moved/${URL_TOKEN}"}\n` +
      `targets:\n  api:\n    label: Public API\n    url: ${up.url}\n    interval: 100ms\n    timeout: 2s\n    incident_threshold: 1\n    alerts: [ops-mail, hook, pager, moved]\n`,
    { alertBackoffMs: [20] },
    { MKT_SMTP_PASSWORD: SMTP_PASSWORD },
  );
}, 60_000);

afterAll(async () => {
  await mon?.stop();
  await up?.close();
  for (const c of closers) await c();
  dir.remove();
});

describe('alert channels with a real monitor (issue 32)', () => {
  it('a target that goes down: the mail arrives, a signed webhook and a PagerDuty trigger; mkt monitor alerts --json shows the last sends; no secret in the log', async () => {
    await waitFor(async () => (await mon.get('/api/status/api')).body.latest, 'the first check');
    up.mode = 'failing';
    await waitFor(async () => mails.length >= 1, 'the mail', 30_000);
    expect(mails[0]!.to).toEqual(['ops@example.com']);
    expect(mails[0]!.raw).toMatch(/^Subject: \[mkt\] Public API is down$/m);
    expect(mails[0]!.raw).toContain('Status:    https://status.example.com/api/status/api');

    const hook = await waitFor(async () => posts.find((p) => p.path.startsWith('/hook')), 'the webhook', 30_000);
    const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(hook.headers['mkt-signature'] as string)!;
    expect(Math.abs(Date.now() / 1000 - Number(m[1]))).toBeLessThan(300);
    expect(timingSafeEqual(createHmac('sha256', HOOK_SECRET).update(`${m[1]}.${hook.body}`).digest(), Buffer.from(m[2]!, 'hex'))).toBe(true);
    expect(JSON.parse(hook.body)).toMatchObject({ event: 'incident.opened', target: 'api', label: 'Public API' });

    const pd = await waitFor(async () => posts.find((p) => p.path === '/v2/enqueue'), 'the PagerDuty event', 30_000);
    expect(JSON.parse(pd.body)).toMatchObject({ routing_key: ROUTING_KEY, event_action: 'trigger', payload: { source: 'e2e-alerts', severity: 'critical' } });

    // The redirecting channel: tried twice (one retry), the Location never followed.
    const alerts = async (): Promise<{ code: number; json: { channels: { name: string; type: string; last: Record<string, unknown> | null }[] } }> => {
      const io = fakeIO({ env: { XDG_CONFIG_HOME: dir.path, MKT_CREDENTIAL_STORE: 'file', MKT_MONITOR_URL: mon.url, MKT_MONITOR_TOKEN: 'mon-token' } });
      const code = await run(['monitor', 'alerts', '--json'], io);
      return { code, json: code === 0 ? JSON.parse(io.out()) : { channels: [] } };
    };
    const shown = await waitFor(async () => {
      const r = await alerts();
      return r.json.channels.every((c) => c.last !== null) ? r : undefined;
    }, 'every channel sent once', 30_000);
    expect(shown.code).toBe(0);
    const by = Object.fromEntries(shown.json.channels.map((c) => [c.name, c]));
    expect(Object.keys(by)).toEqual(['ops-mail', 'hook', 'pager', 'moved']);
    expect(by['ops-mail']).toMatchObject({ type: 'email', last: { event: 'incident.opened', target: 'api', ok: true, attempts: 1, error: null } });
    expect(by.hook).toMatchObject({ type: 'webhook', last: { ok: true } });
    expect(by.pager).toMatchObject({ type: 'pagerduty', last: { ok: true } });
    expect(by.moved).toMatchObject({ type: 'webhook', last: { ok: false, attempts: 2, error: 'HTTP 302: redirect not followed' } });
    expect(posts.filter((p) => p.path.startsWith('/moved'))).toHaveLength(2);
    expect(JSON.stringify(shown.json)).not.toContain(URL_TOKEN);

    // The human view: one line per channel.
    const io = fakeIO({ env: { XDG_CONFIG_HOME: dir.path, MKT_CREDENTIAL_STORE: 'file', MKT_MONITOR_URL: mon.url, MKT_MONITOR_TOKEN: 'mon-token' } });
    expect(await run(['monitor', 'alerts'], io)).toBe(0);
    const lines = io.out().trim().split('\n').map((l) => l.split('\t'));
    expect(lines.map((l) => [l[0], l[2]])).toEqual([['ops-mail', 'ok'], ['hook', 'ok'], ['pager', 'ok'], ['moved', 'failed: HTTP 302: redirect not followed']]);

    const failing = mon.logs.filter((l) => l.includes('alert channel failing'));
    expect(failing).toHaveLength(1);
    expect(JSON.parse(failing[0]!)).toMatchObject({ channel: 'moved', err: 'HTTP 302: redirect not followed' });
    const log = mon.logs.join('\n');
    for (const secret of [URL_TOKEN, SMTP_PASSWORD, ROUTING_KEY, HOOK_SECRET]) expect(log).not.toContain(secret);
  });
});
