// `mkt serve tickets`: opens the store, resolves the shared token, serves the routes, and
// runs the peer sync loop once listening. SIGHUP re-reads the config's peer list.
import { join } from 'node:path';
import type { ServiceModule, ServiceRuntime } from '../../service.js';
import { SqliteTicketStore } from '../../../src/store/tickets.js';
import { HybridClock } from './hybrid-clock.js';
import { installTokenCheck, ticketRoutes } from './routes.js';
import { PeerSync } from './sync.js';
import { resolveToken } from './token.js';
import { loadTicketsConfig } from './config.js';
import { VERSION } from '../../../src/version.js';

export interface TicketsFlags {
  token?: string;
  peers?: string[];
  syncIntervalMs?: number;
  /** Tests shorten the overlap window; see sync.ts. */
  syncOverlapMs?: number;
}

const tickets: ServiceModule = {
  async open(ctx): Promise<ServiceRuntime> {
    const { options, logger } = ctx;
    const flags = options.flags as TicketsFlags;
    const config = loadTicketsConfig(options.configPath, options.dataDir);
    const peersFrom = (cfg: typeof config): string[] => (flags.peers && flags.peers.length > 0 ? flags.peers : cfg.peers);
    const resolved = resolveToken({ flag: flags.token, env: options.env.MKT_TICKETS_TOKEN, file: join(options.dataDir, 'token') });
    const store = new SqliteTicketStore(join(options.dataDir, 'tickets.db'));
    const nodeId = await store.nodeId();
    const hlc = new HybridClock(ctx.clock, await store.newestUpdate());
    if (resolved.source === 'generated') {
      // Only where it is: stdout may be a journal, and secrets never go to logs.
      ctx.announce(`generated an API token in ${join(options.dataDir, 'token')} (mode 0600); clients read it with: mkt auth login tickets < ${join(options.dataDir, 'token')}`);
    }
    logger.info({ node_id: nodeId, token_source: resolved.source }, 'ticket tracker ready');
    const sync = new PeerSync({
      store,
      hlc,
      token: resolved.token,
      logger: logger.child({ component: 'sync' }),
      peers: peersFrom(config),
      intervalMs: flags.syncIntervalMs ?? (config.syncIntervalSeconds ?? 30) * 1000,
      overlapMs: flags.syncOverlapMs,
    });
    return {
      openapi: { title: 'mkt ticket tracker', version: VERSION, description: 'Tickets with peer-to-peer last-writer-wins sync (spec service B).' },
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      bodyLimit: 64 * 1024 * 1024,
      async register(app) {
        installTokenCheck(app, resolved.token);
        await app.register(async (scope) => ticketRoutes(scope, { store, hlc, nodeId, token: resolved.token }));
      },
      start() {
        sync.start();
      },
      async reload() {
        const next = loadTicketsConfig(options.configPath, options.dataDir);
        sync.setPeers(peersFrom(next));
      },
      async close() {
        await sync.stop();
        await store.close();
      },
    };
  },
};

export const open = tickets.open;
export default tickets;
