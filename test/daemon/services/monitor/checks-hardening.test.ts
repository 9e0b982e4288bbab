// Issue 11 (defect 9) against real local servers: a WHOIS referral cannot send the monitor to
// loopback, private addresses or other ports, and a health check's configured headers do not
// follow a redirect to another origin (scheme, host and port); a same-origin redirect keeps them.
import { createServer as createHttp, type IncomingHttpHeaders } from 'node:http';
import { createServer as createTcp, type AddressInfo, type Server } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { checkWhois, isLoopbackServer, referralTarget } from '../../../../daemon/services/monitor/checks/whois.js';
import { isPublicAddress } from '../../../../daemon/services/monitor/checks/address.js';
import { checkHealth } from '../../../../daemon/services/monitor/checks/health.js';
import type { TargetConfig } from '../../../../src/config/monitor.js';

const closers: (() => Promise<void>)[] = [];
const now = (): number => Date.now();
afterAll(async () => {
  for (const c of closers) await c();
});

/** A fake WHOIS server: answers every query with `answer`, and records what it was asked. */
async function whois(answer: string): Promise<{ address: string; queries: string[] }> {
  const queries: string[] = [];
  const server: Server = createTcp((sock) =>
    sock.once('data', (d) => {
      queries.push(d.toString().trim());
      sock.end(answer);
    }),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise((r) => server.close(() => r())));
  return { address: `127.0.0.1:${(server.address() as AddressInfo).port}`, queries };
}

const expiry = (): string => new Date(Date.now() + 90 * 86_400_000).toISOString().slice(0, 10) + 'T00:00:00Z';

