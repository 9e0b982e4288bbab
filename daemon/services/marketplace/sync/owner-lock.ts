// The one lock per sync owner (app, user): every read-decide-write of an owner's changelog, keys,
// rotation or devices takes it first, so on PostgreSQL (READ COMMITTED, several instances) the
// decision and its writes see one state, as SQLite's serial write transactions give anyway.
import type { Owner, SyncRows } from '../../../../src/store/sync.js';

/** The lock key of an owner (share it with any rule that must see the owner's rows unchanged). */
export function ownerLockKey(o: Owner): string {
  return `sync:${o.appId}:${o.userId}`;
}

/** Takes the owner's lock until the transaction `tx` ends. */
export function lockOwner(tx: SyncRows, o: Owner): Promise<void> {
  return tx.lock(ownerLockKey(o));
}

/**
 * Takes the owner's lock with the transaction's next statement (one round trip fewer on
 * PostgreSQL): for a rule whose every step under the lock is a statement of `tx`.
 */
export function lockOwnerWithNext(tx: SyncRows, o: Owner): Promise<void> {
  return tx.lockWithNext(ownerLockKey(o));
}
