// deleteRun: `mkt tickets delete ID [--yes]` — deletes a ticket, after asking on a terminal.
import type { Factory } from '../../src/cli/factory.js';
import { callApi } from '../../src/cli/api-errors.js';
import { NegativeError, UsageError } from '../../src/cli/errors.js';
import { cellText } from '../../src/cli/output.js';
import type { TicketsClient } from '../../src/client/tickets.js';
import { canAsk, confirm } from './confirm.js';
import { checkTicketId, ticketsClient, type ClientFlags } from './shared.js';

export interface DeleteOptions extends Omit<ClientFlags, 'json'> {
  factory: Factory;
  id: string;
  yes?: boolean;
}

export async function deleteRun(opts: DeleteOptions): Promise<void> {
  const { io } = opts.factory;
  const id = checkTicketId(opts.id);
  // A script (no terminal to answer on) must say so: a delete is final on every node after sync.
  if (!opts.yes && !canAsk(io)) throw new UsageError(`not deleting ticket ${id} without confirmation: stdin is not a terminal; pass --yes`);
  const client = await ticketsClient(opts.factory, opts);
  const target = opts.yes ? { id, shown: id } : await confirmed(opts.factory, client, id);
  await callApi('tickets', () => client.delete(target.id));
  if (io.stderr.isTTY) io.stderr.write(`deleted ticket ${cellText(target.shown)}\n`);
}

/**
 * Asks `Delete ticket <short id> "<title>"? [y/N]`: the title read first, so that a mistyped
 * short id shows as the wrong ticket (and an unknown one exits 1 before asking). Returns the
 * full id, so that the delete goes to the ticket shown even if a newer one makes the short id
 * ambiguous meanwhile; a no is exit 1.
 */
async function confirmed(f: Factory, client: TicketsClient, id: string): Promise<{ id: string; shown: string }> {
  const ticket = await callApi('tickets', () => client.get(id));
  const shown = cellText(ticket.short_id);
  if (!(await confirm(f.io, `Delete ticket ${shown} "${cellText(ticket.title)}"?`))) throw new NegativeError(`ticket ${shown} not deleted`);
  return { id: ticket.id, shown: ticket.short_id };
}
