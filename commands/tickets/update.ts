// updateRun: `mkt tickets update ID [fields]` — changes the named fields and prints the ticket.
import type { Factory } from '../../src/cli/factory.js';
import { UsageError } from '../../src/cli/errors.js';
import { callApi } from '../../src/cli/api-errors.js';
import { printJson } from '../../src/cli/output.js';
import { fieldsFrom, printTicket, ticketsClient, type ClientFlags, type FieldFlags } from './shared.js';

export interface UpdateOptions extends ClientFlags, FieldFlags {
  factory: Factory;
  id: string;
  title?: string;
}

export async function updateRun(opts: UpdateOptions): Promise<void> {
  const { io } = opts.factory;
  const changes = await fieldsFrom(io, opts);
  if (opts.title !== undefined) changes.title = opts.title;
  if (Object.keys(changes).length === 0) throw new UsageError('nothing to change: give at least one of --status, --priority, --title, ... (see --help)');
  const client = await ticketsClient(opts.factory, opts);
  const ticket = await callApi('tickets', () => client.update(opts.id, changes));
  if (opts.json) printJson(io, ticket);
  else printTicket(io, ticket);
}
