// Lease renewals (heartbeats, and verifies of a machine whose lease is live), grouped into one
// write transaction per turn of the event loop where the store says grouping pays (SQLite: the
// commit is most of a renewal's cost, and this process's writes are serial anyway), as the
// monitor groups heartbeat pings. Each renewal is answered once its group committed.
import type { Lease, LicenseRows, LicenseStore } from '../../../../src/store/license.js';
import type { LicenseEventInput } from '../../../../src/store/license-events.js';

export interface Renewal {
  keyId: string;
  machineId: string;
  leaseSeconds: number;
  /** The `license.lease_renewed` event of the renewed lease (recorded in the same transaction). */
  event(lease: Lease): LicenseEventInput;
}

interface Pending extends Renewal {
  resolve(lease: Lease | undefined): void;
  reject(err: unknown): void;
}

async function renewOne(tx: LicenseRows, r: Renewal): Promise<Lease | undefined> {
  const lease = await tx.renewLease(r.keyId, r.machineId, r.leaseSeconds);
  if (lease) await tx.recordEvent(r.event(lease));
  return lease;
}

export class LeaseRenewals {
  private queue: Pending[] = [];
  private scheduled = false;

  constructor(private readonly store: LicenseStore) {}

  /** Renews a live lease; undefined when the machine holds none (or the key may not be used). */
  renew(r: Renewal): Promise<Lease | undefined> {
    if (!this.store.groupsWrites) return this.store.transaction((tx) => renewOne(tx, r));
    return new Promise((resolve, reject) => {
      this.queue.push({ ...r, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    const group = this.queue;
    this.queue = [];
    let leases: (Lease | undefined)[];
    try {
      leases = await this.store.transaction(async (tx) => {
        const out: (Lease | undefined)[] = [];
        for (const r of group) out.push(await renewOne(tx, r));
        return out;
      });
    } catch {
      // The group rolled back as a whole: each renewal again on its own, so a failure that
      // belongs to one of them answers that one only.
      for (const r of group) this.store.transaction((tx) => renewOne(tx, r)).then(r.resolve, r.reject);
      return;
    }
    group.forEach((r, i) => r.resolve(leases[i]));
  }
}
