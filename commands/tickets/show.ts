// showRun: `mkt tickets show ID` — one ticket, by full or short id, and its comments oldest first.
import type { Factory } from '../../src/cli/factory.js';
import { callApi } from '../../src/cli/api-errors.js';
import { printJson } from '../../src/cli/output.js';
import { checkTicketId, printComments, printTicket, ticketsClient, type ClientFlags } from './shared.js';

export interface ShowOptions extends ClientFlags {
  factory: Factory;
  id: string;
}

export async function showRun(opts: ShowOptions): Promise<void> {
  const id = checkTicketId(opts.id);
  const client = await ticketsClient(opts.factory, opts);
  const ticket = await callApi('tickets', () => client.get(id));
  // --json: the server's object as it came, comments included.
  if (opts.json) return printJson(opts.factory.io, ticket);
  printTicket(opts.factory.io, ticket);
  printComments(opts.factory.io, ticket.comments ?? []);
}
