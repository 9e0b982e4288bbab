// Alert channels against real local receivers (issue 32): a signed webhook verified as a receiver
// would, PagerDuty trigger then resolve on one dedup_key, ntfy's headers, chat bodies, email into a
// real SMTP server (no header injection through a label), a redirect not followed, a receiver
// that never answers cut off, retries with one `alert channel failing` line per incident.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { SMTPServer } from 'smtp-server';
import { AlertSender, type AlertEvent } from '../../../../daemon/services/monitor/alerts.js';
import { signature } from '../../../../daemon/services/monitor/channels/webhook.js';
import { createLogger } from '../../../../daemon/logger.js';
import type { AlertChannel } from '../../../../src/config/monitor.js';
import { parseMonitorConfig } from '../../../../src/config/monitor.js';
import { SqliteMonitorStore } from '../../../../src/store/monitor-sqlite.js';
import type { Incident } from '../../../../src/store/monitor.js';
import { listenLocal } from '../../../helpers/local-http.js';
import { tempDir } from '../../../helpers/tmp.js';
import { makeCert } from '../../../helpers/monitor-fixtures.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
const dir = tempDir();
afterAll(() => dir.remove());

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** An HTTP receiver on 127.0.0.1 that records each POST and answers `status` (a Location with a 3xx). */
async function receiver(status = 202): Promise<{ url: string; got: Received[] }> {
  const got: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(status, status >= 300 && status < 400 ? { location: '/elsewhere' } : {}).end(status === 202 ? '{"status":"success"}' : '');
    });
  });
  const base = await listenLocal(server, (c) => cleanups.push(c));
  return { url: base, got };
}

function capture(): { logger: ReturnType<typeof createLogger>; lines: () => Record<string, unknown>[]; text: () => string } {
  let out = '';
  const stream = new Writable({ write: (c: Buffer, _e, cb) => ((out += c.toString()), cb()) });
  return { logger: createLogger({ level: 'debug', stream, pretty: false }), lines: () => out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>), text: () => out };
}

const incident = (id: number, over: Partial<Incident> = {}): Incident => ({ id, status: 'open', started_at: '2026-11-24T10:00:00.000Z', ended_at: null, cause: 'HTTP 503', checks: 3, duration_s: null, ...over });
const opened = (id: number, over: Partial<AlertEvent> = {}): AlertEvent => ({ event: 'incident.opened', instance: 'mon-1', target: 'api', label: 'Public API', incident: incident(id), ...over });
const resolved = (id: number): AlertEvent => ({ event: 'incident.resolved', instance: 'mon-1', target: 'api', label: 'Public API', incident: incident(id, { status: 'resolved', ended_at: '2026-11-24T10:05:00.000Z', duration_s: 300 }) });
const NOW = Date.parse('2026-11-24T10:02:00.000Z');

function sender(channels: AlertChannel[], o: { backoff?: number[]; timeoutMs?: number; logger?: ReturnType<typeof createLogger>; env?: NodeJS.ProcessEnv; store?: SqliteMonitorStore; now?: () => number; tlsCa?: string } = {}): AlertSender {
  return new AlertSender(channels, o.logger ?? capture().logger, o.backoff ?? [], { now: o.now ?? (() => NOW), timeoutMs: o.timeoutMs ?? 5000, env: o.env ?? {}, ...(o.store ? { store: o.store } : {}), ...(o.tlsCa ? { tlsCa: o.tlsCa } : {}), config: { targets: [], publicUrl: 'https://status.example.com' } });
}

/** What a receiver does with `Mkt-Signature`: recompute, compare in constant time, refuse a stale t. */
function verify(header: string | undefined, body: string, secret: string, nowSeconds: number, toleranceS = 300): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? '');
  if (!m) return false;
  const t = Number(m[1]);
  if (Math.abs(nowSeconds - t) > toleranceS) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest();
  return timingSafeEqual(expected, Buffer.from(m[2]!, 'hex'));
}

