// The idle limit as a sweep (daemon/idle-sweep.ts): real node:http servers on port 0 and real
// sockets, swept by hand against a held clock, so each bound is shown exactly and no test waits
// on how fast the machine is.
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { IdleSweep, sweepIdleConnections, sweepInterval } from '../../daemon/idle-sweep.js';

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A server on port 0 whose connections `sweep` tracks, and the server's side of each. */
async function serve(sweep: IdleSweep | undefined, handler: Handler): Promise<{ server: Server; port: number; sockets: Socket[] }> {
  const server = createServer({ keepAliveTimeout: 60_000 }, handler);
  const sockets: Socket[] = [];
  server.on('connection', (s: Socket) => {
    sockets.push(s);
    sweep?.track(s);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
  return { server, port: (server.address() as AddressInfo).port, sockets };
}

async function client(port: number): Promise<{ socket: Socket; closed: Promise<void> }> {
  const socket = connect(port, '127.0.0.1');
  cleanups.push(() => void socket.destroy());
  socket.on('error', () => undefined);
  await new Promise<void>((r) => socket.once('connect', r));
  return { socket, closed: new Promise<void>((r) => socket.once('close', () => r())) };
}

const post = (length: number): string => `POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: ${length}\r\n\r\n`;

/** A handler that reads its body and reports each chunk, answering once the body is whole. */
function reader(chunks: (n: number) => void): Handler {
  return (req, res) => {
    req.on('data', (c: Buffer) => chunks(c.length));
    req.on('end', () => res.end('ok'));
  };
}

/** Resolves at the `n`th call of the returned callback. */
function counter(): { seen: (k: number) => void; at(n: number): Promise<void> } {
  let count = 0;
  const waiting: [number, () => void][] = [];
  return {
    seen(k) {
      count += k;
      for (const [n, r] of waiting) if (count >= n) r();
    },
    at: (n) => new Promise<void>((r) => (count >= n ? r() : waiting.push([n, r]))),
  };
}

describe('IdleSweep', () => {
  /** A request in progress on a swept server (a 500 ms limit, its clock held): its body's first byte read, then swept once. */
  async function busy(): Promise<{ clock: { at: number }; sweep: IdleSweep; bytes: ReturnType<typeof counter>; server: Socket; c: Awaited<ReturnType<typeof client>> }> {
    const clock = { at: 1_000 };
    const sweep = new IdleSweep(500, () => clock.at);
    const bytes = counter();
    const { port, sockets } = await serve(sweep, reader(bytes.seen));
    const c = await client(port);
    c.socket.write(post(10) + 'a');
    await bytes.at(1);
    sweep.sweep(); // the request is in progress: its counts are recorded now
    return { clock, sweep, bytes, server: sockets[0]!, c };
  }

  it('closes a busy connection once no byte has moved for the limit, not a millisecond before', async () => {
    const { clock, sweep, server, c } = await busy();
    clock.at += 499;
    sweep.sweep();
    expect(server.destroyed).toBe(false);
    clock.at += 1;
    sweep.sweep();
    expect(server.destroyed).toBe(true);
    await c.closed;
    expect(sweep.size).toBe(0);
  });

  it('a byte read between two sweeps starts the limit over', async () => {
    const { clock, sweep, bytes, server, c } = await busy();
    for (let i = 2; i <= 5; i++) {
      clock.at += 400;
      c.socket.write('b');
      await bytes.at(i);
      sweep.sweep();
      expect(server.destroyed).toBe(false);
    }
    clock.at += 499;
    sweep.sweep();
    expect(server.destroyed).toBe(false);
    clock.at += 1;
    sweep.sweep();
    await c.closed;
  });

  it('an answer its client stops reading is closed once the writes stall', async () => {
    let clock = 0;
    const sweep = new IdleSweep(500, () => clock);
    let stalled!: () => void;
    const stall = new Promise<void>((r) => (stalled = r));
    const piece = Buffer.alloc(64 * 1024, 'x');
    const { port, sockets } = await serve(sweep, (_req, res) => {
      // Writes until the socket's buffers are full, then waits for a drain that never comes.
      while (res.write(piece));
      stalled();
    });
    const c = await client(port);
    c.socket.pause();
    c.socket.write('GET /big HTTP/1.1\r\nHost: a\r\n\r\n');
    await stall;
    sweep.sweep();
    clock += 500;
    sweep.sweep();
    expect(sockets[0]!.destroyed).toBe(true);
    c.socket.resume();
    await c.closed;
  });

  it('leaves a connection between requests to the keep-alive timeout, however long it waits', async () => {
    let clock = 0;
    const sweep = new IdleSweep(500, () => clock);
    const { port, sockets } = await serve(sweep, reader(() => undefined));
    const c = await client(port);
    let text = '';
    const answered = new Promise<void>((r) => c.socket.on('data', (d: Buffer) => ((text += d.toString()), text.endsWith('ok') && r())));
    c.socket.write(post(2) + 'ab');
    await answered;
    // node detaches the answer from its socket once the answer is written, before the client reads it.
    sweep.sweep();
    clock += 60_000;
    sweep.sweep();
    clock += 60_000;
    sweep.sweep();
    expect(sockets[0]!.destroyed).toBe(false);
    expect(sweep.size).toBe(1);
  });

  it('a connection closed by its client is forgotten', async () => {
    const sweep = new IdleSweep(500, () => 0);
    const { server, port } = await serve(sweep, reader(() => undefined));
    const accepted = new Promise<Socket>((r) => server.once('connection', r));
    const c = await client(port);
    const socket = await accepted;
    expect(sweep.size).toBe(1);
    const gone = new Promise<void>((r) => socket.once('close', () => r()));
    c.socket.destroy();
    await gone;
    expect(sweep.size).toBe(0);
  });
});

describe('sweepIdleConnections', () => {
  it('sweeps a quarter of the limit apart, between 50 ms and 5 s', () => {
    expect(sweepInterval(60_000)).toBe(5_000);
    expect(sweepInterval(2_000)).toBe(500);
    expect(sweepInterval(100)).toBe(50);
  });

  it('closes a silent request on a real server by itself', async () => {
    const server = createServer((req, res) => req.on('end', () => res.end('ok')).resume());
    const idle = sweepIdleConnections(server, 200);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
    const c = await client((server.address() as AddressInfo).port);
    c.socket.write(post(10) + 'a');
    // Bound by what is checked: the close comes from the sweep, however late its timer runs.
    await c.closed;
    expect(idle.size).toBe(0);
  });
});
