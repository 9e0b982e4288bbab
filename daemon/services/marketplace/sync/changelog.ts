// The changelog rules: a push is stored all or none after the owner's newest sequence number, a
// retried batch answers its first result, only a registered device may push, entries must be
// sealed with the key new entries use, and the storage cap must admit their bytes. Pull pages.
//
// One owner's pushes take turns (their sequence numbers are gap-free and ordered), so pushes of
// one owner that arrive while another is being stored wait and are then decided together, in
// order, in one transaction: one lock, one read and one write for the group. Group commit, as
// databases do with their log: on PostgreSQL one owner's turn costs two round trips, however many
// pushes it carries.
import type { ChangeEntry } from '../../../../src/schemas/sync.js';
import { StoreUnavailableError } from '../../../../src/store/sql.js';
import { parsedPage, type NewEntry, type Owner, type PullPage, type PushRecord, type StoredPullPage, type SyncStore } from '../../../../src/store/sync.js';
import { entryBytes, type Usage } from '../../../../src/store/sync-usage.js';
import { formatTimestamp } from '../../../../src/util/time.js';
import { lockOwnerWithNext, ownerLockKey } from './owner-lock.js';
import type { DeviceSightings } from './device-sightings.js';

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

/** At most this many pushes, and entries, are decided in one transaction (bounds its statement). */
const GROUP_PUSHES = 32;
const GROUP_ENTRIES = 1024;

interface Waiting {
  input: PushInput;
  resolve: (o: PushOutcome) => void;
  reject: (err: unknown) => void;
}

/** Per store (one per database), per owner: the pushes waiting while a group is stored. */
const waiting = new WeakMap<SyncStore, Map<string, Waiting[]>>();

/** Appends the entries, sealed with `keyId`, after the owner's newest sequence number, all or none. */
export function push(store: SyncStore, o: Owner, input: PushInput): Promise<PushOutcome> {
  return new Promise((resolve, reject) => {
    let owners = waiting.get(store);
    if (!owners) waiting.set(store, (owners = new Map()));
    const key = ownerLockKey(o);
    const me: Waiting = { input, resolve, reject };
    const queue = owners.get(key);
    if (queue) {
      queue.push(me);
      return;
    }
    owners.set(key, []);
    void storeGroups(store, o, owners, key, [me]);
  });
}

/** Stores `group`, then each next group of the pushes that queued meanwhile, until none wait. */
async function storeGroups(store: SyncStore, o: Owner, owners: Map<string, Waiting[]>, key: string, group: Waiting[]): Promise<void> {
  for (;;) {
    await settle(store, o, group);
    const queue = owners.get(key)!;
    if (queue.length === 0) {
      owners.delete(key);
      return;
    }
    group = takeGroup(queue);
  }
}

/** The first pushes of `queue` (at least one), up to the group bounds, removed from it. */
function takeGroup(queue: Waiting[]): Waiting[] {
  let n = 0;
  let entries = 0;
  while (n < queue.length && n < GROUP_PUSHES && (n === 0 || entries + queue[n]!.input.entries.length <= GROUP_ENTRIES)) {
    entries += queue[n]!.input.entries.length;
    n++;
  }
  return queue.splice(0, n);
}

/** Decides and stores the group, answering each push; never throws. */
async function settle(store: SyncStore, o: Owner, group: Waiting[]): Promise<void> {
  try {
    const outcomes = await pushGroup(store, o, group.map((w) => w.input));
    group.forEach((w, i) => w.resolve(outcomes[i]!));
  } catch (err) {
    if (group.length === 1 || err instanceof StoreUnavailableError) {
      for (const w of group) w.reject(err);
      return;
    }
    // One push's bad input (text the database cannot store) must not fail the others': each
    // is tried alone, and only the push at fault gets the error.
    for (const w of group) await settle(store, o, [w]);
  }
}

