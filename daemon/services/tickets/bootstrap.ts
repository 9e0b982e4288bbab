// An empty node's first replication from a peer: rather than pull every ticket page by page (a
// million tickets cost minutes of row-by-row inserts and index updates), it downloads the
// peer's snapshot (GET /sync/snapshot), checks and prepares it (src/store/ticket-snapshot.ts)
// and adopts it as its database, then pulls what changed since the snapshot's newest stamp.
// A peer without snapshots (404, an older mkt or a spec-only peer), a refused snapshot or a
// node that stored a ticket meanwhile all fall back to pulling.
import { randomUUID } from 'node:crypto';
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { request } from 'undici';
import { prepareSnapshot, type PreparedSnapshot } from '../../../src/store/ticket-snapshot.js';
import type { Ticket, Tombstone } from '../../../src/schemas/tickets.js';
import type { TicketStore } from '../../../src/store/tickets.js';
import type { HybridClock } from './hybrid-clock.js';
import { screenPeerCopies } from './peer-ticket.js';
import { SNAPSHOT_CONTENT_TYPE, SNAPSHOT_GRACE_MS, SNAPSHOT_MIN_BYTES_PER_SECOND } from './snapshot-route.js';

/**
 * The largest snapshot accepted (and the disk it may take): 4 GiB. A million tickets, the scale
 * a node is built for, make 880 MiB (bench/README.md); a larger announcement is refused before
 * a byte of it is read.
 */
export const MAX_SNAPSHOT_BYTES = 4 * 1024 ** 3;
/**
 * The longest a download may take, whatever its size: 30 minutes (a million tickets at 0.5 MiB/s).
 * The rate alone let a peer announcing 16 GiB at just over 1 MiB/s hold this node's replication round,
 * and so its replication with every other peer, for four and a half hours.
 */
export const MAX_SNAPSHOT_DOWNLOAD_MS = 30 * 60_000;

export interface BootstrapOptions {
  store: TicketStore;
  hlc: HybridClock;
  peer: string;
  token: string;
  /** Where the download is kept until it is adopted (the data directory: same file system). */
  dir: string;
  nodeId: string;
  now: number;
  maxSkewMs: number;
  /** Longest wait for the answer to start (the peer copies its database first), and between two chunks. */
  timeoutMs?: number;
  /** Ends the download or the preparation at once (the node stopping). */
  signal?: AbortSignal;
  /** Overrides of the download deadline, the sender's read deadline mirrored (tests). */
  minBytesPerSecond?: number;
  graceMs?: number;
  /** Overrides of MAX_SNAPSHOT_BYTES and MAX_SNAPSHOT_DOWNLOAD_MS (tests). */
  maxBytes?: number;
  maxDownloadMs?: number;
}

/**
 * Writes the body to `fd` as it arrives, refusing one longer or shorter than announced (which
 * is at most MAX_SNAPSHOT_BYTES). Each chunk is written synchronously inside its 'data' event,
 * so the body never holds data back: undici's HTTP/1 parser, paused by a consumer that lags
 * (a file stream's backpressure), throws an uncatchable AssertionError when the peer then closes
 * the connection (nodejs/undici#5360, not fixed in undici 7), and a peer answering with
 * `Connection: close` crashed the node. A 64 KiB write to the page cache takes microseconds.
 */
function writeBody(body: Readable, fd: number, length: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let seen = 0;
    let settled = false;
    const settle = (err?: Error): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      if (err) {
        body.destroy();
        reject(err);
      } else resolve();
    };
    const onAbort = (): void => settle(signal.reason instanceof Error ? signal.reason : new Error('the download was cancelled'));
    body.on('data', (chunk: Buffer) => {
      if (settled) return;
      seen += chunk.length;
      if (seen > length) return settle(new Error(`the snapshot is longer than the ${length} bytes announced`));
      try {
        for (let at = 0; at < chunk.length; ) at += writeSync(fd, chunk, at, chunk.length - at);
      } catch (err) {
        settle(err as Error);
      }
    });
    body.once('end', () => settle(seen < length ? new Error(`the snapshot ended after ${seen} of the ${length} bytes announced`) : undefined));
    body.once('error', (err) => settle(err));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The snapshot adopted (tickets, newest stamp), or undefined when the peer has none to give
 * or this node is no longer empty. Throws on a failed download or a refused snapshot; the
 * caller logs it and pulls instead.
 */
