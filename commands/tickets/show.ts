// showRun: `mkt tickets show ID` — one ticket, by full or short id.
import type { Factory } from '../../src/cli/factory.js';
import { callApi } from '../../src/cli/api-errors.js';
import { printJson } from '../../src/cli/output.js';
import { checkTicketId, printTicket, ticketsClient, type ClientFlags } from './shared.js';

export interface ShowOptions extends ClientFlags {
  factory: Factory;
  id: string;
}

export async function showRun(opts: ShowOptions): Promise<void> {
  const id = checkTicketId(opts.id);
  const client = await ticketsClient(opts.factory, opts);
  const ticket = await callApi('tickets', () => client.get(id));
  if (opts.json) printJson(opts.factory.io, ticket);
  else printTicket(opts.factory.io, ticket);
}
