// `push` and `pull`: changelog lines `{table, op, row_id, data}` sealed before they leave the
// device (bound to table, op, row id and key id) and opened after they come back.
import { randomUUID } from 'node:crypto';
import { NegativeError, UsageError } from '../cli/errors.js';
import { ApiError, NetworkError } from '../client/http.js';
import { openEntryData, sealEntryData } from '../crypto/sync-entry.js';
import type { ChangeEntry, StoredChangeEntry } from './wire.js';
import type { SyncSession } from './session.js';

export const PUSH_BATCH = 500;

export interface PlainChange {
  table: string;
  op: string;
  row_id: string;
  timestamp: string;
  data: unknown;
}

/** Parses JSON lines; blank lines are skipped, anything else malformed is a usage error naming the line. */
export function parseChanges(text: string, now: () => Date): PlainChange[] {
  const out: PlainChange[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '') return;
    let v: Record<string, unknown>;
    try {
      v = JSON.parse(line) as Record<string, unknown>;
    } catch {
      throw new UsageError(`line ${i + 1}: not JSON`);
    }
    if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new UsageError(`line ${i + 1}: expected an object {table, op, row_id, data}`);
    for (const f of ['table', 'op', 'row_id'] as const) {
      if (typeof v[f] !== 'string' || (v[f] as string) === '') throw new UsageError(`line ${i + 1}: "${f}" must be a non-empty string`);
    }
    if (v.timestamp !== undefined && (typeof v.timestamp !== 'string' || Number.isNaN(Date.parse(v.timestamp)))) throw new UsageError(`line ${i + 1}: "timestamp" must be an ISO 8601 time`);
    out.push({ table: v.table as string, op: v.op as string, row_id: v.row_id as string, timestamp: (v.timestamp as string | undefined) ?? now().toISOString(), data: v.data ?? null });
  });
  return out;
}

/** The key id new entries are sealed with: a rotation's new key while one runs, else the current one. */
async function activeKeyId(s: SyncSession): Promise<number> {
  const info = await s.client.getKey();
  if (!info) throw new NegativeError('this account has no sync key yet', 'run `mkt sync key init` first');
  return info.pending_key?.key_id ?? info.key_id;
}

export interface PushReport {
  /** Lines read and sent. */
  pushed: number;
  /** Entries the server stored now (a batch it had applied before stores none again). */
  accepted: number;
  /** Batches the server had applied before (a retry after a lost answer). */
  duplicate_batches: number;
  /** The server's cursor after the last batch: the sequence number of its last entry; null when nothing was sent. */
  cursor: number | null;
  key_id: number;
}

/**
 * Seals and pushes in batches; a batch is retried with its batch id, so the server applies it
 * once. A rotation begun (or completed) elsewhere between sealing and pushing makes the server
 * refuse the key id (409): the batch is sealed again with the key it now expects.
 */
export async function pushChanges(s: SyncSession, changes: PlainChange[], opts: { retries?: number } = {}): Promise<PushReport> {
  const deviceId = s.profile.device_id;
  if (!deviceId) throw new NegativeError('this device is not registered', 'run `mkt sync devices rename NAME` to register it');
  let keyId = await activeKeyId(s);
  let cursor: number | null = null;
  let accepted = 0;
  let duplicates = 0;
  const seal = async (batch: PlainChange[], id: number): Promise<ChangeEntry[]> => {
    const key = await s.keyFor(id);
    return batch.map((c) => ({
      table: c.table,
      op: c.op,
      row_id: c.row_id,
      timestamp: c.timestamp,
      data: sealEntryData(key, { table: c.table, op: c.op, row_id: c.row_id, key_id: id }, c.data),
    }));
  };
  for (let i = 0; i < changes.length; i += PUSH_BATCH) {
    const batch = changes.slice(i, i + PUSH_BATCH);
    let req = { device_id: deviceId, batch_id: randomUUID(), key_id: keyId, entries: await seal(batch, keyId) };
    for (let attempt = 0, resealed = false; ; attempt++) {
      try {
        const answer = await s.client.push(req);
        cursor = answer.cursor;
        accepted += answer.accepted;
        if (answer.duplicate) duplicates++;
        break;
      } catch (err) {
        if (err instanceof ApiError && err.status === 403) throw new NegativeError(`this device is not registered (${err.message})`, 'run `mkt sync devices rename NAME` to register it');
        if (err instanceof ApiError && err.status === 409 && !resealed) {
          resealed = true;
          const now = await activeKeyId(s);
          if (now === keyId) throw err;
          keyId = now;
          req = { device_id: deviceId, batch_id: randomUUID(), key_id: keyId, entries: await seal(batch, keyId) };
          continue;
        }
        if (!(err instanceof NetworkError) || attempt >= (opts.retries ?? 2)) throw err;
      }
    }
  }
  return { pushed: changes.length, accepted, duplicate_batches: duplicates, cursor, key_id: keyId };
}

export interface PulledChange extends PlainChange {
  seq: number;
  device_id?: string | null;
}

/**
 * Pulls every entry after `since` (default: the saved cursor), opening each; calls `emit` page by
 * page and, unless `since` was given, saves the cursor after each page is emitted.
 */
export async function pullChanges(s: SyncSession, emit: (c: PulledChange[]) => void, opts: { since?: number; limit?: number } = {}): Promise<{ pulled: number; cursor: number }> {
  const ring = await s.keyring();
  let cursor = opts.since ?? s.profile.cursor;
  let pulled = 0;
  for (;;) {
    const page = await s.client.pull({ cursor, limit: opts.limit ?? 500, ...(s.profile.device_id ? { device_id: s.profile.device_id } : {}) });
    const out: PulledChange[] = [];
    for (const e of page.entries) out.push(await openOne(s, e, ring));
    emit(out);
    pulled += out.length;
    const next = page.entries.length > 0 ? Math.max(page.cursor ?? 0, page.entries[page.entries.length - 1]!.seq) : Math.max(cursor, page.cursor ?? cursor);
    cursor = next;
    if (opts.since === undefined) s.save((p) => (p.cursor = cursor));
    if (!page.has_more || page.entries.length === 0) break;
  }
  return { pulled, cursor };
}

async function openOne(s: SyncSession, e: StoredChangeEntry, ring: Awaited<ReturnType<SyncSession['keyring']>>): Promise<PulledChange> {
  const key = await s.keyFor(e.key_id, ring);
  const data = openEntryData(key, { table: e.table, op: e.op, row_id: e.row_id, key_id: e.key_id }, e.data);
  return { seq: e.seq, table: e.table, op: e.op, row_id: e.row_id, timestamp: e.timestamp, device_id: e.device_id, data };
}
