// Peer replication (spec service B, "peer synchronization"; the wire keeps its /sync/ paths):
// every interval, for each peer in turn, pull what changed since its cursor, then push what
// changed here since that cursor. One failing peer is logged and the round goes on. Rounds never overlap.
import type { Logger } from '../../logger.js';
import type { ListPosition, TicketStore } from '../../../src/store/tickets.js';
import { systemClock, type Clock } from '../../../src/util/clock.js';
import { TicketsClient } from '../../../src/client/tickets.js';
import { isResponseTooLarge } from '../../../src/client/http.js';
import type { HybridClock } from './hybrid-clock.js';
import { offerCopies } from './offer.js';
import { PULL_LIMIT, PUSH_LIMIT, isTombstone, type PullResponse, type SyncItem } from '../../../src/schemas/tickets.js';
import { logRefusals, screenPeerCopies } from './peer-ticket.js';
import { DEFAULT_MAX_SKEW_MS, aheadOf, compareStamps, formatStamp, narrowedSince, normalizeStamp, parseStamp, stampMinus } from './stamp.js';
import { bootstrapFromSnapshot } from './bootstrap.js';
import { DEFAULT_TOMBSTONE_MAX_AGE_MS } from './config.js';
import { comparePositions, decodeCursor } from './list-cursor.js';
import type { PreparedSnapshot } from '../../../src/store/ticket-snapshot.js';

export const EPOCH = '1970-01-01T00:00:00.000Z';
/**
 * How far before the cursor each pull and push re-reads. The cursor comes from the peer's
 * stamps, so a copy that reaches the peer late carrying an older stamp (from a node whose
 * clock is behind, or over a longer path) would sort below it and never be sent; re-reading
 * a window costs only idempotent upserts.
 */
export const DEFAULT_OVERLAP_MS = 10 * 60 * 1000;
/**
 * An empty node starts from a peer's snapshot when the peer holds at least this many tickets:
 * below it, pulling (two pages) costs less than copying and checking a whole database.
 */
export const SNAPSHOT_MIN_TICKETS = 10_000;
/** Spec, peer synchronization: an outbound request to a peer is given up after 10 s in all... */
export const PEER_TIMEOUT_MS = 10_000;
/** ...and after 5 s when its connection is not even established (a host that drops packets). */
export const PEER_CONNECT_TIMEOUT_MS = 5_000;
/**
 * Largest push request, in tickets and in bytes; bigger change sets go in several. Both stay
 * at half the receiver's bounds (PUSH_LIMIT): 1000 tickets with 100 kB descriptions in one
 * body would be refused (413) on every round, and replication would never get past them.
 */
const PUSH_BATCH = PUSH_LIMIT.tickets / 2;
const PUSH_BATCH_BYTES = PUSH_LIMIT.bytes / 2;

/**
 * Whether an item fits in a push body (PUSH_LIMIT.bytes, with room for the array): a ticket with
 * many large comments may not, and is left to the peer's pull (whose pages hold at least one
 * ticket whatever its size) rather than fail the round with a 413 every time.
 */
function fitsPush(item: SyncItem, logger: Pick<Logger, 'warn'>, peer: string): boolean {
  const bytes = Buffer.byteLength(JSON.stringify(item));
  if (bytes <= PUSH_LIMIT.bytes - 1024) return true;
  logger.warn({ peer, ticket: item.id, bytes }, 'sync: a ticket is too large for a push; the peer gets it by pulling');
  return false;
}

/** Splits tickets into batches of at most PUSH_BATCH tickets and about PUSH_BATCH_BYTES. */
export function pushBatches<T>(items: T[], maxItems = PUSH_BATCH, maxBytes = PUSH_BATCH_BYTES): T[][] {
  const out: T[][] = [];
  let batch: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = Buffer.byteLength(JSON.stringify(item)) + 1;
    if (batch.length > 0 && (batch.length >= maxItems || bytes + size > maxBytes)) {
      out.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(item);
    bytes += size;
  }
  if (batch.length > 0) out.push(batch);
  return out;
}

