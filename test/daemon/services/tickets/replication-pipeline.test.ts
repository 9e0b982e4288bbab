// Pull pages are asked for one ahead (docs/tickets.md, sync): the next page is requested while
// the current one merges, never more than one ahead; the cursor moves only after a page is
// stored, so a failed merge or a restart resumes after the last stored page; a pull that fails
// while a page merges is the round's error, not an unhandled rejection; stopping lets the page
// asked for finish and asks for no other; a peer without has_more gets one pull per round.
// A fake peer on node:http (in a worker thread where the merge blocks this one, as SQLite
// does) and an in-memory store that records what happens in which order.
import { createServer, type Server } from 'node:http';
import { Writable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../../daemon/logger.js';
import { HybridClock } from '../../../../daemon/services/tickets/hybrid-clock.js';
import { EPOCH, Replicator } from '../../../../daemon/services/tickets/replication.js';
import type { Ticket } from '../../../../src/schemas/tickets.js';
import type { Combine, MergeResult, TicketStore } from '../../../../src/store/tickets.js';
import { LateArrivals } from '../../../../src/store/late-arrivals.js';
import { systemClock } from '../../../../src/util/clock.js';

const PEER_NODE = 'peer-node-0000';
const T0 = Date.parse('2025-06-01T08:00:00.000Z');
const silent = createLogger({ level: 'silent', stream: new Writable({ write: (_c, _e, cb) => cb() }), pretty: false });

function copy(ms: number): Ticket {
  const at = new Date(ms).toISOString();
  const id = randomUUID();
  return { id, short_id: id.slice(0, 8), title: `t ${ms}`, description: '', status: 'open', priority: 'normal', channel: 'api', source: 'manual', requester: null, assignee: null, tags: [], created_at: at, updated_at: at, updated_by: PEER_NODE, field_stamps: { base: [at, PEER_NODE] } };
}

/** `n` pages of 3 copies, oldest first, each page's stamps after the previous page's. */
function pagesOf(n: number): Ticket[][] {
  return Array.from({ length: n }, (_, p) => [0, 1, 2].map((i) => copy(T0 + p * 1000 + i)));
}
const newestOf = (page: Ticket[]): string => page[page.length - 1]!.updated_at;

interface PeerOptions {
  /** Answer without has_more and next_since, as a peer that follows only the spec. */
  specOnly?: boolean;
  /** Status to answer a pull for page `k` with instead of the page. */
  failPage?: number;
}

/** A peer serving `pages` by `since`; `events` records each request and each answer sent. */
async function fakePeer(pages: Ticket[][], events: string[], opts: PeerOptions = {}): Promise<{ url: string; server: Server; requested: (k: number) => Promise<void> }> {
  const waiting = new Map<number, () => void>();
  const seen = new Set<number>();
  const server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    const since = url.searchParams.get('since')!;
    const k = since === EPOCH ? 0 : pages.findIndex((p, i) => i > 0 && newestOf(pages[i - 1]!) === since);
    events.push(`request ${k}`);
    seen.add(k);
    waiting.get(k)?.();
    if (k === opts.failPage) {
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'boom' }));
      events.push(`answered ${k}`);
      return;
    }
    const tickets = opts.specOnly ? pages.flat() : pages[k]!;
    const body = opts.specOnly ? { tickets } : { tickets, count: tickets.length, node_id: PEER_NODE, has_more: k < pages.length - 1, next_since: newestOf(tickets) };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body), () => events.push(`answered ${k}`));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  /** Resolves once page `k` has been asked for; rejects after 3 s (no pipelining). */
  const requested = (k: number): Promise<void> =>
    seen.has(k)
      ? Promise.resolve()
      : new Promise((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`page ${k} was not asked for while the previous one merged`)), 3_000);
          waiting.set(k, () => {
            clearTimeout(timer);
            resolve();
          });
        });
  return { url, server, requested };
}

