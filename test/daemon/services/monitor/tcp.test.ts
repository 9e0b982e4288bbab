// Issue 31, "TCP targets": checkTcp against real sockets on loopback. A connection that opens is
// operational (response time = connect time); refused, silent, mismatched, closed early or endless
// answers are down with the reason; every check closes its socket (the servers count closes).
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { checkTcp, MAX_ANSWER_BYTES, shown } from '../../../../daemon/services/monitor/checks/tcp.js';
import { parseMonitorConfig, type TargetConfig } from '../../../../src/config/monitor.js';
import { freePort, waitFor } from '../../../helpers/wait.js';

const now = (): number => Date.now();
const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of closers.reverse()) await c();
});

interface TcpServer {
  port: number;
  accepted: number;
  closed: number;
  /** Everything each connection sent, in order of arrival. */
  received: string[];
}

/** A loopback TCP server that counts connections opened and closed (so a leaked socket shows). */
async function tcpServer(onConnection: (sock: Socket, srv: TcpServer) => void, host = '127.0.0.1'): Promise<TcpServer> {
  const srv: TcpServer = { port: 0, accepted: 0, closed: 0, received: [] };
  const sockets = new Set<Socket>();
  const server = createServer((sock) => {
    srv.accepted++;
    sockets.add(sock);
    const i = srv.received.push('') - 1;
    sock.on('data', (d) => (srv.received[i] += d.toString('utf8')));
    sock.on('error', () => undefined);
    sock.on('close', () => {
      srv.closed++;
      sockets.delete(sock);
    });
    onConnection(sock, srv);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  srv.port = (server.address() as AddressInfo).port;
  closers.push(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  });
  return srv;
}

/** A target read through the real config parser, as `mkt serve monitor` reads it. */
function target(url: string, extra = '', timeout = '2s'): TargetConfig {
  const cfg = parseMonitorConfig(`targets:\n  db:\n    url: ${JSON.stringify(url)}\n    timeout: ${timeout}\n${extra}`);
  return cfg.targets[0]!;
}

/** The check left no socket behind: the server saw each connection it accepted close. */
async function allClosed(srv: TcpServer): Promise<void> {
  await waitFor(async () => srv.accepted > 0 && srv.closed === srv.accepted, `every connection to port ${srv.port} closed`);
}

/** A tiny Redis-like server: `PING\r\n` is answered `+PONG\r\n`, anything else `-ERR`. */
const redisLike = (sock: Socket): void => {
  let buf = '';
  sock.on('data', (d) => {
    buf += d.toString();
    let nl: number;
    while ((nl = buf.indexOf('\r\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 2);
      sock.write(line === 'PING' ? '+PONG\r\n' : `-ERR unknown command '${line}'\r\n`);
    }
  });
};

describe('connect only', () => {
  it('an open port is operational, the response time is the connect time (at least 1 ms)', async () => {
    const srv = await tcpServer(() => undefined);
    const snap = await checkTcp(target(`tcp://127.0.0.1:${srv.port}`), now);
    expect(snap).toMatchObject({ status: 'operational' });
    expect(snap.error).toBeUndefined();
    expect(snap.response_time_ms).toBeGreaterThanOrEqual(1);
    expect(Number.isInteger(snap.response_time_ms)).toBe(true);
    await allClosed(srv);
  });

  it('a refused port is down with "connection refused"', async () => {
    const port = await freePort();
    const snap = await checkTcp(target(`tcp://127.0.0.1:${port}`), now);
    expect(snap).toMatchObject({ status: 'down', response_time_ms: 0, error: 'connection refused' });
  });

  it('a host that does not resolve is down naming the host and the resolver error', async () => {
    const snap = await checkTcp(target('tcp://nothing.invalid:6379', '', '10s'), now);
    expect(snap.status).toBe('down');
    expect(snap.error).toMatch(/^cannot resolve nothing\.invalid \((ENOTFOUND|EAI_AGAIN)\)$/);
  });

  it('an IPv6 literal (tcp://[::1]:port) is connected to', async (ctx) => {
    let srv: TcpServer;
    try {
      srv = await tcpServer(() => undefined, '::1');
    } catch {
      return ctx.skip(); // no IPv6 loopback on this machine
    }
    const t = target(`tcp://[::1]:${srv.port}`);
    expect(t.tcp?.host).toBe('::1');
    const snap = await checkTcp(t, now);
    expect(snap.status).toBe('operational');
    await allClosed(srv);
  });

  it('a port whose accept queue is full (the handshake never completes) times out "connecting"', async () => {
    // A child listens with a backlog of 1 and then blocks its event loop, so it never accepts:
    // the kernel queues a connection or two, then drops further SYNs. The checks that still
    // connect fill the queue; the first one that cannot must time out while connecting.
    const child: ChildProcess = spawn(
      process.execPath,
      [
        '-e',
        `const s = require('node:net').createServer();
         s.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () =>
           process.stdout.write(s.address().port + '\\n', () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)));`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    closers.push(async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGKILL');
        await gone;
      }
    });
    const port = await new Promise<number>((resolve) => child.stdout!.once('data', (d) => resolve(Number(String(d).trim()))));
    const t = target(`tcp://127.0.0.1:${port}`, '', '300ms');
    const seen: string[] = [];
    for (let i = 0; i < 10; i++) {
      const snap = await checkTcp(t, now);
      seen.push(snap.status);
      if (snap.status === 'down') {
        expect(snap.error).toBe('timed out after 300 ms connecting');
        break;
      }
    }
    expect(seen.at(-1)).toBe('down');
    expect(seen.slice(0, -1).every((s) => s === 'operational')).toBe(true);
  });
});

describe('send and expect', () => {
  it('send "PING\\r\\n", expect "+PONG" against a Redis-like server: operational, what was sent arrived', async () => {
    const srv = await tcpServer(redisLike);
    const t = target(`tcp://127.0.0.1:${srv.port}`, '    send: "PING\\r\\n"\n    expect: "+PONG"\n');
    const snap = await checkTcp(t, now);
    expect(snap).toMatchObject({ status: 'operational' });
    expect(snap.response_time_ms).toBeGreaterThanOrEqual(1);
    await allClosed(srv);
    expect(srv.received).toEqual(['PING\r\n']);
  });

  it('a regular expression expect (/^\\+pong\\r$/im) matches', async () => {
    const srv = await tcpServer(redisLike);
    const snap = await checkTcp(target(`tcp://127.0.0.1:${srv.port}`, '    send: "PING\\r\\n"\n    expect: "/^\\\\+pong\\\\r$/im"\n'), now);
    expect(snap.status).toBe('operational');
    await allClosed(srv);
  });

  it('a regular expression that does not match is down once the peer closes, showing the answer', async () => {
    const srv = await tcpServer((sock) => sock.end('+PONG\r\n'));
    const snap = await checkTcp(target(`tcp://127.0.0.1:${srv.port}`, '    expect: "/^-ERR/"\n'), now);
    expect(snap).toMatchObject({ status: 'down', error: 'expected /^-ERR/, got "+PONG\\r\\n" (the peer closed the connection)' });
  });

  it('an expect over a banner (no send): the server speaks first', async () => {
    const srv = await tcpServer((sock) => sock.write('SSH-2.0-OpenSSH_9.6\r\n'));
    const snap = await checkTcp(target(`tcp://127.0.0.1:${srv.port}`, '    expect: "SSH-2.0"\n'), now);
    expect(snap.status).toBe('operational');
    await allClosed(srv);
    expect(srv.received).toEqual(['']);
  });

  it('send without expect is operational once written, without waiting for an answer', async () => {
    const srv = await tcpServer(() => undefined); // never answers
    const snap = await checkTcp(target(`tcp://127.0.0.1:${srv.port}`, '    send: "QUIT\\r\\n"\n', '20s'), now);
    expect(snap.status).toBe('operational');
    await allClosed(srv);
    expect(srv.received).toEqual(['QUIT\r\n']);
  });

  it('a mismatched answer, then the peer closes: down with what came, escaped', async () => {
    const srv = await tcpServer((sock) => sock.once('data', () => sock.end("-ERR unknown command 'PING'\r\n")));
    const snap = await checkTcp(target(`tcp://127.0.0.1:${srv.port}`, '    send: "PING\\r\\n"\n    expect: "+PONG"\n'), now);
    expect(snap).toMatchObject({ status: 'down', response_time_ms: 0, error: `expected "+PONG", got "-ERR unknown command 'PING'\\r\\n" (the peer closed the connection)` });
  });

  it('a mismatched answer on a connection kept open: down at the timeout, naming the expectation and what came', async () => {
    const srv = await tcpServer((sock) => sock.once('data', () => sock.write('-ERR wrong\r\n')));
    const snap = await checkTcp(target(`tcp://127.0.0.1:${srv.port}`, '    send: "PING\\r\\n"\n    expect: "+PONG"\n', '300ms'), now);
    expect(snap).toMatchObject({ status: 'down', error: 'timed out after 300 ms waiting for "+PONG" (got "-ERR wrong\\r\\n")' });
    await allClosed(srv);
  });

  it('a silent port that accepts and never answers: down after the timeout, socket closed', async () => {
    const srv = await tcpServer(() => undefined);
    const snap = await checkTcp(target(`tcp://127.0.0.1:${srv.port}`, '    send: "PING\\r\\n"\n    expect: "+PONG"\n', '300ms'), now);
    expect(snap).toMatchObject({ status: 'down', response_time_ms: 0, error: 'timed out after 300 ms waiting for "+PONG"' });
    await allClosed(srv);
  });

  it('a peer that closes at once, before any answer: down, "got nothing"', async () => {
    const srv = await tcpServer((sock) => sock.end());
    const snap = await checkTcp(target(`tcp://127.0.0.1:${srv.port}`, '    send: "PING\\r\\n"\n    expect: "+PONG"\n', '20s'), now);
    expect(snap.status).toBe('down');
    // The close can overtake the write (then the write is what fails): both say the peer went away.
    expect(snap.error).toMatch(/^(expected "\+PONG", got nothing \(the peer closed the connection\)|connection reset while waiting for "\+PONG")$/);
  });

  it('a peer that resets the connection: down, "connection reset"', async () => {
    const srv = await tcpServer((sock) => sock.once('data', () => sock.resetAndDestroy()));
    const snap = await checkTcp(target(`tcp://127.0.0.1:${srv.port}`, '    send: "PING\\r\\n"\n    expect: "+PONG"\n', '20s'), now);
    expect(snap).toMatchObject({ status: 'down', error: 'connection reset while waiting for "+PONG"' });
  });

  it('a 10 MiB answer without the expected text: down at the 64 KiB cap, long before the answer ends', async () => {
    let finished = false;
    const srv = await tcpServer((sock) => {
      const chunk = Buffer.alloc(64 * 1024, 'x');
      let sent = 0;
      const more = (): void => {
        while (sent < 160 && sock.write(chunk)) sent++;
        if (sent < 160) sock.once('drain', more);
        else sock.end(() => (finished = true));
      };
      more();
    });
    // The timeout is long and the peer never closes early: only the cap can end this check.
    const snap = await checkTcp(target(`tcp://127.0.0.1:${srv.port}`, '    expect: "+PONG"\n', '20s'), now);
    expect(snap.status).toBe('down');
    expect(snap.error).toBe(`expected "+PONG", got "${'x'.repeat(100)}"... (no match in the first ${MAX_ANSWER_BYTES / 1024} KiB)`);
    await allClosed(srv);
    expect(finished).toBe(false);
  });
});

describe('stop and display', () => {
  it('the stop signal (engine stop) ends a waiting check at once', async () => {
    const srv = await tcpServer(() => undefined);
    const halt = new AbortController();
    const pending = checkTcp(target(`tcp://127.0.0.1:${srv.port}`, '    expect: "+PONG"\n', '60s'), now, halt.signal);
    await waitFor(async () => srv.accepted === 1, 'the check connected');
    halt.abort();
    expect(await pending).toMatchObject({ status: 'down', error: 'check stopped' });
    await allClosed(srv);
  });

  it('a check started after stop does not connect', async () => {
    const srv = await tcpServer(() => undefined);
    const halt = new AbortController();
    halt.abort();
    expect(await checkTcp(target(`tcp://127.0.0.1:${srv.port}`), now, halt.signal)).toMatchObject({ status: 'down', error: 'check stopped' });
    expect(srv.accepted).toBe(0);
  });

  it('shown() quotes, escapes control and bidi characters, and shortens to 100 characters', () => {
    expect(shown('-ERR\r\n')).toBe('"-ERR\\r\\n"');
    expect(shown('\u001b[2J\u202eevil')).toBe('"\\u001b[2J\\u202eevil"');
    expect(shown('y'.repeat(300))).toBe(`"${'y'.repeat(100)}"...`);
    expect(shown(`${'a'.repeat(99)}😀`)).toBe(`"${'a'.repeat(99)}"...`);
  });
});