export interface ReplicatorOptions {
  store: TicketStore;
  hlc: HybridClock;
  /** Default: the system clock. */
  clock?: Clock;
  /** Copies stamped further ahead of `clock` than this are refused; default in stamp.ts. */
  maxSkewMs?: number;
  token: string;
  logger: Logger;
  peers: string[];
  intervalMs: number;
  overlapMs?: number;
  /**
   * The data directory: with it, an empty node whose peer holds SNAPSHOT_MIN_TICKETS or more
   * starts from the peer's snapshot (bootstrap.ts) instead of pulling every page.
   */
  snapshotDir?: string;
  /** This node's id, sent with pushes (SENDER_HEADER in src/schemas/tickets.ts). */
  nodeId?: string;
  /** Tickets asked for per pull page; default the server's maximum. */
  pullLimit?: number;
  /** Tombstones older than this are purged even when a peer has not received them; default 90 days. */
  tombstoneMaxAgeMs?: number;
}

export interface PeerRound {
  peer: string;
  pulled: number;
  accepted: number;
  /** Pulled copies not stored: malformed, stamped too far ahead, or older than ours. */
  rejected: number;
  pushed: number;
  ok: boolean;
  error?: string;
}

export interface PageMerge {
  /** Copies offered to the store. */
  pulled: number;
  accepted: number;
  /** Copies not stored: malformed, stamped too far ahead, or older than ours. */
  rejected: number;
  /** The newest stamp among the copies offered: where the cursor may move once they are stored. */
  newest: string | undefined;
  /** The tombstones the page carried (the peer holds them: see purging in docs/tickets.md). */
  tombstones: string[];
}

/**
 * Screens one pull page and merges its copies. The newest stamp follows only copies within
 * the skew: a refused far-future stamp must not carry the cursor past every later edit.
 */
export async function mergePulledPage(store: TicketStore, hlc: HybridClock, log: Pick<Logger, 'warn'>, peer: string, raws: unknown[], now: number, maxSkewMs: number, peerNode?: string): Promise<PageMerge> {
  const screened = screenPeerCopies(raws, now, maxSkewMs);
  logRefusals(log, peer, screened, maxSkewMs);
  const copies: SyncItem[] = [...screened.copies, ...screened.tombstones];
  const merged = await offerCopies(store, hlc, copies, now, maxSkewMs, peerNode);
  // Screened copies carry canonical stamps only, and those sort as text in time order.
  let newest: string | undefined;
  for (const t of copies) if (newest === undefined || t.updated_at > newest) newest = t.updated_at;
  const tombstones = screened.tombstones.map((t) => t.id);
  return { pulled: copies.length, accepted: merged.accepted, rejected: merged.rejected + screened.malformed + screened.tooFarAhead.length, newest, tombstones };
}

/**
 * Lets a request just made reach its socket before a merge blocks the event loop (SQLite is
 * synchronous): undici writes it on a later turn of the loop, two turns on a kept-alive
 * connection as measured. A request that needs a new connection may still wait for the
 * merge; that page is then merely not fetched ahead.
 */
