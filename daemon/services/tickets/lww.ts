// Last-writer-wins for ticket copies: the later `updated_at` wins; on equal stamps the
// copy whose canonical form sorts higher wins. That is a total order on copies, so every
// node keeps the same winner whatever order the copies reach it in, and all converge.
import type { Ticket } from '../../../src/schemas/tickets.js';

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

export function decide(incoming: Ticket, stored: Ticket): 'take' | 'keep' | 'same' {
  if (incoming.updated_at !== stored.updated_at) return incoming.updated_at > stored.updated_at ? 'take' : 'keep';
  const a = canonical(incoming);
  const b = canonical(stored);
  if (a === b) return 'same';
  return a > b ? 'take' : 'keep';
}
