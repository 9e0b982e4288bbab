// `mkt serve tickets`: opens the store, resolves the shared token, serves the routes, and
// runs peer replication once listening. SIGHUP re-reads the config's peer list.
import { join } from 'node:path';
import type { ServiceModule, ServiceRuntime } from '../../service.js';
import { SqliteTicketStore } from '../../../src/store/tickets.js';
import { snapshotRoute } from './snapshot-route.js';
import { HybridClock } from './hybrid-clock.js';
import { installTokenCheck, ticketRoutes } from './routes.js';
import { BEARER, BEARER_SCHEME } from '../../plugins/openapi.js';
import { Replicator } from './replication.js';
import { ticketGetLane } from './get-lane.js';
import { secretMatcher } from '../../plugins/bearer.js';
import { resolveToken } from './token.js';
import { loadTicketsConfig } from './config.js';
import { DEFAULT_MAX_SKEW_MS, MAX_STAMP_MS, formatStamp } from './stamp.js';
import { VERSION } from '../../../src/version.js';
import { PUSH_LIMIT } from '../../../src/schemas/tickets.js';
import { ticketsOptions, type TicketsOptions } from './options.js';

const tickets: ServiceModule<TicketsOptions> = {
  options: ticketsOptions,
  async open(ctx): Promise<ServiceRuntime> {
    const { server, options, logger } = ctx;
    const config = loadTicketsConfig(server.configPath, server.dataDir);
    const peersFrom = (cfg: typeof config): string[] => (options.peers && options.peers.length > 0 ? options.peers : cfg.peers);
    const resolved = resolveToken({ flag: options.token, env: server.env.MKT_TICKETS_TOKEN, file: join(server.dataDir, 'token') });
    const store = new SqliteTicketStore(join(server.dataDir, 'tickets.db'));
    const nodeId = await store.nodeId();
    const maxSkewMs = (config.maxClockSkewSeconds ?? DEFAULT_MAX_SKEW_MS / 1000) * 1000;
    // A stored stamp beyond the skew (left by an older version) must not drag the clock along.
    const hlc = new HybridClock(ctx.clock, await store.newestUpdate(formatStamp(Math.min(MAX_STAMP_MS, ctx.clock.now() + maxSkewMs))), maxSkewMs);
    if (resolved.source === 'generated') {
      // Spec: printed once, on the start that generated it, and only on this line: the
      // announcement goes to the terminal that started the server, never into the pino log.
      ctx.announce(`generated API token (shown only this once; saved 0600 in ${join(server.dataDir, 'token')}): ${resolved.token}`);
    }
    logger.info({ node_id: nodeId, token_source: resolved.source }, 'ticket tracker ready');
    const replicator = new Replicator({
      store,
      hlc,
      clock: ctx.clock,
      maxSkewMs,
      token: resolved.token,
      logger: logger.child({ component: 'sync' }),
      peers: peersFrom(config),
      intervalMs: options.syncIntervalMs ?? (config.syncIntervalSeconds ?? 30) * 1000,
      overlapMs: options.syncOverlapMs,
      pullLimit: options.syncPullLimit,
      tombstoneMaxAgeMs: options.tombstoneMaxAgeMs ?? config.tombstoneMaxAgeMs,
      snapshotDir: server.dataDir,
      nodeId,
    });
    return {
      openapi: { title: 'mkt ticket tracker', version: VERSION, description: 'Tickets with peer-to-peer last-writer-wins sync (spec service B).' },
      securitySchemes: BEARER_SCHEME,
      // installTokenCheck (below) guards every route on the root instance: each one needs the token.
      operationSecurity: () => BEARER,
      bodyLimit: PUSH_LIMIT.bytes,
      async register(app) {
        installTokenCheck(app, resolved.token);
        app.directRoutes.add('/tickets/', ticketGetLane(app.directRoutes, { cached: (id) => store.cached(id), tokenMatches: secretMatcher(resolved.token) }));
        await app.register(async (scope) => ticketRoutes(scope, { store, hlc, nodeId, token: resolved.token, clock: ctx.clock, maxSkewMs }));
        await app.register(async (scope) => snapshotRoute(scope, { store, dataDir: server.dataDir }));
      },
      start() {
        replicator.start();
      },
      async reload() {
        const next = loadTicketsConfig(server.configPath, server.dataDir);
        replicator.setPeers(peersFrom(next));
      },
      async close() {
        await replicator.stop();
        await store.close();
      },
    };
  },
};

export const options = tickets.options;
export const open = tickets.open;
export default tickets;