/** The store's part in a pull: merge and cursors, recorded; `during(k)` runs inside page k's merge. */
function fakeStore(pages: Ticket[][], events: string[], during: (k: number) => Promise<void> | void = () => undefined): TicketStore & { cursor?: string } {
  const held = new Map<string, Ticket>();
  const store = {
    cursor: undefined as string | undefined,
    arrivals: new LateArrivals(),
    async nodeId() {
      return 'this-node';
    },
    async merge(incoming: Ticket[], combine: Combine): Promise<MergeResult> {
      const k = pages.findIndex((p) => p.some((t) => t.id === incoming[0]?.id));
      events.push(`merge ${k}`);
      await during(k);
      const r = { accepted: 0, rejected: 0 };
      for (const t of incoming) {
        const o = combine(t, held.get(t.id));
        if (o.kind === 'store') held.set(t.id, o.ticket as Ticket);
        if (o.kind === 'keep') r.rejected++;
        else r.accepted++;
      }
      events.push(`merged ${k}`);
      return r;
    },
    async getCursor() {
      return store.cursor;
    },
    async setCursor(_peer: string, c: string) {
      events.push(`cursor ${pages.findIndex((p) => newestOf(p) === c)}`);
      store.cursor = c;
    },
    async changedSince() {
      return { tickets: [], more: false };
    },
    // Tombstone bookkeeping: none in these pages.
    async markReceived() {},
    async purgeReceived() {
      return 0;
    },
    async unseen() {
      return { n: 0, peers: [] };
    },
    async purgeTombstones() {
      return 0;
    },
  };
  return store as unknown as TicketStore & { cursor?: string };
}

function replicatorOf(store: TicketStore, url: string): Replicator {
  return new Replicator({ store, hlc: new HybridClock(systemClock), token: 'token', logger: silent, peers: [url], intervalMs: 3_600_000, overlapMs: 0, pullLimit: 3 });
}

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

