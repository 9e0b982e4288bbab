// Snapshot deadlines on both ends. The sender: a peer that stops reading a snapshot (32 MiB,
// more than the socket buffers of 127.0.0.1 hold) is cut at its read deadline, the lock and the
// copy on disk are released, and the next peer gets its snapshot instead of 429 for ever. The
// receiver: a peer that trickles its snapshot is given up at the download deadline, so it
// cannot hold the node's sync round (and its sync with every other peer), nor can one that
// announces more than a snapshot may take (refused before a byte is read) or sends just over
// the minimum rate for hours (the whole download has a ceiling whatever its size).
import { afterEach, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import { get, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { snapshotRoute, SNAPSHOT_CONTENT_TYPE } from '../../../../daemon/services/tickets/snapshot-route.js';
import { bootstrapFromSnapshot } from '../../../../daemon/services/tickets/bootstrap.js';
import { HybridClock } from '../../../../daemon/services/tickets/hybrid-clock.js';
import { systemClock } from '../../../../src/util/clock.js';
import { SqliteTicketStore } from '../../../../src/store/tickets.js';
import type { Ticket } from '../../../../src/schemas/tickets.js';
import { tempDir } from '../../../helpers/tmp.js';
import { waitFor } from '../../../helpers/wait.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function ticket(i: number): Ticket {
  const id = `e0000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  const stamp = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
  return { id, short_id: id.slice(0, 8), title: `ticket ${i}`, description: `${i} `.repeat(16_000), status: 'open', priority: 'normal', channel: 'api', source: 'web', requester: null, assignee: null, tags: [], created_at: stamp, updated_at: stamp, updated_by: 'n', field_stamps: { base: [stamp, 'n'] } };
}

async function serve(deadline: { minBytesPerSecond: number; graceMs: number }): Promise<{ url: string; dataDir: string }> {
  const dir = tempDir();
  cleanups.push(() => dir.remove());
  const store = new SqliteTicketStore(join(dir.path, 'tickets.db'));
  cleanups.push(() => store.close());
  await store.merge(Array.from({ length: 500 }, (_, i) => ticket(i)), (t) => ({ kind: 'store', ticket: t, asSent: false }));
  const app: FastifyInstance = Fastify();
  snapshotRoute(app, { store, dataDir: dir.path, ...deadline });
  await app.listen({ port: 0, host: '127.0.0.1' });
  cleanups.push(() => app.close());
  return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, dataDir: dir.path };
}

/** Starts a GET and never reads its body; resolves with the response (headers only). */
function stall(url: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = get(`${url}/sync/snapshot`, (res) => {
      res.pause();
      resolve(res);
    });
    req.on('error', reject);
    cleanups.push(() => void req.destroy());
  });
}

/** A whole GET: its status and how many body bytes arrived. */
function fetchAll(url: string): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    get(`${url}/sync/snapshot`, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

describe('GET /sync/snapshot read deadline', () => {
  it('a peer that stops reading loses its connection at the deadline; the next peer is served', async () => {
    // A deadline of about 4 s for every reader: far past what the 429 below and the last whole
    // read take on a loaded machine (a tighter one cut that read in CI), and short enough to wait.
    const { url, dataDir } = await serve({ minBytesPerSecond: 16 * 1024 ** 2, graceMs: 2_000 });
    const stalled = await stall(url);
    expect(stalled.statusCode).toBe(200);
    const announced = Number(stalled.headers['content-length']);
    expect(announced).toBeGreaterThan(30 * 1024 ** 2);
    // Meanwhile another peer is told to come back...
    expect((await fetchAll(url)).status).toBe(429);
    // ...until the deadline cuts the stalled one: then the copy and the lock are gone.
    await waitFor(async () => (readdirSync(dataDir).some((f) => f.startsWith('snapshot-')) ? undefined : true), 'the copy to be removed', 20_000);
    const next = await fetchAll(url);
    expect(next).toEqual({ status: 200, bytes: announced });
  }, 30_000);

  it('a peer that reads at its pace gets the whole file within the deadline', async () => {
    const { url } = await serve({ minBytesPerSecond: 1024 ** 2, graceMs: 10_000 });
    const got = await fetchAll(url);
    expect(got.status).toBe(200);
    expect(got.bytes).toBeGreaterThan(30 * 1024 ** 2);
  }, 30_000);
});

describe('the download deadline of an empty node taking a snapshot', () => {
  it('a peer that trickles its snapshot is given up, and the partial file removed', async () => {
    // Announces 10 MiB and a byte (a deadline that is no whole number of ms), then sends a byte
    // every 100 ms: every chunk in time, the whole never.
    const trickler = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': SNAPSHOT_CONTENT_TYPE, 'content-length': String(10 * 1024 ** 2 + 1) });
      const tick = setInterval(() => res.write('x'), 100);
      res.on('close', () => clearInterval(tick));
    });
    await new Promise<void>((r) => trickler.listen(0, '127.0.0.1', r));
    cleanups.push(
      () =>
        new Promise<void>((r) => {
          trickler.closeAllConnections();
          trickler.close(() => r());
        }),
    );
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const store = new SqliteTicketStore(join(dir.path, 'tickets.db'));
    cleanups.push(() => store.close());
    const t = performance.now();
    const err = await bootstrapFromSnapshot({
      store,
      hlc: new HybridClock(systemClock, undefined, 60_000),
      peer: `http://127.0.0.1:${(trickler.address() as AddressInfo).port}`,
      token: 'x',
      dir: dir.path,
      nodeId: await store.nodeId(),
      now: Date.now(),
      maxSkewMs: 60_000,
      minBytesPerSecond: 10 * 1024 ** 2,
      graceMs: 1_000,
    }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/did not arrive within 2 s/);
    expect(performance.now() - t).toBeLessThan(10_000);
    expect(readdirSync(dir.path).filter((f) => f.startsWith('snapshot-'))).toEqual([]);
  }, 30_000);
});

