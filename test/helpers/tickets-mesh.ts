// A full mesh of ticket tracker nodes composed from their real parts (as tickets-parts.ts does),
// where each node's one Replicator lists every other node as a peer, as a deployment does
// (docs/tickets.md, "Topology"). The test drives rounds pair by pair (Replicator.roundWith);
// tombstones are then purged only once every other node holds them, not after any one peer's
// round as one Replicator per peer would.
import { Replicator } from '../../daemon/services/tickets/replication.js';
import { isTombstone, type SyncItem, type Ticket } from '../../src/schemas/tickets.js';
import { PARTS_TOKEN, serveParts, silentLogger, type PartsNode, type PartsOptions } from './tickets-parts.js';

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
      const { store, hlc, nodeId, url, req, close } = await serveParts(opts);
      // Its peers are set once every node listens.
      const replicator = new Replicator({ store, hlc, clock: opts.clock, maxSkewMs: opts.maxSkewMs, token: PARTS_TOKEN, logger: silentLogger, peers: [], intervalMs: 3_600_000, overlapMs: opts.overlapMs, nodeId, pullLimit: opts.pullLimit });
      replicators.push(replicator);
      const node: MeshNode = {
        nodeId,
        url,
        clock: opts.clock,
        req,
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
          await close();
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
