// The changelog, device and key counters of sync_status (storage use is the blob store's).
import type { Owner, SyncCounts, SyncStore } from '../../../../src/store/sync.js';

export function syncCounts(store: SyncStore, o: Owner): Promise<SyncCounts> {
  // One transaction: the counters describe one state of the owner's rows.
  return store.transaction(async (tx) => {
    const key = await tx.key(o);
    return {
      cursor: await tx.maxSeq(o),
      entry_count: await tx.entryCount(o),
      device_count: await tx.deviceCount(o),
      key_version: key?.key_version ?? null,
      key_id: key?.key_id ?? null,
      rotation_in_progress: (await tx.activeRotation(o)) !== undefined,
    };
  });
}
