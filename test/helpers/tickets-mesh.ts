// A full mesh of ticket tracker nodes composed from their real parts (as tickets-parts.ts does),
// where each node's one Replicator lists every other node as a peer, as a deployment does
// (docs/tickets.md, "Topology"). The test drives rounds pair by pair (Replicator.roundWith);
// tombstones are then purged only once every other node holds them, not after any one peer's
// round as one Replicator per peer would.
import { Writable } from 'node:stream';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../daemon/server.js';
import { createLogger } from '../../daemon/logger.js';
import { HybridClock } from '../../daemon/services/tickets/hybrid-clock.js';
import { installTokenCheck, ticketRoutes } from '../../daemon/services/tickets/routes.js';
import { Replicator } from '../../daemon/services/tickets/replication.js';
import { SqliteTicketStore } from '../../src/store/tickets.js';
import { PUSH_LIMIT, isTombstone, type SyncItem, type Ticket } from '../../src/schemas/tickets.js';
import { PARTS_TOKEN, type PartsNode, type PartsOptions } from './tickets-parts.js';
import { tempDir } from './tmp.js';

const silent = createLogger({ level: 'silent', stream: new Writable({ write: (_c, _e, cb) => cb() }), pretty: false });

export interface MeshNode extends PartsNode {
  /** Every item as a peer pulls it: live tickets and tombstones, oldest change first. */
  items(): Promise<SyncItem[]>;
}

/** One node per options, listening on 127.0.0.1; each replicates with all the others. */
export async function composeMesh(all: PartsOptions[]): Promise<MeshNode[]> {
  const nodes: MeshNode[] = [];
  const replicators: Replicator[] = [];
  try {
    for (const opts of all) {
      const dir = tempDir('mkt-mesh-');
      const store = new SqliteTicketStore(join(dir.path, 'tickets.db'));
      const nodeId = await store.nodeId();
      const hlc = new HybridClock(opts.clock, undefined, opts.maxSkewMs);
      let app: FastifyInstance;
      try {
        app = await buildServer({
          logger: silent,
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
      // Its peers are set once every node listens.
      const replicator = new Replicator({ store, hlc, clock: opts.clock, maxSkewMs: opts.maxSkewMs, token: PARTS_TOKEN, logger: silent, peers: [], intervalMs: 3_600_000, overlapMs: opts.overlapMs, nodeId, pullLimit: opts.pullLimit });
      replicators.push(replicator);
      const node: MeshNode = {
        nodeId,
        url,
        clock: opts.clock,
        async req(method, path, body) {
          const headers: Record<string, string> = { authorization: `Bearer ${PARTS_TOKEN}` };
          if (body !== undefined) headers['content-type'] = 'application/json';
          const res = await fetch(url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
          const text = await res.text();
          return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
        },
        replicateFrom: (peer) => replicator.roundWith(peer.url),
        async items() {
          const r = await node.req('GET', '/sync/pull?since=1970-01-01T00:00:00Z&limit=5000');
          if (r.status !== 200 || r.body.has_more !== false) throw new Error(`items of ${url}: ${r.status} ${JSON.stringify(r.body)}`);
          return r.body.tickets as SyncItem[];
        },
        async snapshot() {
          return (await node.items()).filter((t): t is Ticket => !isTombstone(t));
        },
        async close() {
          await replicator.stop();
          await app.close();
          await store.close();
          dir.remove();
        },
      };
      nodes.push(node);
    }
  } catch (err) {
    for (const n of nodes) await n.close();
    throw err;
  }
  for (const [i, r] of replicators.entries()) r.setPeers(nodes.filter((_, j) => j !== i).map((n) => n.url));
  return nodes;
}
