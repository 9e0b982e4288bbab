// deleteRun: `mkt tickets delete ID [--yes]` — deletes a ticket, after asking on a terminal.
import type { Factory } from '../../src/cli/factory.js';
import { callApi } from '../../src/cli/api-errors.js';
import { NegativeError, UsageError } from '../../src/cli/errors.js';
import { cellText } from '../../src/cli/output.js';
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
  // A script (no terminal to answer on) must say so: deleting is final on every node after sync.
  if (!opts.yes && !canAsk(io)) throw new UsageError(`not deleting ticket ${id} without confirmation: stdin is not a terminal; pass --yes`);
  const client = await ticketsClient(opts.factory, opts);
  let shown = id;
  if (!opts.yes) {
    // The title in the question, so that a mistyped short id shows as the wrong ticket (404: exit 1 here).
    const ticket = await callApi('tickets', () => client.get(id));
    shown = ticket.short_id;
    if (!(await confirm(io, `Delete ticket ${cellText(ticket.short_id)} "${cellText(ticket.title)}"?`))) throw new NegativeError(`ticket ${cellText(ticket.short_id)} not deleted`);
    // The full id from here on: a short id that a newer ticket made ambiguous must not delete another one.
    await callApi('tickets', () => client.delete(ticket.id));
  } else {
    await callApi('tickets', () => client.delete(id));
  }
  if (io.stderr.isTTY) io.stderr.write(`deleted ticket ${cellText(shown)}\n`);
}