describe('pull pages asked for one ahead', () => {
  it('the next page is asked for while a page merges, never two ahead; the cursor follows stored pages only', async () => {
    const pages = pagesOf(4);
    const events: string[] = [];
    const peer = await fakePeer(pages, events);
    servers.push(peer.server);
    // Page k's merge finishes only once page k+1 has been asked for.
    const store = fakeStore(pages, events, (k) => (k + 1 < pages.length ? peer.requested(k + 1) : undefined));
    const [round] = await replicatorOf(store, peer.url).round();
    expect(round).toMatchObject({ ok: true, pulled: 12, accepted: 12, rejected: 0 });
    const at = (e: string): number => {
      const i = events.indexOf(e);
      if (i < 0) throw new Error(`no '${e}' in ${events.join(', ')}`);
      return i;
    };
    for (let k = 0; k < pages.length; k++) {
      // Page k's cursor is saved after its merge and before the next merge begins.
      expect(at(`cursor ${k}`)).toBe(at(`merged ${k}`) + 1);
      if (k + 1 < pages.length) expect(at(`merge ${k + 1}`)).toBeGreaterThan(at(`cursor ${k}`));
      // Asked for before page k is merged, but only once page k arrived: never two ahead.
      if (k + 1 < pages.length) expect(at(`request ${k + 1}`)).toBeLessThan(at(`merged ${k}`));
      if (k + 2 < pages.length) expect(at(`request ${k + 2}`)).toBeGreaterThan(at(`merged ${k}`));
    }
    expect(events.filter((e) => e.startsWith('request'))).toHaveLength(pages.length);
    expect(store.cursor).toBe(newestOf(pages[3]!));
  });

  it('the next page\'s request is out before a merge blocks the event loop (SQLite is synchronous)', async () => {
    const pages = pagesOf(3);
    // The peer runs on its own thread, so it answers while this one is blocked.
    const worker = new Worker(
      `const { createServer } = require('node:http');
       const { parentPort, workerData } = require('node:worker_threads');
       const pages = workerData;
       const arrived = [];
       const server = createServer((req, res) => {
         const since = new URL(req.url, 'http://x').searchParams.get('since');
         const k = since === '${EPOCH}' ? 0 : pages.findIndex((p, i) => i > 0 && pages[i - 1][pages[i - 1].length - 1].updated_at === since);
         arrived[k] = Date.now();
         const tickets = pages[k];
         res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ tickets, count: tickets.length, node_id: 'peer', has_more: k < pages.length - 1, next_since: tickets[tickets.length - 1].updated_at }));
       });
       server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
       parentPort.on('message', () => { parentPort.postMessage(arrived); server.closeAllConnections(); server.close(); });`,
      { eval: true, workerData: pages },
    );
    try {
      const port = await new Promise<number>((resolve) => worker.once('message', resolve));
      const blocked: [number, number][] = [];
      const store = fakeStore(pages, [], (k) => {
        const start = Date.now();
        while (Date.now() - start < 300); // a synchronous transaction
        blocked[k] = [start, Date.now()];
      });
      const [round] = await replicatorOf(store, `http://127.0.0.1:${port}`).round();
      expect(round).toMatchObject({ ok: true, pulled: 9 });
      worker.postMessage('done');
      const arrived = await new Promise<number[]>((resolve) => worker.once('message', resolve));
      for (const k of [1, 2]) expect(arrived[k], `page ${k} asked for while page ${k - 1} merged`).toBeLessThan(blocked[k - 1]![1]);
    } finally {
      await worker.terminate();
    }
  });

  it('a failed merge leaves the cursor after the last stored page; the page asked for ahead finishes first; the next round resumes', async () => {
    const pages = pagesOf(4);
    const events: string[] = [];
    const peer = await fakePeer(pages, events);
    servers.push(peer.server);
    let fail = true;
    const store = fakeStore(pages, events, async (k) => {
      if (k === 1 && fail) {
        await peer.requested(2);
        throw new Error('disk full');
      }
    });
    const replicator = replicatorOf(store, peer.url);
    const [first] = await replicator.round();
    expect(first).toMatchObject({ ok: false, error: 'disk full', pulled: 3 });
    expect(store.cursor).toBe(newestOf(pages[0]!));
    expect(events).toContain('answered 2');
    expect(events.filter((e) => e.startsWith('request'))).toEqual(['request 0', 'request 1', 'request 2']);

    fail = false;
    events.length = 0;
    const [second] = await replicator.round();
    expect(second).toMatchObject({ ok: true, pulled: 9 });
    expect(events.filter((e) => e.startsWith('request'))).toEqual(['request 1', 'request 2', 'request 3']);
    expect(events.filter((e) => e.startsWith('cursor'))).toEqual(['cursor 1', 'cursor 2', 'cursor 3']);
    expect(store.cursor).toBe(newestOf(pages[3]!));
  });

  it('a pull failing while a page merges is the round\'s error, after that page is stored', async () => {
    const pages = pagesOf(4);
    const events: string[] = [];
    const peer = await fakePeer(pages, events, { failPage: 2 });
    servers.push(peer.server);
    // Page 1 merges on after page 2's request has failed.
    const store = fakeStore(pages, events, async (k) => {
      if (k === 1) {
        await peer.requested(2);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    });
    const [round] = await replicatorOf(store, peer.url).round();
    expect(round!.ok).toBe(false);
    expect(round!.error).toBe('boom');
    expect(round!.pulled).toBe(6);
    expect(store.cursor).toBe(newestOf(pages[1]!));
  });

  it('stopping while a page merges: the page asked for finishes, no other is asked for', async () => {
    const pages = pagesOf(4);
    const events: string[] = [];
    const peer = await fakePeer(pages, events);
    servers.push(peer.server);
    let stopping: Promise<void> | undefined;
    let replicator: Replicator | undefined = undefined;
    const store = fakeStore(pages, events, async (k) => {
      if (k === 0) {
        await peer.requested(1);
        stopping = replicator!.stop();
      }
    });
    replicator = replicatorOf(store, peer.url);
    const [round] = await replicator.round();
    await stopping;
    expect(round).toMatchObject({ ok: true, pulled: 3 });
    expect(events.filter((e) => e.startsWith('request') || e.startsWith('cursor'))).toEqual(['request 0', 'request 1', 'cursor 0']);
    expect(events).toContain('answered 1');
    expect(store.cursor).toBe(newestOf(pages[0]!));
  });

  it('a peer without has_more: one pull per round, nothing asked for ahead', async () => {
    const pages = pagesOf(3);
    const events: string[] = [];
    const peer = await fakePeer(pages, events, { specOnly: true });
    servers.push(peer.server);
    const store = fakeStore([pages.flat()], events);
    const [round] = await replicatorOf(store, peer.url).round();
    expect(round).toMatchObject({ ok: true, pulled: 9 });
    expect(events.filter((e) => e.startsWith('request'))).toEqual(['request 0']);
  });
});
