// The device rule: registering a name the owner already has updates that device (its id stays);
// a new name gets a new device.
import { randomUUID } from 'node:crypto';
import type { Owner, SyncDevice, SyncStore } from '../../../../src/store/sync.js';
import { lockOwner } from './owner-lock.js';

/** Registers a device, or updates the one of the same name. */
export function registerDevice(store: SyncStore, o: Owner, input: { name: string; platform?: string; now: string }): Promise<SyncDevice> {
  return store.transaction(async (tx) => {
    await lockOwner(tx, o);
    const existing = await tx.deviceByName(o, input.name);
    if (existing) {
      await tx.updateDevice(o, existing.id, { platform: input.platform ?? null, now: input.now });
      return (await tx.device(o, existing.id))!;
    }
    const d: SyncDevice = { id: randomUUID(), name: input.name, platform: input.platform ?? null, created_at: input.now, last_seen_at: input.now };
    await tx.insertDevice(o, d);
    return d;
  });
}

/** Removes the owner's device `id` (false: the owner has none of that id); it can no longer push or rotate. */
export function deleteDevice(store: SyncStore, o: Owner, id: string): Promise<boolean> {
  // Under the lock: a push or rotation begin deciding on this device sees it either present or gone.
  return store.transaction(async (tx) => {
    await lockOwner(tx, o);
    return tx.deleteDevice(o, id);
  });
}
