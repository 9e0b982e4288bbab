// Last-writer-wins for ticket copies: the later `updated_at` wins, compared as instants; on
// equal stamps the copy whose canonical form sorts higher wins. That is a total order on
// copies, so every node keeps the same winner whatever order the copies reach it in.
import type { Ticket } from '../../../src/schemas/tickets.js';
import { compareStamps, parseStamp } from './stamp.js';

/** Every stored field in a fixed order (short_id is derived, so left out). */
export function canonical(t: Ticket): string {
  return JSON.stringify([
    t.updated_by,
    t.id,
    t.title,
    t.description,
    t.status,
    t.priority,
    t.channel,
    t.source,
    t.requester,
    t.assignee,
    t.tags,
    t.created_at,
  ]);
}

/**
 * `ceilingMs`, when given, is the latest stamp this node accepts (its clock plus the allowed
 * skew): a stored copy stamped beyond it (left by a version that did not refuse such copies)
 * counts as unstamped, so an honest edit replaces it instead of losing to it forever.
 */
export function decide(incoming: Ticket, stored: Ticket, ceilingMs?: number): 'take' | 'keep' | 'same' {
  const storedMs = parseStamp(stored.updated_at);
  const stale = ceilingMs !== undefined && storedMs !== undefined && storedMs > ceilingMs;
  const order = stale ? 1 : compareStamps(incoming.updated_at, stored.updated_at);
  if (order !== 0) return order > 0 ? 'take' : 'keep';
  const a = canonical(incoming);
  const b = canonical(stored);
  if (a === b) return 'same';
  return a > b ? 'take' : 'keep';
}
