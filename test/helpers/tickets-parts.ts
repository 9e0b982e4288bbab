// A ticket tracker node composed in the test from its real parts (SQLite store, hybrid clock over
// the node's own clock, the shared fastify plugins and the real routes) on 127.0.0.1 port 0, with
// one Replicator per peer whose rounds the test drives itself: no timer ever runs.
import { Writable } from 'node:stream';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../daemon/server.js';
import { createLogger } from '../../daemon/logger.js';
import { HybridClock } from '../../daemon/services/tickets/hybrid-clock.js';
import { installTokenCheck, ticketRoutes } from '../../daemon/services/tickets/routes.js';
import { Replicator, type PeerRound } from '../../daemon/services/tickets/replication.js';
import { SqliteTicketStore } from '../../src/store/tickets.js';
import { PUSH_LIMIT, type Ticket } from '../../src/schemas/tickets.js';
import type { Clock } from '../../src/util/clock.js';
import { tempDir } from './tmp.js';

export const PARTS_TOKEN = 'parts-test-token-0123456789';

export interface PartsNode {
  nodeId: string;
  url: string;
  clock: Clock;
  /** Sends a request with the shared token; the body parsed as JSON. */
  req(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test bodies are inspected field by field
  /** One replication round of this node with `peer` (pull, merge, push), built on first use. */
  replicateFrom(peer: PartsNode): Promise<PeerRound>;
  /** Every ticket as a peer pulls it (field stamps included), oldest change first. */
  snapshot(): Promise<Ticket[]>;
  close(): Promise<void>;
}

export interface PartsOptions {
  clock: Clock;
  maxSkewMs: number;
  pullLimit: number;
  overlapMs?: number;
}

/** A logger that writes nothing (the nodes' lines are not what these tests read). */
export const silentLogger = createLogger({ level: 'silent', stream: new Writable({ write: (_c, _e, cb) => cb() }), pretty: false });

/** A node's parts serving on 127.0.0.1 (no replicator): what composeNode and composeMesh build on. */
export interface ServedParts {
  store: SqliteTicketStore;
  hlc: HybridClock;
  nodeId: string;
  url: string;
  /** Sends a request with the shared token; the body parsed as JSON. */
  req: PartsNode['req'];
  /** Closes the server and the store and removes the node's directory. */
  close(): Promise<void>;
}

/** The store, clock and real routes of one node, listening on 127.0.0.1 port 0. */
export async function serveParts(opts: PartsOptions): Promise<ServedParts> {
  const dir = tempDir('mkt-parts-');
  const store = new SqliteTicketStore(join(dir.path, 'tickets.db'));
  const nodeId = await store.nodeId();
  const hlc = new HybridClock(opts.clock, undefined, opts.maxSkewMs);
  let app: FastifyInstance;
  try {
    app = await buildServer({
      logger: silentLogger,
      service: {
        openapi: { title: 'tickets (test)', version: '0' },
        bodyLimit: PUSH_LIMIT.bytes,
        async register(a) {
          installTokenCheck(a, PARTS_TOKEN);
          await a.register(async (scope) => ticketRoutes(scope, { store, hlc, nodeId, token: PARTS_TOKEN, clock: opts.clock, maxSkewMs: opts.maxSkewMs }));
        },
        async close() {},
      },
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
  } catch (err) {
    await store.close();
    dir.remove();
    throw err;
  }
  const addr = app.server.address();
  const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  return {
    store,
    hlc,
    nodeId,
    url,
    async req(method, path, body) {
      const headers: Record<string, string> = { authorization: `Bearer ${PARTS_TOKEN}` };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.text();
      return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
    },
    async close() {
      await app.close();
      await store.close();
      dir.remove();
    },
  };
}

export async function composeNode(opts: PartsOptions): Promise<PartsNode> {
  const { store, hlc, nodeId, url, req, close } = await serveParts(opts);
  const replicators = new Map<string, Replicator>();
  const node: PartsNode = {
    nodeId,
    url,
    clock: opts.clock,
    req,
    replicateFrom(peer) {
      let replicator = replicators.get(peer.url);
      if (!replicator) {
        replicator = new Replicator({ store, hlc, clock: opts.clock, maxSkewMs: opts.maxSkewMs, token: PARTS_TOKEN, logger: silentLogger, peers: [peer.url], intervalMs: 3_600_000, overlapMs: opts.overlapMs, nodeId, pullLimit: opts.pullLimit });
        replicators.set(peer.url, replicator);
      }
      return replicator.round().then((rounds) => rounds[0]!);
    },
    async snapshot() {
      const r = await node.req('GET', '/sync/pull?since=1970-01-01T00:00:00Z&limit=5000');
      if (r.status !== 200 || r.body.has_more !== false) throw new Error(`snapshot of ${url}: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.tickets as Ticket[];
    },
    async close() {
      for (const r of replicators.values()) await r.stop();
      await close();
    },
  };
  return node;
}
