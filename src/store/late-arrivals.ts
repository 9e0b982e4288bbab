// Copies this node stored from other nodes, by the second they arrived, kept in memory for a
// window. A copy keeps its origin's stamp, so it can arrive after a peer's cursor has passed that
// stamp; peers used to re-read a fixed 10-minute overlap before their cursor every round for such
// copies, which made every round re-send every ticket changed in the last 10 minutes. With this
// record a round re-reads only as far back as the oldest stamp that arrived since the round before
// it (docs/tickets.md, "The peer loop and pushes").
//
// In memory on purpose: after a restart nothing is known of what arrived before it, so every
// peer's first round re-reads the whole overlap, as it always did; no schema change, and a
// snapshot adopted or a backup restored cannot bring back a record that is not true of it.

/** How long arrivals are remembered: a round whose previous one is older re-reads the whole overlap. */
export const LATE_WINDOW_MS = 10 * 60 * 1000;

/** The granularity of the record: a copy stored in the same second as an instant asked about counts. */
const SLOT_MS = 1_000;

export class LateArrivals {
  /** Second (epoch ms / 1,000) → per sender ('' when none was named) the oldest stamp stored in it. */
  private readonly slots = new Map<number, Map<string, string>>();
  /** Arrivals are known from this instant on. */
  private since: number;

  constructor(
    readonly now: () => number = Date.now,
    private readonly windowMs = LATE_WINDOW_MS,
  ) {
    this.since = now();
  }

  /**
   * A copy stored with `stamp` (canonical RFC 3339, so text order is time order); `from`, the
   * node whose copy was stored exactly as it sent it (it needs nothing back).
   */
  record(stamp: string, from = ''): void {
    const now = this.now();
    const slot = Math.floor(now / SLOT_MS);
    let held = this.slots.get(slot);
    if (held === undefined) {
      // A new slot: forget those no question can still reach.
      const oldest = Math.floor((now - this.windowMs) / SLOT_MS) - 1;
      for (const s of this.slots.keys()) if (s < oldest) this.slots.delete(s);
      this.slots.set(slot, (held = new Map()));
    }
    const was = held.get(from);
    if (was === undefined || stamp < was) held.set(from, stamp);
  }

  /** Nothing is known of what arrived before now (the database was replaced). */
  forget(): void {
    this.slots.clear();
    this.since = this.now();
  }

  /**
   * The oldest stamp among copies stored at or after `afterMs` (read off this object's `now()`,
   * by an earlier call), less those stored exactly as `asker` sent them; null when none arrived;
   * undefined when that is not known: `afterMs` is before this record began, outside the window,
   * or ahead of the clock (a clock set back). A copy stored in the same second as `afterMs`, even
   * just before it, counts.
   */
  oldestSince(afterMs: number, asker?: string): string | null | undefined {
    const now = this.now();
    if (!Number.isSafeInteger(afterMs) || afterMs < this.since || afterMs < now - this.windowMs || afterMs > now) return undefined;
    const from = Math.floor(afterMs / SLOT_MS);
    let oldest: string | null = null;
    for (const [s, held] of this.slots) {
      if (s < from) continue;
      for (const [sender, stamp] of held) if (sender !== asker && (oldest === null || stamp < oldest)) oldest = stamp;
    }
    return oldest;
  }
}