/**
 * A peer announcing `announced` bytes and sending 64 KiB every 50 ms (1.25 MiB/s: just over the
 * rate the deadline asks for); `written` counts the bytes it got out, `closed` says whether the
 * receiver has hung up.
 */
async function steadyPeer(announced: number): Promise<{ url: string; state: { written: number; closed: boolean } }> {
  const state = { written: 0, closed: false };
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  const peer = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': SNAPSHOT_CONTENT_TYPE, 'content-length': String(announced) });
    const tick = setInterval(() => {
      const part = chunk.subarray(0, Math.min(chunk.length, announced - state.written));
      state.written += part.length;
      if (state.written === announced) res.end(part);
      else res.write(part);
    }, 50);
    res.on('close', () => {
      clearInterval(tick);
      state.closed = true;
    });
  });
  await new Promise<void>((r) => peer.listen(0, '127.0.0.1', r));
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        peer.closeAllConnections();
        peer.close(() => r());
      }),
  );
  return { url: `http://127.0.0.1:${(peer.address() as AddressInfo).port}`, state };
}

/** Starts a bootstrap from `peer` into a fresh store; a cleanup stops it, should it still run. */
async function startBootstrap(peer: string, extra: Partial<Parameters<typeof bootstrapFromSnapshot>[0]> = {}): Promise<{ outcome: () => unknown; dir: string }> {
  const dir = tempDir();
  cleanups.push(() => dir.remove());
  const store = new SqliteTicketStore(join(dir.path, 'tickets.db'));
  cleanups.push(() => store.close());
  const halt = new AbortController();
  let settled: { value: unknown } | undefined;
  const running = bootstrapFromSnapshot({ store, hlc: new HybridClock(systemClock, undefined, 60_000), peer, token: 'x', dir: dir.path, nodeId: await store.nodeId(), now: Date.now(), maxSkewMs: 60_000, signal: halt.signal, ...extra }).then(
    (v) => (settled = { value: v }),
    (e: unknown) => (settled = { value: e }),
  );
  cleanups.push(async () => {
    halt.abort();
    await running;
  });
  return { outcome: () => settled?.value, dir: dir.path };
}

