// Snapshot deadlines on both ends. The sender: a peer that stops reading a snapshot (32 MiB,
// more than the socket buffers of 127.0.0.1 hold) is cut at its read deadline, the lock and the
// copy on disk are released, and the next peer gets its snapshot instead of 429 for ever. The
// receiver: a peer that trickles its snapshot is given up at the download deadline, so it
// cannot hold the node's sync round (and its sync with every other peer).
import { afterEach, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import { get, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:http';
import { snapshotRoute, SNAPSHOT_CONTENT_TYPE } from '../../../daemon/services/tickets/snapshot-route.js';
import { bootstrapFromSnapshot } from '../../../daemon/services/tickets/bootstrap.js';
import { HybridClock } from '../../../daemon/services/tickets/hybrid-clock.js';
import { systemClock } from '../../../src/util/clock.js';
import { SqliteTicketStore } from '../../../src/store/tickets.js';
import type { Ticket } from '../../../src/schemas/tickets.js';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';

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
    const { url, dataDir } = await serve({ minBytesPerSecond: 1024 ** 3, graceMs: 300 });
    const stalled = await stall(url);
    expect(stalled.statusCode).toBe(200);
    const announced = Number(stalled.headers['content-length']);
    expect(announced).toBeGreaterThan(30 * 1024 ** 2);
    // Meanwhile another peer is told to come back...
    expect((await fetchAll(url)).status).toBe(429);
    // ...until the deadline cuts the stalled one: then the copy and the lock are gone.
    await waitFor(async () => (readdirSync(dataDir).some((f) => f.startsWith('snapshot-')) ? undefined : true), 'the copy to be removed', 10_000);
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
