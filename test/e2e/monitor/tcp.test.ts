// Issue 31, "TCP targets", end to end: a real monitor polls tcp:// targets on loopback servers;
// GET /api/status and /api/status/{target} show them operational with the connect time, then
// down with the reason once the server is gone or answers wrong; /metrics and the dashboard list them.
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';
import { startMonitor, type MonitorNode } from '../../helpers/monitor-node.js';

const dir = tempDir();
let mon: MonitorNode;
let port: { server: Server; port: number; sockets: Set<Socket> };
let cache: { server: Server; port: number; sockets: Set<Socket> };
/** What the Redis-like server answers to PING: a healthy `+PONG`, or an error (then it hangs up). */
let pingAnswer = '+PONG\r\n';

async function listen(onConnection: (sock: Socket) => void): Promise<{ server: Server; port: number; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((sock) => {
    sockets.add(sock);
    sock.on('error', () => undefined);
    sock.on('close', () => sockets.delete(sock));
    onConnection(sock);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port, sockets };
}

async function shut(s: { server: Server; sockets: Set<Socket> } | undefined): Promise<void> {
  if (!s?.server.listening) return;
  const closed = new Promise<void>((r) => s.server.close(() => r()));
  for (const sock of s.sockets) sock.destroy();
  await closed;
}

beforeAll(async () => {
  port = await listen(() => undefined);
  cache = await listen((sock) =>
    sock.on('data', (d) => {
      if (!d.toString().includes('PING\r\n')) return;
      if (pingAnswer.startsWith('+')) sock.write(pingAnswer);
      else sock.end(pingAnswer);
    }),
  );
  mon = await startMonitor(
    dir.path,
    `
name: mon-tcp
token: mon-token
dashboard: true
rate_limit: { requests: 1000000 }
targets:
  port:
    label: Plain port
    url: tcp://127.0.0.1:${port.port}
    interval: 100ms
    timeout: 2s
  cache:
    label: Cache
    url: tcp://127.0.0.1:${cache.port}
    send: "PING\\r\\n"
    expect: "+PONG"
    interval: 100ms
    timeout: 2s
`,
  );
});

afterAll(async () => {
  await mon?.stop();
  await shut(port);
  await shut(cache);
  dir.remove();
});

describe('tcp:// targets in a running monitor', () => {
  it('both are operational with the connect time as response time, listed by GET /api/status', async () => {
    const all = await waitFor(async () => {
      const b = (await mon.get('/api/status')).body;
      return b.targets?.port?.latest && b.targets?.cache?.latest ? b : undefined;
    }, 'a check of both tcp targets');
    for (const name of ['port', 'cache']) {
      const latest = all.targets[name].latest;
      expect(latest).toMatchObject({ status: 'operational' });
      expect(latest.response_time_ms).toBeGreaterThanOrEqual(1);
      expect(latest.error).toBeUndefined();
    }
    const one = (await mon.get('/api/status/cache')).body;
    expect(one).toMatchObject({ label: 'Cache', latest: { status: 'operational' } });
  });

  it('/metrics and the dashboard treat them like any target', async () => {
    const metrics = (await mon.get('/metrics')).body as string;
    expect(metrics).toMatch(/^mkt_monitor_target_up\{target="port"\} 1$/m);
    expect(metrics).toMatch(/^mkt_monitor_target_up\{target="cache"\} 1$/m);
    const page = (await mon.get('/', null)).body as string;
    expect(page).toContain('Plain port');
    expect(page).toContain('Cache');
  });

  it('a server that answers -ERR and hangs up: down, naming what was expected and what came', async () => {
    pingAnswer = '-ERR loading the dataset in memory\r\n';
    const latest = await waitFor(async () => {
      const l = (await mon.get('/api/status/cache')).body.latest;
      return l?.status === 'down' ? l : undefined;
    }, 'cache down');
    expect(latest).toMatchObject({ response_time_ms: 0, error: 'expected "+PONG", got "-ERR loading the dataset in memory\\r\\n" (the peer closed the connection)' });
  });

  it('a server that is gone: down with "connection refused"', async () => {
    await shut(port);
    // A check in flight as the server went away sees its connection reset; every check after it is refused.
    const latest = await waitFor(async () => {
      const l = (await mon.get('/api/status/port')).body.latest;
      return l?.status === 'down' && l.error === 'connection refused' ? l : undefined;
    }, 'port down, connection refused');
    expect(latest).toMatchObject({ response_time_ms: 0, error: 'connection refused' });
    const recent = (await mon.get('/api/status/port')).body.recent as { status: string; error?: string }[];
    for (const s of recent.filter((x) => x.status === 'down')) expect(['connection refused', 'connection reset']).toContain(s.error);
    const metrics = (await mon.get('/metrics')).body as string;
    expect(metrics).toMatch(/^mkt_monitor_target_up\{target="port"\} 0$/m);
  });
});