export async function bootstrapFromSnapshot(o: BootstrapOptions): Promise<(PreparedSnapshot & { downloadMs: number }) | undefined> {
  const started = Date.now();
  const timeout = o.timeoutMs ?? 120_000;
  const res = await request(`${o.peer.replace(/\/+$/, '')}/sync/snapshot`, {
    method: 'GET',
    headers: { authorization: `Bearer ${o.token}`, accept: SNAPSHOT_CONTENT_TYPE },
    headersTimeout: timeout,
    bodyTimeout: timeout,
    signal: o.signal,
  });
  if (res.statusCode === 404 || res.statusCode === 405) {
    await res.body.dump();
    return undefined;
  }
  const length = Number(res.headers['content-length']);
  const maxBytes = o.maxBytes ?? MAX_SNAPSHOT_BYTES;
  if (res.statusCode === 200 && Number.isSafeInteger(length) && length > maxBytes) {
    // Not a byte of it read: the connection is closed at once.
    res.body.destroy();
    throw new Error(`the peer's snapshot was refused: it announced ${length} bytes, more than the ${maxBytes} bytes a snapshot may take`);
  }
  if (res.statusCode !== 200 || res.headers['content-type'] !== SNAPSHOT_CONTENT_TYPE || !Number.isSafeInteger(length) || length < 0) {
    await res.body.dump();
    throw new Error(`the peer's snapshot answer was unusable (HTTP ${res.statusCode}, ${String(res.headers['content-type'])}, ${String(res.headers['content-length'])} bytes)`);
  }
  const file = join(o.dir, `snapshot-in-${randomUUID()}.db`);
  try {
    // A whole deadline, not only one between chunks: a peer trickling a byte a minute would
    // otherwise hold this node's replication round, and so its replication with every other peer, for ever.
    // The sender's rate, and never more than MAX_SNAPSHOT_DOWNLOAD_MS whatever the size.
    // Whole milliseconds: AbortSignal.timeout refuses a fraction.
    const byRate = (o.graceMs ?? SNAPSHOT_GRACE_MS) + (length / (o.minBytesPerSecond ?? SNAPSHOT_MIN_BYTES_PER_SECOND)) * 1000;
    const ceilingMs = o.maxDownloadMs ?? MAX_SNAPSHOT_DOWNLOAD_MS;
    const allowedMs = Math.ceil(Math.min(byRate, ceilingMs));
    const deadline = AbortSignal.timeout(allowedMs);
    // Created here, not by the stream: a stream opens its file later, on the thread pool, and a
    // body failing at once (the connection closed after the headers) left the file created
    // after the clean-up below had run.
    const fd = openSync(file, 'wx', 0o600);
    try {
      await writeBody(res.body, fd, length, o.signal ? AbortSignal.any([o.signal, deadline]) : deadline);
    } catch (err) {
      if (deadline.aborted) throw new Error(`the snapshot did not arrive within ${Math.round(allowedMs / 1000)} s (${length} bytes at 1 MiB/s and a minute's grace, ${Math.round(ceilingMs / 1000)} s at most)`);
      throw err;
    } finally {
      closeSync(fd);
    }
    const downloadMs = Date.now() - started;
    const screen = (t: Ticket): Ticket | undefined => screenPeerCopies([t], o.now, o.maxSkewMs).copies[0];
    const screenTombstone = (t: Tombstone): Tombstone | undefined => screenPeerCopies([t], o.now, o.maxSkewMs).tombstones[0];
    const prepared = await prepareSnapshot(file, { schema: o.store.schema(), nodeId: o.nodeId, screen, screenTombstone, signal: o.signal });
    if (!o.store.adopt(file)) return undefined;
    if (prepared.newest !== undefined) {
      o.hlc.observe(prepared.newest);
      await o.store.setCursor(o.peer, prepared.newest);
    }
    return { ...prepared, downloadMs };
  } finally {
    for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(file + suffix, { force: true });
  }
}