describe('webhook', () => {
  it('posts the event as JSON signed with Mkt-Signature, which a receiver verifies; a changed body, another secret or a stale t fail', async () => {
    const r = await receiver(204);
    const realNow = Date.now();
    const out = await sender([{ name: 'hook', type: 'webhook', format: 'json', url: `${r.url}/hook?token=abc`, secret: 'whsec-123' }], { now: () => realNow }).sendNow(opened(7, { reminder: 2, affected: ['db'] }));
    expect(out).toEqual([expect.objectContaining({ channel: 'hook', ok: true, attempts: 1 })]);
    const [got] = r.got;
    expect(got!.headers['content-type']).toBe('application/json');
    const body = JSON.parse(got!.body) as AlertEvent;
    expect(body).toMatchObject({ event: 'incident.opened', target: 'api', reminder: 2, affected: ['db'], incident: { id: 7 } });
    const sig = got!.headers['mkt-signature'] as string;
    const nowS = Math.floor(realNow / 1000);
    expect(verify(sig, got!.body, 'whsec-123', nowS)).toBe(true);
    expect(verify(sig, got!.body.replace('api', 'apx'), 'whsec-123', nowS)).toBe(false);
    expect(verify(sig, got!.body, 'another', nowS)).toBe(false);
    expect(verify(sig, got!.body, 'whsec-123', nowS + 3600)).toBe(false);
    expect(sig).toBe(signature('whsec-123', nowS, got!.body));
  });

  it('without a secret: no signature header', async () => {
    const r = await receiver(200);
    await sender([{ name: 'plain', type: 'webhook', format: 'json', url: r.url }]).sendNow(opened(1));
    expect(r.got[0]!.headers['mkt-signature']).toBeUndefined();
  });

  it('a 302 answer is a failure, "redirect not followed": the Location gets no request', async () => {
    const r = await receiver(302);
    const [o] = await sender([{ name: 'moved', type: 'webhook', format: 'json', url: `${r.url}/hook` }]).sendNow(opened(1));
    expect(o).toMatchObject({ ok: false, attempts: 1, error: 'HTTP 302: redirect not followed' });
    expect(r.got.map((g) => g.path)).toEqual(['/hook']);
  });

  it('a receiver that takes the connection and never answers is cut off at the timeout', async () => {
    const sockets: Socket[] = [];
    const silent = createTcpServer((s) => void sockets.push(s));
    await new Promise<void>((res) => silent.listen(0, '127.0.0.1', res));
    cleanups.push(() => new Promise<void>((res) => (sockets.forEach((s) => s.destroy()), silent.close(() => res()))));
    const started = Date.now();
    const [o] = await sender([{ name: 'silent', type: 'webhook', format: 'json', url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/` }], { timeoutMs: 300 }).sendNow(opened(1));
    expect(o).toMatchObject({ ok: false, error: 'no answer within 300 ms' });
    expect(sockets.length).toBe(1);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('retries with backoff; a failing channel is logged once per incident (not per retry, not per event), by name only; the store keeps the last send and the timeline says so', async () => {
    const r = await receiver(500);
    const ok = await receiver(204);
    const store = new SqliteMonitorStore(join(dir.path, 'retries.db'));
    cleanups.push(() => store.close());
    const inc = await store.openIncident('api', '2026-11-24T10:00:00.000Z', 'HTTP 503', 3);
    const other = await store.openIncident('web', '2026-11-24T10:00:00.000Z', 'HTTP 503', 3);
    const log = capture();
    const secretUrl = `${r.url}/T000/B000/XXXXsecretXXXX`;
    const s = sender(
      [
        { name: 'broken', type: 'slack', url: secretUrl },
        { name: 'fine', type: 'webhook', format: 'json', url: ok.url },
      ],
      { backoff: [10, 20], logger: log.logger, store, now: () => Date.now() },
    );
    const first = await s.sendNow(opened(inc.id));
    expect(first.find((o) => o.channel === 'broken')).toMatchObject({ ok: false, attempts: 3, error: 'HTTP 500' });
    expect(r.got).toHaveLength(3);
    await s.sendNow(resolved(inc.id));
    expect(r.got).toHaveLength(6);
    await s.sendNow({ ...opened(other.id), target: 'web' });
    const failing = log.lines().filter((l) => l.msg === 'alert channel failing');
    expect(failing.map((l) => [l.channel, l.incident])).toEqual([['broken', inc.id], ['broken', other.id]]);
    expect(failing[0]).toMatchObject({ type: 'slack', event: 'incident.opened', target: 'api', err: 'HTTP 500' });
    expect(log.text()).not.toContain('XXXXsecretXXXX');
    expect(log.text()).not.toContain(r.url);

    const sends = await store.alertSends.all();
    expect(sends.get('broken')).toMatchObject({ event: 'incident.opened', target: 'web', incidentId: other.id, ok: false, attempts: 3, error: 'HTTP 500' });
    expect(sends.get('fine')).toMatchObject({ ok: true, attempts: 1 });
    const events = (await store.incidentEvents(inc.id)).map((e) => [e.kind, e.detail]);
    expect(events).toEqual(expect.arrayContaining([['alerted', 'fine'], ['alert_failed', 'broken: HTTP 500'], ['alerted', 'resolved: fine'], ['alert_failed', 'resolved: broken: HTTP 500']]));
  });
});

describe('routing', () => {
  it("a target's alerts: [names] picks channels; [] sends none; no key sends to all", async () => {
    const a = await receiver(204);
    const b = await receiver(204);
    const cfg = parseMonitorConfig(
      `alerts:\n  - {name: a, url: ${a.url}}\n  - {name: b, url: ${b.url}}\ntargets:\n  api: {url: http://127.0.0.1/h, alerts: [b]}\n  quiet: {url: http://127.0.0.1/h, alerts: []}\n  all: {url: http://127.0.0.1/h}\n`,
    );
    const s = new AlertSender(cfg.alerts, capture().logger, [], { config: cfg, env: {} });
    await s.sendNow(opened(1));
    await s.sendNow({ ...opened(2), target: 'quiet' });
    await s.sendNow({ ...opened(3), target: 'all' });
    expect(a.got.map((g) => (JSON.parse(g.body) as AlertEvent).incident.id)).toEqual([3]);
    expect(b.got.map((g) => (JSON.parse(g.body) as AlertEvent).incident.id)).toEqual([1, 3]);
  });
});

describe('pagerduty', () => {
  it('trigger, then resolve with the same dedup_key; summary, severity and source in the payload', async () => {
    const r = await receiver(202);
    const ch: AlertChannel = { name: 'pager', type: 'pagerduty', routingKey: 'R0UT1NGKEY0000000000000000000000', url: `${r.url}/v2/enqueue`, severity: 'critical' };
    const s = sender([ch]);
    await s.sendNow(opened(42, { affected: ['db'] }));
    await s.sendNow(resolved(42));
    await s.sendNow(opened(43));
    const bodies = r.got.map((g) => JSON.parse(g.body) as Record<string, any>); // eslint-disable-line @typescript-eslint/no-explicit-any -- a receiver reads fields by name
    expect(bodies[0]).toMatchObject({ routing_key: ch.routingKey, event_action: 'trigger', payload: { summary: 'Public API is down: HTTP 503', severity: 'critical', source: 'mon-1', component: 'api', custom_details: { affected: ['db'] } } });
    expect(bodies[1]).toMatchObject({ routing_key: ch.routingKey, event_action: 'resolve', dedup_key: bodies[0]!.dedup_key });
    expect(bodies[0]!.dedup_key).toBe('mkt-mon-1-api-42');
    expect(bodies[2]!.dedup_key).not.toBe(bodies[0]!.dedup_key);
  });
});

describe('ntfy', () => {
  it('a text body with the details; Title, Priority and Tags headers, one line even from a label with CR LF', async () => {
    const r = await receiver(200);
    const [o] = await sender([{ name: 'phone', type: 'ntfy', url: `${r.url}/mkt-ops`, token: 'tk_abcdef' }]).sendNow(opened(5, { label: 'API\r\nX-Injected: yes', reminder: 3 }));
    expect(o!.ok).toBe(true);
    const g = r.got[0]!;
    expect(g.path).toBe('/mkt-ops');
    expect(g.headers.title).toBe('[mkt] API X-Injected: yes is still down (reminder 3)');
    expect(g.headers['x-injected']).toBeUndefined();
    expect(g.headers).toMatchObject({ priority: '5', tags: 'rotating_light', authorization: 'Bearer tk_abcdef', click: 'https://status.example.com/api/status/api' });
    expect(g.body).toContain('Error:     HTTP 503');
    expect(g.body).toContain('Down for:  2 min so far');
    await sender([{ name: 'phone', type: 'ntfy', url: r.url }]).sendNow({ ...resolved(5), label: 'Zürich' });
    expect(r.got[1]!.headers).toMatchObject({ priority: '3', tags: 'white_check_mark', title: `=?UTF-8?B?${Buffer.from('[mkt] Zürich recovered').toString('base64')}?=` });
  });
});

describe('chat', () => {
  it('slack {text}, discord {content}, teams an adaptive card: each with the reminder and the affected children', async () => {
    const r = await receiver(200);
    const e = opened(9, { reminder: 1, affected: ['db', 'cache'], label: 'API <!channel>' });
    await sender([
      { name: 's', type: 'slack', url: `${r.url}/s` },
      { name: 'd', type: 'discord', url: `${r.url}/d` },
      { name: 't', type: 'teams', url: `${r.url}/t` },
    ]).sendNow(e);
    const by = Object.fromEntries(r.got.map((g) => [g.path, JSON.parse(g.body)]));
    expect(by['/s'].text).toBe(':red_circle: API &lt;!channel&gt; (api) on mon-1 is still down (reminder 1): HTTP 503\nAffected: db, cache\nhttps://status.example.com/api/status/api');
    expect(by['/d']).toMatchObject({ content: expect.stringContaining('🔴 API <!channel> (api) on mon-1 is still down (reminder 1)'), allowed_mentions: { parse: [] } });
    expect(by['/t'].attachments[0].content.body[0].text).toContain('Affected: db, cache');
  });
});

describe('email', () => {
  interface Mail {
    raw: string;
    from: string;
    to: string[];
    user?: string;
  }
  async function smtp(password: string): Promise<{ port: number; mails: Mail[] }> {
    const mails: Mail[] = [];
    const server = new SMTPServer({
      // A plain-text SMTP server: STARTTLS off here (nodemailer would upgrade when offered).
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      logger: false,
      onAuth(auth, _session, cb) {
        if (auth.username === 'mkt' && auth.password === password) cb(null, { user: auth.username });
        else cb(new Error('Invalid username or password'));
      },
      onData(stream, session, cb) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          mails.push({ raw: Buffer.concat(chunks).toString('utf8'), from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((a) => a.address), user: session.user as string | undefined });
          cb();
        });
      },
    });
    await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
    cleanups.push(() => new Promise<void>((res) => server.close(() => res())));
    return { port: (server.server.address() as AddressInfo).port, mails };
  }
  const headersOf = (raw: string): string => raw.slice(0, raw.indexOf('\r\n\r\n'));

  it('a mail with a subject naming the label and the transition, a plain-text body; a label with CR LF Bcc: adds no header and no recipient', async () => {
    const srv = await smtp('s3cret-pw');
    const [o] = await sender([{ name: 'ops-mail', type: 'email', smtp: `smtp://mkt:s3cret-pw@127.0.0.1:${srv.port}`, from: 'mkt@example.com', to: ['ops@example.com'] }]).sendNow(
      opened(11, { label: 'API\r\nBcc: x@evil.example', affected: ['db'] }),
    );
    expect(o).toMatchObject({ ok: true });
    const m = srv.mails[0]!;
    expect(m.to).toEqual(['ops@example.com']);
    expect(m.from).toBe('mkt@example.com');
    expect(m.user).toBe('mkt');
    const head = headersOf(m.raw);
    expect(head).toMatch(/^Subject: \[mkt\] API Bcc: x@evil.example is down$/m);
    expect(head).not.toMatch(/^Bcc:/im);
    expect(m.raw).toContain('Error:     HTTP 503');
    expect(m.raw).toContain('Affected:  db');
    expect(m.raw).toContain('Dashboard: https://status.example.com/');
    expect(m.raw).not.toContain('s3cret-pw');
  });

  it('smtps:// speaks TLS from the first byte and smtp:// upgrades with STARTTLS when offered, each verifying the server certificate', async () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const pem = makeCert(dir.path);
    for (const implicit of [true, false]) {
      const seen: { secure: boolean; raw: string }[] = [];
      const server = new SMTPServer({
        secure: implicit,
        key: pem.key,
        cert: pem.cert,
        authOptional: true,
        logger: false,
        onData(stream, session, cb) {
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => {
            seen.push({ secure: session.secure, raw: Buffer.concat(chunks).toString('utf8') });
            cb();
          });
        },
      });
      // The refused handshake below ends the connection mid-TLS: the server reports it as an error.
      const handshakes: string[] = [];
      server.on('error', (err: Error) => handshakes.push(err.message));
      await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
      cleanups.push(() => new Promise<void>((res) => server.close(() => res())));
      const port = (server.server.address() as AddressInfo).port;
      const ch: AlertChannel = { name: 'ops-mail', type: 'email', smtp: `${implicit ? 'smtps' : 'smtp'}://127.0.0.1:${port}`, from: 'mkt@example.com', to: ['ops@example.com'] };
      // A certificate no CA vouches for: refused, nothing delivered.
      const [untrusted] = await sender([ch]).sendNow(opened(21));
      expect(untrusted!.ok).toBe(false);
      expect(seen).toEqual([]);
      const [o] = await sender([ch], { tlsCa: pem.cert }).sendNow(opened(21));
      expect(o).toMatchObject({ ok: true });
      expect(seen).toHaveLength(1);
      expect(seen[0]!.secure).toBe(true);
      expect(seen[0]!.raw).toMatch(/^Subject: \[mkt\] Public API is down$/m);
    }
  });

  it('the password from smtp_password_env; unset, the send fails saying which variable, without a password in the error', async () => {
    const srv = await smtp('env-pw-123');
    const ch: AlertChannel = { name: 'ops-mail', type: 'email', smtp: `smtp://mkt@127.0.0.1:${srv.port}`, smtpPasswordEnv: 'MKT_SMTP_PASSWORD', from: 'mkt@example.com', to: ['ops@example.com', 'oncall@example.com'] };
    const [ok] = await sender([ch], { env: { MKT_SMTP_PASSWORD: 'env-pw-123' } }).sendNow(resolved(12));
    expect(ok).toMatchObject({ ok: true });
    expect(srv.mails[0]!.to).toEqual(['ops@example.com', 'oncall@example.com']);
    expect(headersOf(srv.mails[0]!.raw)).toMatch(/^Subject: \[mkt\] Public API recovered$/m);
    expect(srv.mails[0]!.raw).toContain('Down for:  5 min');
    const [missing] = await sender([ch]).sendNow(resolved(12));
    expect(missing).toMatchObject({ ok: false, error: 'the environment variable MKT_SMTP_PASSWORD (smtp_password_env) is not set' });
    const [wrong] = await sender([ch], { env: { MKT_SMTP_PASSWORD: 'wrong-pw-999' } }).sendNow(resolved(12));
    expect(wrong!.ok).toBe(false);
    expect(wrong!.error).toMatch(/^SMTP EAUTH/);
    expect(wrong!.error).not.toContain('wrong-pw-999');
  });
});