describe('WHOIS referrals are restricted (a remote answer chooses the hop)', () => {
  it('from a configured server off loopback, a referral to loopback (by address, by name, on another port) is not followed', async () => {
    // Tests send traffic to loopback only, so "off loopback" is the mode a configured server
    // decides (isLoopbackServer), exercised through referralTarget with that mode.
    expect(isLoopbackServer('whois.iana.org')).toBe(false);
    expect(isLoopbackServer('whois.iana.org:43')).toBe(false);
    expect(isLoopbackServer('127.0.0.1:4343')).toBe(true);
    expect(isLoopbackServer('localhost:4343')).toBe(true);
    expect(await referralTarget('127.0.0.1:4343', false)).toEqual({ ok: false, reason: 'an IP address, not a host name' });
    expect(await referralTarget('localhost', false, async () => ['127.0.0.1'])).toEqual({ ok: false, reason: 'it resolves to 127.0.0.1, not a public address' });
    expect(await referralTarget('localhost:4343', false, async () => ['127.0.0.1'])).toEqual({ ok: false, reason: 'port 4343: WHOIS referrals are followed on port 43 only' });
  });

  it('from a configured server on loopback (local tests), a referral to a private address or a name resolving to one is not followed', async () => {
    const toPrivate = await whois('refer: 10.0.0.7\r\n');
    const r = await checkWhois({ domain: 'example.test', server: toPrivate.address, warnDays: 30 }, 2000, now);
    expect(r).toMatchObject({ server: toPrivate.address, expires_at: null, warning: true, error: 'referral to "10.0.0.7" not followed: an IP address, not a host name' });

    const toName = await whois('refer: whois.internal.test\r\n');
    const lookup = async (host: string): Promise<string[]> => (host === 'whois.internal.test' ? ['10.1.2.3'] : []);
    const n = await checkWhois({ domain: 'example.test', server: toName.address, warnDays: 30 }, 2000, now, lookup);
    expect(n.error).toBe('referral to "whois.internal.test" not followed: it resolves to 10.1.2.3, not a public address');

    const withUser = await whois('refer: user@whois.example.com\r\n');
    expect((await checkWhois({ domain: 'example.test', server: withUser.address, warnDays: 30 }, 2000, now)).error).toBe(
      'referral to "user@whois.example.com" not followed: not a host name with an optional port',
    );
  });

  it('the normal path still works: a loopback configured server refers to a loopback registry, by address or by name', async () => {
    const registry = await whois(`Registrar: Ref Registrar\r\nRegistry Expiry Date: ${expiry()}\r\n`);
    const iana = await whois(`refer: ${registry.address}\r\n`);
    const r = await checkWhois({ domain: 'example.test', server: iana.address, warnDays: 30 }, 2000, now);
    expect(r).toMatchObject({ server: registry.address, referred_by: [iana.address], registrar: 'Ref Registrar', warning: false });
    const port = registry.address.split(':')[1]!;
    const byName = await whois(`refer: whois.registry.test:${port}\r\n`);
    const n = await checkWhois({ domain: 'example.test', server: byName.address, warnDays: 30 }, 2000, now, async () => ['127.0.0.1']);
    expect(n).toMatchObject({ server: `whois.registry.test:${port}`, registrar: 'Ref Registrar', warning: false });
    expect(n).not.toHaveProperty('error');
  });

  it('off loopback, a public host name on port 43 is allowed and the checked address is the one connected to', async () => {
    expect(await referralTarget('whois.verisign-grs.com', false, async () => ['192.30.45.30'])).toEqual({ ok: true, host: '192.30.45.30', port: 43 });
    expect(await referralTarget('whois.verisign-grs.com:43', false, async () => ['2620:74:20::30'])).toEqual({ ok: true, host: '2620:74:20::30', port: 43 });
    expect(await referralTarget('whois.example.com:4343', false, async () => ['192.30.45.30'])).toMatchObject({ ok: false });
    // One non-public address among several is enough to refuse (no choosing the good one to connect to).
    expect(await referralTarget('whois.example.com', false, async () => ['192.30.45.30', '169.254.169.254'])).toMatchObject({ ok: false, reason: 'it resolves to 169.254.169.254, not a public address' });
    expect(await referralTarget('[::1]:43', false)).toMatchObject({ ok: false });
    expect(await referralTarget('127.0.0.1:4343', true)).toEqual({ ok: true, host: '127.0.0.1', port: 4343 });
  });

  it('classifies addresses: public unicast only', () => {
    for (const ip of ['8.8.8.8', '192.30.45.30', '2620:74:20::30', '2606:4700:4700::1111']) expect(isPublicAddress(ip), ip).toBe(true);
    for (const ip of ['127.0.0.1', '10.0.0.1', '172.16.5.4', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', '::ffff:10.0.0.1', '::ffff:127.0.0.1', 'fd00::1', 'fe80::1', 'ff02::1', 'not-an-ip']) {
      expect(isPublicAddress(ip), ip).toBe(false);
    }
  });
});

describe('health check: configured headers stay on their origin across redirects', () => {
  async function recorder(handler: (url: string, res: import('node:http').ServerResponse) => boolean): Promise<{ origin: string; seen: { url: string; headers: IncomingHttpHeaders }[] }> {
    const seen: { url: string; headers: IncomingHttpHeaders }[] = [];
    const server = createHttp((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      if (!handler(req.url ?? '', res)) res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise((r) => server.close(() => r())));
    return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
  }

  function target(url: string): TargetConfig {
    return { name: 't', label: 't', url, intervalMs: 60_000, timeoutMs: 2000, headers: { 'x-api-key': 'k-secret', authorization: 'Bearer t-secret' }, routes: [], dns: [] };
  }

  it('a redirect to another port (another origin) does not carry the custom headers; the first hop had them', async () => {
    const other = await recorder(() => false);
    const first = await recorder((url, res) => (url === '/start' ? (res.writeHead(302, { location: `${other.origin}/health` }).end(), true) : false));
    const s = await checkHealth(target(`${first.origin}/start`), now);
    expect(s.status).toBe('operational');
    expect(first.seen[0]!.headers).toMatchObject({ 'x-api-key': 'k-secret', authorization: 'Bearer t-secret' });
    expect(other.seen).toHaveLength(1);
    expect(other.seen[0]!.headers['x-api-key']).toBeUndefined();
    expect(other.seen[0]!.headers.authorization).toBeUndefined();
    expect(other.seen[0]!.headers['user-agent']).toBe('mkt-monitor');
  });

  it('once dropped they stay dropped, even when the chain comes back to the first origin', async () => {
    let firstOrigin = '';
    const other = await recorder((url, res) => (url === '/bounce' ? (res.writeHead(302, { location: `${firstOrigin}/health` }).end(), true) : false));
    const first = await recorder((url, res) => (url === '/start' ? (res.writeHead(307, { location: `${other.origin}/bounce` }).end(), true) : false));
    firstOrigin = first.origin;
    expect((await checkHealth(target(`${first.origin}/start`), now)).status).toBe('operational');
    expect(first.seen.map((h) => [h.url, h.headers['x-api-key']])).toEqual([
      ['/start', 'k-secret'],
      ['/health', undefined],
    ]);
  });

  it('a same-origin redirect keeps them; a redirect loop is still reported', async () => {
    const one = await recorder((url, res) => {
      if (url === '/old') return res.writeHead(301, { location: '/health' }).end(), true;
      if (url === '/loop') return res.writeHead(302, { location: '/loop' }).end(), true;
      return false;
    });
    expect((await checkHealth(target(`${one.origin}/old`), now)).status).toBe('operational');
    expect(one.seen.map((h) => [h.url, h.headers['x-api-key'], h.headers.authorization])).toEqual([
      ['/old', 'k-secret', 'Bearer t-secret'],
      ['/health', 'k-secret', 'Bearer t-secret'],
    ]);
    expect(await checkHealth(target(`${one.origin}/loop`), now)).toMatchObject({ status: 'down', error: 'redirect loop' });
  });
});
