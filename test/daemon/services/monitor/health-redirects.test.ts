// Issue 28 (finding 4) against real local servers: a monitored endpoint's redirect cannot send the
// health check into the monitor's own network (loopback, private, link-local), the connection goes
// to the address that was checked, and only the configured origin's body becomes public `details`.
// Tests have no public DNS, so a "public" target is [::1] classified public by the injected policy.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { checkHealth } from '../../../../daemon/services/monitor/checks/health.js';
import { addressClass, type Lookup } from '../../../../daemon/services/monitor/checks/address.js';
import type { HopPolicy } from '../../../../daemon/services/monitor/checks/http.js';
import type { TargetConfig } from '../../../../src/config/monitor.js';

const closers: (() => Promise<void>)[] = [];
const now = (): number => Date.now();
afterAll(async () => {
  for (const c of closers) await c();
});

interface Endpoint {
  origin: string;
  port: number;
  seen: string[];
}

/** A real HTTP server on `host`; `handle` answers, or returns false for a JSON `{"status":"ok", where}`. */
async function endpoint(host: '127.0.0.1' | '::1', handle: (req: IncomingMessage, res: ServerResponse) => boolean = () => false, port = 0): Promise<Endpoint> {
  const seen: string[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(req.url ?? '');
    res.on('error', () => undefined);
    if (!handle(req, res)) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok', where: `${host}${req.url}` }));
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
  closers.push(() => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))));
  const p = (server.address() as AddressInfo).port;
  return { origin: host === '::1' ? `http://[::1]:${p}` : `http://127.0.0.1:${p}`, port: p, seen };
}

/**
 * An endpoint on 127.0.0.1 and one on ::1 with the same port number. The kernel picks 127.0.0.1's
 * port; that number can be taken on ::1 by another process (test files run in parallel), so a
 * taken one is tried again with a new port rather than failing the test.
 */
async function samePortPair(): Promise<{ internal: Endpoint; outside: Endpoint }> {
  for (let attempt = 1; ; attempt++) {
    const internal = await endpoint('127.0.0.1');
    try {
      return { internal, outside: await endpoint('::1', undefined, internal.port) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt === 50) throw err;
    }
  }
}

const redirect = (to: string, status = 302) => (_req: IncomingMessage, res: ServerResponse): boolean => (res.writeHead(status, { location: to }).end(), true);

function target(url: string, extra: Partial<TargetConfig> = {}): TargetConfig {
  return { name: 't', label: 't', url, intervalMs: 60_000, timeoutMs: 2000, headers: {}, routes: [], dns: [], ...extra };
}

/** ::1 plays a public address; names resolve through `names` (counting lookups), nothing else resolves. */
function publicLoopback(names: Record<string, string[] | (() => string[])> = {}): HopPolicy & { lookups: string[] } {
  const lookups: string[] = [];
  const lookup: Lookup = async (host) => {
    lookups.push(host);
    const a = names[host];
    if (a === undefined) throw Object.assign(new Error('no such host'), { code: 'ENOTFOUND' });
    return typeof a === 'function' ? a() : a;
  };
  return { lookups, lookup, classify: (ip) => (ip === '::1' ? 'public' : addressClass(ip)) };
}