describe('the size and time ceilings of a snapshot download (issue 28)', () => {
  it('a body that fails at once (the connection closed after the headers) leaves no partial file behind', async () => {
    // 8 bytes announced, none sent: the body fails before the download's file was opened on the
    // thread pool, which then created it after the clean-up had run.
    const liar = createNetServer((socket) => {
      socket.once('data', () => socket.end(`HTTP/1.1 200 OK\r\ncontent-type: ${SNAPSHOT_CONTENT_TYPE}\r\ncontent-length: 8\r\nconnection: close\r\n\r\n`));
      socket.on('error', () => undefined);
    });
    await new Promise<void>((r) => liar.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => liar.close(() => r())));
    const url = `http://127.0.0.1:${(liar.address() as AddressInfo).port}`;
    const dirs: string[] = [];
    // Many times over: the race was lost in one attempt of ten or so.
    for (let i = 0; i < 50; i++) {
      const { outcome, dir } = await startBootstrap(url);
      dirs.push(dir);
      expect(await waitFor(async () => outcome(), 'the bootstrap to give up', 15_000)).toBeInstanceOf(Error);
    }
    // Time for any open still queued on the thread pool to land (it took microseconds).
    await new Promise((r) => setTimeout(r, 500));
    expect(dirs.flatMap((d) => readdirSync(d).filter((f) => f.startsWith('snapshot-')))).toEqual([]);
  }, 60_000);

  it('a peer announcing 16 GiB is refused before a byte is read, at the production ceiling', async () => {
    const { url, state } = await steadyPeer(16 * 1024 ** 3);
    const { outcome, dir } = await startBootstrap(url);
    // Today's refusal is at once; the bound only allows for a loaded machine.
    const err = await waitFor(async () => outcome(), 'the bootstrap to give up', 15_000);
    expect((err as Error).message).toMatch(/announced 17179869184 bytes, more than the 4294967296 bytes/);
    await waitFor(async () => state.closed, 'the connection to be closed', 10_000);
    expect(readdirSync(dir).filter((f) => f.startsWith('snapshot-'))).toEqual([]);
  }, 30_000);

  it('an announcement over an injected ceiling is refused, one at it is downloaded', async () => {
    const over = await steadyPeer(256 * 1024 + 1);
    const refused = await startBootstrap(over.url, { maxBytes: 256 * 1024 });
    expect((await waitFor(async () => refused.outcome(), 'the bootstrap to give up', 15_000)) as Error).toHaveProperty('message', expect.stringMatching(/more than the 262144 bytes a snapshot may take/));
    // Exactly at the ceiling: downloaded, then refused as the junk it is, not for its size.
    const at = await steadyPeer(256 * 1024);
    const taken = await startBootstrap(at.url, { maxBytes: 256 * 1024 });
    const err = (await waitFor(async () => taken.outcome(), 'the bootstrap to give up', 15_000)) as Error;
    expect(err.message).toMatch(/not an SQLite database/);
    expect(at.state.written).toBe(256 * 1024);
  }, 30_000);

  it('a peer sending just over the minimum rate is given up at the ceiling on the whole download', async () => {
    // 64 MiB at 1.25 MiB/s: the rate allows 60 s of grace and 64 s more; the ceiling, 1.5 s.
    const { url, state } = await steadyPeer(64 * 1024 ** 2);
    const { outcome, dir } = await startBootstrap(url, { maxDownloadMs: 1_500 });
    const err = (await waitFor(async () => outcome(), 'the bootstrap to give up', 20_000)) as Error;
    expect(err.message).toMatch(/did not arrive within 2 s/);
    await waitFor(async () => state.closed, 'the connection to be closed', 10_000);
    expect(state.written).toBeLessThan(64 * 1024 ** 2);
    expect(readdirSync(dir).filter((f) => f.startsWith('snapshot-'))).toEqual([]);
  }, 40_000);
});