/** The group's outcomes, in order, each push decided on the state the ones before it left. */
function pushGroup(store: SyncStore, o: Owner, inputs: PushInput[]): Promise<PushOutcome[]> {
  return store.transaction(async (tx) => {
    // The lock travels with the read, the writes with COMMIT: two round trips on PostgreSQL. The
    // owner's lock, taken before the read runs, keeps every figure true until the writes.
    await lockOwnerWithNext(tx, o);
    const state = await tx.pushState(o, { pushes: inputs.map((i) => ({ deviceId: i.deviceId, batchId: i.batchId })), withUsage: inputs.some((i) => i.admit !== undefined) });
    // New entries are sealed with the rotation's new key while one runs, so they never need re-sealing.
    const expected = state.rotationKeyId !== null ? state.rotationKeyId : state.keyId;
    let usage = state.usage;
    // Under the owner's lock nobody else appends, so the next numbers are free and gap-free.
    let seq = state.maxSeq;
    const records: PushRecord[] = [];
    // Batches stored earlier in this group, for a retry that arrives in the same group.
    const answered = new Map<string, { cursor: number; accepted: number }>();
    const outcomes = inputs.map((input, i): PushOutcome => {
      const batchKey = `${input.deviceId}\n${input.batchId}`;
      const prior = state.asked[i]!.batch ?? answered.get(batchKey);
      if (prior) return { kind: 'ok', cursor: prior.cursor, accepted: prior.accepted, duplicate: true };
      if (!state.asked[i]!.deviceExists) return { kind: 'unknown_device' };
      if (expected === null || input.keyId !== expected) return { kind: 'wrong_key', expected };
      const prepared = input.entries.map((e) => ({ e, dataJson: e.data === undefined ? null : JSON.stringify(e.data) }));
      const added = prepared.reduce((n, r) => n + entryBytes({ ...r.e, dataJson: r.dataJson }), 0);
      if (input.admit) {
        if (!input.admit(usage!, added)) return { kind: 'over_cap', usage: usage!, added };
      }
      if (usage) usage = { ...usage, used_bytes: usage.used_bytes + added, changelog_bytes: usage.changelog_bytes + added };
      const rows: NewEntry[] = prepared.map(({ e, dataJson }) => ({ seq: ++seq, keyId: input.keyId, deviceId: input.deviceId, entry: e, dataJson }));
      records.push({ entries: rows, addedBytes: added, deviceId: input.deviceId, batchId: input.batchId, cursor: seq, accepted: rows.length, now: input.now });
      answered.set(batchKey, { cursor: seq, accepted: rows.length });
      return { kind: 'ok', cursor: seq, accepted: rows.length, duplicate: false };
    });
    await tx.recordPushes(o, records);
    return outcomes;
  });
}

/** A page's bounds, and the pulling device with the time it pulled (when the request names one). */
type PullInput = { cursor: number; limit: number; device?: { id: string; nowMs: number } };

/**
 * Entries after `cursor`, oldest first, at most `limit`, each entry's data the JSON text it was
 * stored as (the route writes it into the answer unparsed); the pulling device (if named) is seen
 * now: written every time without `sightings`, else when they say it is due (device-sightings.ts).
 */
export async function pullStored(store: SyncStore, o: Owner, input: PullInput, sightings?: DeviceSightings): Promise<StoredPullPage> {
  const page = await store.storedPage(o, { cursor: input.cursor, limit: input.limit });
  const device = input.device;
  if (device === undefined) return page;
  if (sightings !== undefined && !sightings.due(o, device.id, device.nowMs)) return page;
  await store.touchDevice(o, device.id, formatTimestamp(device.nowMs));
  sightings?.wrote(o, device.id, device.nowMs);
  return page;
}

/** pullStored with each entry's data parsed. */
export async function pull(store: SyncStore, o: Owner, input: PullInput): Promise<PullPage> {
  return parsedPage(await pullStored(store, o, input));
}
