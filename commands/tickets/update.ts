// updateRun: `mkt tickets update ID [fields]` — changes the named fields and prints the ticket.
import type { Factory } from '../../src/cli/factory.js';
import { UsageError } from '../../src/cli/errors.js';
import { callApi } from '../../src/cli/api-errors.js';
import { printJson } from '../../src/cli/output.js';
import { checkTicketId, fieldsFrom, printTicket, tagEdits, ticketsClient, type ClientFlags, type FieldFlags, type TagEditFlags } from './shared.js';

export interface UpdateOptions extends ClientFlags, FieldFlags, TagEditFlags {
  factory: Factory;
  id: string;
  title?: string;
}

export async function updateRun(opts: UpdateOptions): Promise<void> {
  const { io } = opts.factory;
  const id = checkTicketId(opts.id);
  // --tag with --add-tag or --remove-tag is refused by the parser (the option's conflicts).
  const changes = { ...(await fieldsFrom(io, opts)), ...tagEdits(opts) };
  // Neither field has a "nobody" to clear to (the server refuses blanks): said before asking.
  for (const [flag, v] of [['--title', opts.title], ['--source', opts.source]] as const) {
    if (v !== undefined && v.trim() === '') throw new UsageError(`${flag} must not be empty`);
  }
  if (opts.title !== undefined) changes.title = opts.title;
  if (Object.keys(changes).length === 0) throw new UsageError('nothing to change: give at least one of --status, --priority, --title, --add-tag, ... (see --help)');
  const client = await ticketsClient(opts.factory, opts);
  // Tags are added and removed by the server, in the transaction that reads the ticket: a
  // read-then-write here would drop a tag another edit added in between.
  const ticket = await callApi('tickets', () => client.update(id, changes));
  if (opts.json) printJson(io, ticket);
  else printTicket(io, ticket);
}
