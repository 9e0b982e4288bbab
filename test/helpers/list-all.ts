// Every ticket a store lists for a filter, walked page by page through its `next` positions:
// the store tests compare whole lists, and a walk also proves the pages join without a gap.
import type { ListPosition, TicketFilter, TicketStore } from '../../src/store/tickets.js';
import type { Ticket } from '../../src/schemas/tickets.js';

export async function listAll(store: TicketStore, filter: TicketFilter = {}, limit = 40): Promise<Ticket[]> {
  const out: Ticket[] = [];
  let after: ListPosition | undefined;
  for (;;) {
    const page = await store.list(filter, { limit, after });
    out.push(...page.tickets);
    if (!page.more) return out;
    after = page.next;
  }
}