function requestWritten(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

/**
 * Where the saved cursor may move after a page is stored: to its newest stamp, unless the page
 * may have ended inside a group sharing one stamp (a split page, `next` where the next starts):
 * then to a millisecond before that stamp, so a restart reads the group again rather than skip
 * the rest of it (a pull takes stamps strictly after the cursor).
 */
export function cursorAfterPage(newest: string | undefined, next: ListPosition | undefined): string | undefined {
  if (newest === undefined || next === undefined || compareStamps(newest, next.updated_at) < 0) return newest;
  return stampMinus(next.updated_at, 1);
}

export class Replicator {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<PeerRound[]> | undefined;
  private stopped = false;
  /** Aborted by stop(): requests to peers and a snapshot being taken end at once. */
  private readonly halt = new AbortController();
  private peers: string[];
  /** Per peer: its clock as it read our last round's first pull page (its `arrivals_at`). */
  private readonly pulledAt = new Map<string, number>();
  /** Per peer: our store's clock as our last round's push began. */
  private readonly pushedAt = new Map<string, number>();

  constructor(private readonly opts: ReplicatorOptions) {
    this.peers = [...opts.peers];
  }

  setPeers(peers: string[]): void {
    this.peers = [...peers];
    // A peer dropped from the list (SIGHUP) takes its instants along; one added back re-reads the whole overlap once.
    for (const seen of [this.pulledAt, this.pushedAt]) for (const peer of seen.keys()) if (!peers.includes(peer)) seen.delete(peer);
  }

  start(): void {
    if (this.peers.length === 0) this.opts.logger.info('no peers configured; sync idle');
    else this.opts.logger.info({ peers: this.peers, interval_s: this.opts.intervalMs / 1000 }, 'syncing with peers');
    this.schedule(0);
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.round().finally(() => this.schedule(this.opts.intervalMs));
    }, delay);
    this.timer.unref?.();
  }

  /** One round over every peer, then the purge of tombstones; concurrent callers share the round in progress. */
  round(): Promise<PeerRound[]> {
    this.running ??= (async () => {
      const out: PeerRound[] = [];
      try {
        for (const peer of this.peers) {
          if (this.stopped) break;
          out.push(await this.replicateWith(peer));
        }
        if (!this.stopped) await this.purge();
      } finally {
        this.running = undefined;
      }
      return out;
    })();
    return this.running;
  }

  /**
   * One round with `peer` alone, then the purge over every configured peer: tests drive the
   * nodes of a mesh pair by pair this way. Waits for a round in progress, as round() shares it.
   */
  async roundWith(peer: string): Promise<PeerRound> {
    while (this.running) await this.running.catch(() => undefined);
    const one = (async () => {
      try {
        const r = await this.replicateWith(peer);
        if (!this.stopped) await this.purge();
        return [r];
      } finally {
        this.running = undefined;
      }
    })();
    this.running = one;
    return (await one)[0]!;
  }

  private async replicateWith(peer: string): Promise<PeerRound> {
    const { store, hlc, logger, clock = systemClock, maxSkewMs = DEFAULT_MAX_SKEW_MS } = this.opts;
    const overlap = this.opts.overlapMs ?? DEFAULT_OVERLAP_MS;
    const client = new TicketsClient({ baseUrl: peer, token: this.opts.token, timeoutMs: PEER_TIMEOUT_MS, connectTimeoutMs: PEER_CONNECT_TIMEOUT_MS, signal: this.halt.signal });
    const round: PeerRound = { peer, pulled: 0, accepted: 0, rejected: 0, pushed: 0, ok: false };
    try {
      const now = clock.now();
      let cursor = (await store.getCursor(peer)) ?? EPOCH;
      const cursorMs = parseStamp(cursor);
      if (cursorMs === undefined || cursorMs > now + maxSkewMs) {
        // Left by a version that followed a peer's year-9999 stamp: pulling after it would
        // never return an edit again, so start over (upserts are idempotent).
        logger.warn({ peer, cursor }, 'sync: the cursor for this peer lies in the future; pulling everything again');
        cursor = EPOCH;
      }
      if (cursor === EPOCH) {
        const boot = await this.bootstrap(client, peer, now, maxSkewMs);
        if (boot?.newest !== undefined) {
          cursor = boot.newest;
          round.pulled += boot.tickets;
          round.accepted += boot.tickets;
        }
      }
      // After a snapshot, both directions resume from its newest stamp: every ticket in it
      // came from this peer.
      const since = cursor === EPOCH ? EPOCH : stampMinus(cursor, overlap);
      // The overlap is for copies that reach the peer late with an older stamp: our peers say
      // which arrived since our last round (late-arrivals.ts) and re-read only from there.
      const startCursor = cursor;
      const lateAfter = since === cursor ? undefined : this.pulledAt.get(peer);
      let arrivalsAt: number | undefined;
      let firstPage = true;

      // Pull page after page until caught up. The next page is asked for as soon as a page
      // says more follow, so the peer reads and sends it while this one is merged (waiting
      // for it was a tenth of a full replication). Still, the cursor is saved only once a page is
      // stored, so a restart resumes after the last stored page, and at most two pages are
      // held: the one merging and the one arriving.
      let peerNode: string | undefined;
      const limit = this.opts.pullLimit ?? PULL_LIMIT.max;
      let ahead: Promise<PullResponse> | undefined = this.stopped ? undefined : client.pull(since, limit, { split: true, sender: this.opts.nodeId, ...(lateAfter !== undefined ? { sinceCursor: startCursor, lateAfter } : {}) });
      try {
        for (let from = since, at: ListPosition | undefined; ahead !== undefined && !this.stopped; ) {
          const page = await ahead;
          ahead = undefined;
          if (!Array.isArray(page.tickets)) throw new Error('the peer answered a pull without a tickets array');
          peerNode = typeof page.node_id === 'string' && page.node_id.length <= 100 ? page.node_id : undefined;
          // The first page's clock: what arrives at the peer from then on is asked for next round.
          if (firstPage) arrivalsAt = Number.isSafeInteger(page.arrivals_at) ? page.arrivals_at : undefined;
          firstPage = false;
          // A peer that follows only the spec sends everything at once and no has_more. Pages
          // are oldest first, so once the last stamp is past the skew all later ones are too.
          const next = page.has_more === true ? normalizeStamp(page.next_since) : undefined;
          // Our peers may end a page inside a group sharing one stamp; the cursor continues it
          // and must move forward, or a peer could keep this round going for ever.
          const cursorText = typeof page.next_cursor === 'string' ? page.next_cursor : undefined;
          const nextAt = cursorText !== undefined ? decodeCursor(cursorText) : undefined;
          const inGroup = nextAt !== undefined && next !== undefined && nextAt.updated_at === next && (at === undefined || comparePositions(nextAt, at) > 0);
          if (next !== undefined && (compareStamps(next, from) > 0 || (inGroup && compareStamps(next, from) >= 0)) && aheadOf(next, now) <= maxSkewMs && !this.stopped) {
            ahead = client.pull(next, limit, inGroup ? { split: true, cursor: cursorText } : { split: true });
            // Awaited on the next turn; until then a failure must not count as unhandled.
            ahead.catch(() => undefined);
            from = next;
            at = inGroup ? nextAt : undefined;
            await requestWritten();
          }
          const merged = await mergePulledPage(store, hlc, logger, peer, page.tickets, now, maxSkewMs, peerNode);
          await store.markReceived(peer, merged.tombstones);
          round.pulled += merged.pulled;
          round.accepted += merged.accepted;
          round.rejected += merged.rejected;
          const stored = cursorAfterPage(merged.newest, page.has_more === true ? nextAt : undefined);
          if (stored !== undefined && compareStamps(stored, cursor) > 0) {
            await store.setCursor(peer, stored);
            cursor = stored;
          }
        }
      } finally {
        // A page asked for and not taken (a merge failed, or replication is stopping) is let finish,
        // so that no request outlives the round.
        await ahead?.catch(() => undefined);
      }

      // Push local changes since the cursor as it was at the start of the round, page by
      // page, less the tickets stored exactly as this peer sent them; before it only as far
      // back as copies that arrived here late since the last push.
      const pushedAt = store.arrivals.now();
      const lastPush = since === startCursor ? undefined : this.pushedAt.get(peer);
      const pushFrom = narrowedSince(since, startCursor, lastPush === undefined ? undefined : store.arrivals.oldestSince(lastPush, peerNode));
      for (let from = pushFrom; !this.stopped; ) {
        const page = await store.changedSince(from, { limit: PUSH_BATCH, maxBytes: PUSH_BATCH_BYTES, notFrom: peerNode });
        const fits = page.tickets.filter((t) => fitsPush(t, logger, peer));
        for (const batch of pushBatches(fits.filter((t) => !isTombstone(t)))) await client.push(batch, this.opts.nodeId);
        // Tombstones go in batches of their own and count as received only when the peer accepted
        // every one: a node of the previous release answers 200 but refuses them as malformed, and
        // the ticket it still holds would come back once the tombstone was purged.
        for (const batch of pushBatches(fits.filter(isTombstone))) {
          const answer = await client.push(batch, this.opts.nodeId);
          if (answer.accepted === batch.length && answer.rejected === 0) await store.markReceived(peer, batch.map((t) => t.id));
        }
        round.pushed += fits.length;
        const last = page.tickets[page.tickets.length - 1];
        if (!page.more || last === undefined) break;
        from = last.updated_at;
      }
      round.ok = true;
      // Only after a whole round: a round cut short leaves the earlier instants, which ask for more.
      if (arrivalsAt !== undefined) this.pulledAt.set(peer, arrivalsAt);
      else this.pulledAt.delete(peer);
      this.pushedAt.set(peer, pushedAt);
      if (round.pulled > 0 || round.pushed > 0) logger.info({ peer, pulled: round.pulled, accepted: round.accepted, rejected: round.rejected, pushed: round.pushed }, 'synced with peer');
      else logger.debug({ peer }, 'synced with peer; nothing new');
    } catch (err) {
      round.error = (err as Error).message;
      if (this.stopped) logger.info({ peer }, 'sync with peer cut short: the node is stopping');
      // An answer past its cap (TICKETS_ANSWER_BYTES) was cut off while it streamed: said as
      // such, so that an operator tells a hostile or broken peer from an unreachable one.
      else if (isResponseTooLarge(err)) logger.warn({ peer, err: round.error, limit_bytes: err.limitBytes }, `sync with peer failed: refused answer: larger than ${err.limitBytes} bytes; continuing with the others`);
      else logger.warn({ peer, err: round.error }, 'sync with peer failed; continuing with the others');
    }
    return round;
  }

  /**
   * An empty node's first round with a peer holding many tickets: its snapshot, adopted. Any
   * failure is logged and the round pulls page by page as before.
   */
  private async bootstrap(client: TicketsClient, peer: string, now: number, maxSkewMs: number): Promise<PreparedSnapshot | undefined> {
    const { store, hlc, logger, snapshotDir, nodeId } = this.opts;
    if (snapshotDir === undefined || nodeId === undefined || (await store.count({})).n > 0) return undefined;
    try {
      const theirs = await client.list({ limit: 1 });
      if (!(theirs.count >= SNAPSHOT_MIN_TICKETS)) return undefined;
      const started = Date.now();
      const boot = await bootstrapFromSnapshot({ store, hlc, peer, token: this.opts.token, dir: snapshotDir, nodeId, now, maxSkewMs, signal: this.halt.signal });
      if (boot) logger.info({ peer, tickets: boot.tickets, newest: boot.newest, ms: Date.now() - started, download_ms: boot.downloadMs, screen_ms: Math.round(boot.ms.screen), check_ms: Math.round(boot.ms.check), rebuild_ms: Math.round(boot.ms.rebuild) }, 'sync: started from the peer\'s snapshot');
      return boot;
    } catch (err) {
      if (this.stopped) return undefined;
      if (isResponseTooLarge(err)) logger.warn({ peer, err: err.message, limit_bytes: err.limitBytes }, `sync: refused answer: larger than ${err.limitBytes} bytes; the peer's snapshot was not taken; pulling page by page`);
      else logger.warn({ peer, err: (err as Error).message }, 'sync: the peer\'s snapshot was not taken; pulling page by page');
      return undefined;
    }
  }

  /**
   * Purges the tombstones every configured peer holds (none without peers: a node pushed to by
   * peers it does not list could otherwise take back a deleted ticket), then those older than
   * the maximum age, with a warning naming the peers that had not received them.
   */
  async purge(): Promise<void> {
    const { store, logger, clock = systemClock } = this.opts;
    try {
      const received = await store.purgeReceived(this.peers);
      if (received > 0) logger.info({ purged: received }, 'sync: purged tombstones every peer has received');
      const through = formatStamp(Math.max(0, clock.now() - (this.opts.tombstoneMaxAgeMs ?? DEFAULT_TOMBSTONE_MAX_AGE_MS)));
      const old = await store.unseen(through, this.peers);
      if (old.n === 0) return;
      const n = await store.purgeTombstones(through);
      logger.warn({ purged: n, unseen_by: old.peers, max_age_ms: this.opts.tombstoneMaxAgeMs ?? DEFAULT_TOMBSTONE_MAX_AGE_MS }, `sync: purged ${n} tombstones older than the maximum age, not received by ${old.peers.length} peers; a peer that still holds such a ticket can bring it back`);
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'sync: purging tombstones failed');
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.halt.abort(new Error('the node is stopping'));
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }
}