describe('a redirect off a public target into the monitor network is not followed', () => {
  it('302 to http://127.0.0.1:<internal>/...: down with a short public reason, no details, the internal service never asked', async () => {
    const internal = await endpoint('127.0.0.1', (_q, res) => (res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok","admin_token":"internal-secret"}'), true));
    const site = await endpoint('::1', redirect(`http://127.0.0.1:${internal.port}/internal/status?token=abc#x`));
    const s = await checkHealth(target(`${site.origin}/health`), now, undefined, publicLoopback());
    expect(s).toEqual({
      status: 'down',
      checked_at: s.checked_at,
      response_time_ms: 0,
      error: `redirect to http://127.0.0.1:${internal.port}/internal/status not followed: it resolves to 127.0.0.1, not a public address`,
    });
    expect(internal.seen).toEqual([]);
  });

  it('every spelling of the monitor host is refused: numeric, mapped IPv6, 0.0.0.0, localhost, a name resolving there', async () => {
    const internal = await endpoint('127.0.0.1');
    const p = internal.port;
    const cases: [string, string][] = [
      [`http://2130706433:${p}/`, 'it resolves to 127.0.0.1'],
      [`http://0x7f.1:${p}/`, 'it resolves to 127.0.0.1'],
      [`http://[::ffff:127.0.0.1]:${p}/`, 'it resolves to ::ffff:7f00:1'],
      [`http://0.0.0.0:${p}/`, 'it resolves to 0.0.0.0'],
      [`http://localhost:${p}/`, 'it resolves to 127.0.0.1'],
      [`http://internal.example:${p}/`, 'it resolves to 127.0.0.1'],
      // One non-public address among several refuses: no picking the good one.
      [`http://mixed.example:${p}/`, 'it resolves to 127.0.0.1'],
      // Off-machine addresses only through names the injected lookup answers: were the rule
      // broken, a literal would send a packet off this machine (the sandbox forbids it), a name
      // fails to resolve in the old code and nothing leaves (the literals' classes are tested below).
      [`http://metadata.example/latest/meta-data/`, 'it resolves to 169.254.169.254'],
      [`http://private.example:${p}/`, 'it resolves to 10.1.2.3'],
      [`http://nowhere.example:${p}/`, 'cannot resolve it (ENOTFOUND)'],
    ];
    const policy = publicLoopback({ localhost: ['127.0.0.1'], 'internal.example': ['127.0.0.1'], 'mixed.example': ['::1', '127.0.0.1'], 'metadata.example': ['169.254.169.254'], 'private.example': ['10.1.2.3'] });
    for (const [to, reason] of cases) {
      const site = await endpoint('::1', redirect(to, 307));
      const s = await checkHealth(target(`${site.origin}/`, { timeoutMs: 1000 }), now, undefined, policy);
      expect(s.status, to).toBe('down');
      expect(s.error, to).toMatch(/^redirect to http:\/\/\S+ not followed: /);
      expect(s.error, to).toContain(reason);
      expect(s, to).not.toHaveProperty('details');
    }
    expect(internal.seen).toEqual([]);
  });

  it('the connection goes to the address checked: a name answering public then loopback (DNS rebinding) is asked once', async () => {
    // The same port on "public" ::1: a second lookup would land on the internal service instead.
    const { internal, outside } = await samePortPair();
    let answers = 0;
    const policy = publicLoopback({ 'rebind.example': () => (answers++ === 0 ? ['::1'] : ['127.0.0.1']) });
    const site = await endpoint('::1', redirect(`http://rebind.example:${internal.port}/health`));
    const s = await checkHealth(target(`${site.origin}/`), now, undefined, policy);
    expect(s.status).toBe('operational');
    expect(policy.lookups).toEqual(['rebind.example']);
    expect(outside.seen).toEqual(['/health']);
    expect(internal.seen).toEqual([]);
  });

  it('a redirect to another public origin is followed and judged by its HTTP status only: its body is not kept or believed', async () => {
    const other = await endpoint('::1', (_q, res) => (res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"down","note":"from elsewhere"}'), true));
    const site = await endpoint('::1', redirect(`http://other.example:${other.port}/health`));
    const s = await checkHealth(target(`${site.origin}/`), now, undefined, publicLoopback({ 'other.example': ['::1'] }));
    expect(s.status).toBe('operational');
    expect(s).not.toHaveProperty('details');
    expect(s).not.toHaveProperty('error');
    expect(other.seen).toEqual(['/health']);
    const failing = await endpoint('::1', (_q, res) => (res.writeHead(503, { 'content-type': 'application/json' }).end('{"status":"down","note":"from elsewhere"}'), true));
    const site2 = await endpoint('::1', redirect(`http://[::1]:${failing.port}/`));
    expect(await checkHealth(target(`${site2.origin}/`), now, undefined, publicLoopback())).toEqual({ status: 'down', checked_at: expect.any(String), response_time_ms: 0, error: 'HTTP 503' });
  });
});

describe('a target on loopback or a private range is a local set-up', () => {
  it('a redirect to another loopback port is followed, without details from that origin', async () => {
    const other = await endpoint('127.0.0.1');
    const site = await endpoint('127.0.0.1', redirect(`${other.origin}/health`));
    const s = await checkHealth(target(`${site.origin}/start`), now);
    expect(s.status).toBe('operational');
    expect(s).not.toHaveProperty('details');
    expect(other.seen).toEqual(['/health']);
  });

  it('link-local (cloud metadata) and unspecified addresses stay refused even then', async () => {
    // The real classes; the off-machine addresses come from names (see above), never literals.
    const names: Record<string, string[]> = { 'metadata.example': ['169.254.169.254'], 'linklocal.example': ['fe80::1'] };
    const policy: HopPolicy = {
      lookup: async (host) => names[host] ?? Promise.reject(Object.assign(new Error('no such host'), { code: 'ENOTFOUND' })),
      classify: addressClass,
    };
    for (const to of ['http://metadata.example/latest/meta-data/', 'http://linklocal.example/', 'http://0.0.0.0:1/']) {
      const site = await endpoint('127.0.0.1', redirect(to));
      const s = await checkHealth(target(`${site.origin}/`, { timeoutMs: 1000 }), now, undefined, policy);
      expect(s.status, to).toBe('down');
      expect(s.error, to).toMatch(/^redirect to http:\/\/\S+ not followed: it resolves to \S+, not a public address$/);
    }
  });

  it('a same-origin redirect keeps the details', async () => {
    const site = await endpoint('127.0.0.1', (req, res) => (req.url === '/old' ? (res.writeHead(301, { location: '/health' }).end(), true) : false));
    const s = await checkHealth(target(`${site.origin}/old`), now);
    expect(s).toMatchObject({ status: 'operational', details: { status: 'ok', where: '127.0.0.1/health' } });
  });

  it('classifies addresses: public, local (loopback, private, shared, ULA) or other', () => {
    for (const ip of ['8.8.8.8', '2606:4700:4700::1111']) expect(addressClass(ip), ip).toBe('public');
    for (const ip of ['127.0.0.1', '10.0.0.1', '172.16.5.4', '192.168.1.1', '100.64.0.1', '::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1']) expect(addressClass(ip), ip).toBe('local');
    for (const ip of ['169.254.169.254', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::', 'fe80::1', 'ff02::1', '192.0.2.1', 'not-an-ip']) expect(addressClass(ip), ip).toBe('other');
  });
});

describe('an endpoint cannot hold the check past its timeout', () => {
  /** A 200 whose body trickles one byte every 20 ms, for ever. */
  const trickle = (_q: IncomingMessage, res: ServerResponse): boolean => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"status":"ok","pad":"');
    const t = setInterval(() => res.write('x'), 20);
    res.on('close', () => clearInterval(t));
    return true;
  };

  it('a body that trickles is cut at the timeout (down, timed out), on the target and after a redirect', async () => {
    const slow = await endpoint('127.0.0.1', trickle);
    const started = Date.now();
    const s = await checkHealth(target(`${slow.origin}/`, { timeoutMs: 300 }), now);
    expect(s).toMatchObject({ status: 'down', error: 'timed out after 300 ms' });
    // Generous bound (a loaded machine): what matters is that it ends, not in how many ms.
    expect(Date.now() - started).toBeLessThan(10_000);
    const site = await endpoint('127.0.0.1', redirect(`${slow.origin}/`));
    const viaRedirect = await checkHealth(target(`${site.origin}/`, { timeoutMs: 300 }), now);
    // Another origin's body is not read at all: its status line decides, at once.
    expect(viaRedirect.status).toBe('operational');
    expect(viaRedirect).not.toHaveProperty('details');
  });

  it('headers that never come and a resolver that never answers are cut at the timeout too', async () => {
    const mute = await endpoint('127.0.0.1', () => true);
    expect(await checkHealth(target(`${mute.origin}/`, { timeoutMs: 300 }), now)).toMatchObject({ status: 'down', error: 'timed out after 300 ms' });
    const site = await endpoint('::1', redirect('http://hang.example/'));
    const hang: HopPolicy = { lookup: (host) => (host === 'hang.example' ? new Promise<string[]>(() => undefined) : Promise.resolve(['::1'])), classify: () => 'public' };
    expect(await checkHealth(target(`${site.origin}/`, { timeoutMs: 300 }), now, undefined, hang)).toMatchObject({ status: 'down', error: 'timed out after 300 ms' });
  });
});
