// Offers screened peer copies (a push body or a pull page) to the store: the hybrid clock
// sees every stamp first, then each copy is merged field by field against the stored ticket.
// The one place that sets the merge ceiling, so push and pull cannot drift apart.
import type { SyncItem } from '../../../src/schemas/tickets.js';
import type { MergeResult, TicketStore } from '../../../src/store/tickets.js';
import { mergeItem } from './item-merge.js';
import type { HybridClock } from './hybrid-clock.js';

/**
 * `from` is the sender's node id when known. The ceiling is the latest stamp this node
 * accepts: its clock plus the skew, or its own newest stamp, which may lie a few ms beyond
 * (an edit right after a copy at the bound) and must never be taken for a stale leftover.
 */
export function offerCopies(store: TicketStore, hlc: HybridClock, copies: SyncItem[], now: number, maxSkewMs: number, from?: string): Promise<MergeResult> {
  for (const t of copies) hlc.observe(t.updated_at);
  const ceilingMs = Math.max(now + maxSkewMs, hlc.newest);
  return store.merge(copies, (incoming, stored) => mergeItem(incoming, stored, ceilingMs), from);
}
