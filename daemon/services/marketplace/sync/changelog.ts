// The changelog rules: a push is stored all or none after the owner's newest sequence number, a
// retried batch answers its first result, only a registered device may push, entries must be
// sealed with the key new entries use, and the storage cap must admit their bytes. Pull pages.
import type { ChangeEntry } from '../../../../src/schemas/sync.js';
import type { NewEntry, Owner, PullPage, SyncStore } from '../../../../src/store/sync.js';
import { entryBytes, type Usage } from '../../../../src/store/sync-usage.js';
import { lockOwnerWithNext } from './owner-lock.js';

export type PushOutcome =
  | { kind: 'ok'; cursor: number; accepted: number; duplicate: boolean }
  | { kind: 'unknown_device' }
  /** The entries are not sealed with the key new entries must use (`expected`, null: no key stored). */
  | { kind: 'wrong_key'; expected: number | null }
  /** `admit` refused `added` more changelog bytes on top of `usage`; nothing was stored. */
  | { kind: 'over_cap'; usage: Usage; added: number };

export interface PushInput {
  deviceId: string;
  batchId: string;
  keyId: number;
  entries: ChangeEntry[];
  now: string;
  /** The quota rule: whether `addedBytes` more fit on top of `usage` (absent: no cap). */
  admit?: (usage: Usage, addedBytes: number) => boolean;
}

/** Appends the entries, sealed with `keyId`, after the owner's newest sequence number, all or none. */
export function push(store: SyncStore, o: Owner, input: PushInput): Promise<PushOutcome> {
  return store.transaction(async (tx) => {
    // The lock travels with the read, the writes with COMMIT: two round trips on PostgreSQL. The
    // owner's lock, taken before the read runs, keeps every figure true until the writes.
    await lockOwnerWithNext(tx, o);
    const state = await tx.pushState(o, { deviceId: input.deviceId, batchId: input.batchId, withUsage: input.admit !== undefined });
    const prior = state.batch;
    if (prior) return { kind: 'ok', cursor: prior.cursor, accepted: prior.accepted, duplicate: true };
    if (!state.deviceExists) return { kind: 'unknown_device' };
    // New entries are sealed with the rotation's new key while one runs, so they never need re-sealing.
    const expected = state.rotationKeyId !== null ? state.rotationKeyId : state.keyId;
    if (expected === null || input.keyId !== expected) return { kind: 'wrong_key', expected };
    const prepared = input.entries.map((e) => ({ e, dataJson: e.data === undefined ? null : JSON.stringify(e.data) }));
    const added = prepared.reduce((n, r) => n + entryBytes({ ...r.e, dataJson: r.dataJson }), 0);
    if (input.admit) {
      const usage = state.usage!;
      if (!input.admit(usage, added)) return { kind: 'over_cap', usage, added };
    }
    // Under the owner's lock nobody else appends, so the next numbers are free and gap-free.
    let seq = state.maxSeq;
    const rows: NewEntry[] = prepared.map(({ e, dataJson }) => ({ seq: ++seq, keyId: input.keyId, deviceId: input.deviceId, entry: e, dataJson }));
    await tx.recordPush(o, { entries: rows, addedBytes: added, deviceId: input.deviceId, batchId: input.batchId, cursor: seq, accepted: rows.length, now: input.now });
    return { kind: 'ok', cursor: seq, accepted: rows.length, duplicate: false };
  });
}

/** Entries after `cursor`, oldest first, at most `limit`; the pulling device (if named) is seen now. */
export async function pull(store: SyncStore, o: Owner, input: { cursor: number; limit: number; deviceId?: string; now: string }): Promise<PullPage> {
  const page = await store.page(o, { cursor: input.cursor, limit: input.limit });
  if (input.deviceId !== undefined) await store.touchDevice(o, input.deviceId, input.now);
  return page;
}
