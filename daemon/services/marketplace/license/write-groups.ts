// Small license writes (heartbeats, lease renewals) grouped into one write transaction, gathered
// while they keep coming (daemon/turn-gather.ts), where the store says grouping pays (SQLite: the
// commit, and a read transaction's file locks, are most of such a write's cost, and this
// process's writes are serial anyway), as the monitor groups heartbeat pings. Each is answered
// once its group committed; elsewhere each runs in a transaction of its own.
import type { LicenseRows, LicenseStore } from '../../../../src/store/license.js';
import { TurnGather } from '../../../turn-gather.js';

interface Pending {
  fn(tx: LicenseRows): Promise<unknown>;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

export class WriteGroups {
  private queue: Pending[] = [];
  private readonly gather = new TurnGather(
    () => this.queue.length,
    () => void this.flush(),
  );

  constructor(private readonly store: LicenseStore) {}

  /**
   * Runs `fn` inside a transaction, shared with the others of this turn when the store groups
   * writes. `fn` may be run twice (after its group failed): no side effects outside `tx`.
   */
  run<T>(fn: (tx: LicenseRows) => Promise<T>): Promise<T> {
    if (!this.store.groupsWrites) return this.store.transaction(fn);
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      this.gather.start();
    });
  }

  private async flush(): Promise<void> {
    const group = this.queue;
    this.queue = [];
    let results: unknown[];
    try {
      results = await this.store.transaction(async (tx) => {
        const out: unknown[] = [];
        for (const p of group) out.push(await p.fn(tx));
        return out;
      });
    } catch {
      // The group rolled back as a whole: each again on its own, so a failure that belongs to
      // one of them answers that one only.
      for (const p of group) this.store.transaction((tx) => p.fn(tx)).then(p.resolve, p.reject);
      return;
    }
    group.forEach((p, i) => p.resolve(results[i]));
  }
}
