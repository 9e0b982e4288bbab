// GET /sync/snapshot: this node's whole ticket database as one SQLite file, for a new, empty
// peer to start from instead of pulling a million tickets page by page (Raft's InstallSnapshot
// and pg_basebackup play the same part). The copy is made by SQLite's online backup into the
// data directory, streamed, and removed; one snapshot at a time, since each costs a copy of
// the database on disk (a second request meanwhile is 429 with Retry-After). The receiver checks everything in it (src/store/ticket-snapshot.ts).
import type { FastifyInstance } from 'fastify';
import { randomUUID } from 'node:crypto';
import { chmodSync, createReadStream, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { TicketStore } from '../../../src/store/tickets.js';
import { HttpError } from '../../plugins/errors.js';
import { asDiskFull } from '../../../src/util/disk-full.js';
import { rawResponse } from '../../plugins/openapi.js';
import { ErrorSchema } from '../../../src/schemas/common.js';

export const SNAPSHOT_CONTENT_TYPE = 'application/vnd.sqlite3';
const PREFIX = 'snapshot-';
const LEFTOVER = /^snapshot-.*\.db(-wal|-shm|-journal)?$/;

/**
 * The slowest a peer may read a snapshot, on average, after a minute's grace: one that trickles
 * (or stalls behind full socket buffers) would otherwise hold the one-at-a-time lock, and the
 * copy on disk, for as long as it likes. 1 MiB/s gives a million tickets (880 MiB) 16 minutes.
 */
export const SNAPSHOT_MIN_BYTES_PER_SECOND = 1024 * 1024;
export const SNAPSHOT_GRACE_MS = 60_000;

export interface SnapshotRouteDeps {
  store: TicketStore;
  dataDir: string;
  /** Overrides of the read deadline (tests). */
  minBytesPerSecond?: number;
  graceMs?: number;
}

export function snapshotRoute(app: FastifyInstance, deps: SnapshotRouteDeps): void {
  // Copies left by a kill in the middle of a send, or of a download being prepared (bootstrap.ts:
  // `snapshot-in-*`, with the WAL and shared-memory files SQLite keeps beside it meanwhile).
  for (const f of readdirSync(deps.dataDir)) if (LEFTOVER.test(f)) rmSync(join(deps.dataDir, f), { force: true });
  let sending = false;

  app.get(
    '/sync/snapshot',
    { schema: { operationId: 'syncSnapshot', summary: 'The whole ticket database as an SQLite file, for an empty peer to start from', response: { 200: rawResponse(SNAPSHOT_CONTENT_TYPE, 'the SQLite database file', true), 429: ErrorSchema, 500: ErrorSchema } } },
    async (req, reply) => {
      if (sending) {
        reply.header('retry-after', '30');
        throw new HttpError(429, 'a snapshot is being sent to another peer; retry later');
      }
      sending = true;
      const file = join(deps.dataDir, `${PREFIX}${randomUUID()}.db`);
      const done = (): void => {
        rmSync(file, { force: true });
        sending = false;
      };
      try {
        await deps.store.backupTo(file);
        chmodSync(file, 0o600);
      } catch (err) {
        done();
        // A snapshot is a copy of the database on this node's disk: a full one says so (spec's 500).
        throw new HttpError(500, asDiskFull(err, 'writing a snapshot copy of the database')?.message ?? `storage failure: ${(err as Error).message}`);
      }
      const stream = createReadStream(file);
      const bytes = statSync(file).size;
      const allowedMs = (deps.graceMs ?? SNAPSHOT_GRACE_MS) + (bytes / (deps.minBytesPerSecond ?? SNAPSHOT_MIN_BYTES_PER_SECOND)) * 1000;
      const deadline = setTimeout(() => {
        req.log.warn({ bytes, allowed_ms: Math.round(allowedMs) }, 'a snapshot was read too slowly; its connection is closed');
        reply.raw.destroy();
        stream.destroy();
      }, allowedMs);
      deadline.unref();
      stream.once('close', () => {
        clearTimeout(deadline);
        done();
      });
      req.log.info({ bytes }, 'sending a snapshot');
      return reply.header('content-type', SNAPSHOT_CONTENT_TYPE).header('content-length', String(bytes)).send(stream);
    },
  );
}
