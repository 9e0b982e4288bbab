// createRun: `mkt tickets create TITLE [fields]` — creates a ticket and prints it.
import type { Factory } from '../../src/cli/factory.js';
import { UsageError } from '../../src/cli/errors.js';
import { callApi } from '../../src/cli/api-errors.js';
import { printJson } from '../../src/cli/output.js';
import { fieldsFrom, printTicket, ticketsClient, type ClientFlags, type FieldFlags } from './shared.js';

export interface CreateOptions extends ClientFlags, FieldFlags {
  factory: Factory;
  title: string;
}

export async function createRun(opts: CreateOptions): Promise<void> {
  const { io } = opts.factory;
  if (opts.title.trim() === '') throw new UsageError('the title must not be empty');
  const fields = await fieldsFrom(io, opts);
  const client = await ticketsClient(opts.factory, opts);
  const ticket = await callApi('tickets', () => client.create({ ...fields, title: opts.title }));
  if (opts.json) printJson(io, ticket);
  else printTicket(io, ticket);
}
