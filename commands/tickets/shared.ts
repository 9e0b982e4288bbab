// What the `mkt tickets` verbs share: the client, turning flags into request fields (enum
// values checked here so a typo is a usage error, not a silently ignored filter), and output.
import type { Factory } from '../../src/cli/factory.js';
import { UsageError } from '../../src/cli/errors.js';
import { readAll, type IOStreams } from '../../src/cli/io.js';
import { printFields } from '../../src/cli/output.js';
import { TicketsClient } from '../../src/client/tickets.js';
import { CHANNELS, PRIORITIES, STATUSES, parseChannel, parsePriority, parseStatus, type Ticket, type UpdateTicket } from '../../src/schemas/tickets.js';

export interface ClientFlags {
  server?: string;
  json?: boolean;
}

export interface FieldFlags {
  description?: string;
  status?: string;
  priority?: string;
  channel?: string;
  source?: string;
  requester?: string;
  assignee?: string;
  tag?: string[];
}

export async function ticketsClient(f: Factory, flags: ClientFlags): Promise<TicketsClient> {
  return new TicketsClient(await f.http('tickets', { server: flags.server }));
}

export function checkEnum(name: string, raw: string | undefined, parse: (v: unknown) => string | undefined, allowed: readonly string[]): string | undefined {
  if (raw === undefined) return undefined;
  const v = parse(raw);
  if (v === undefined) throw new UsageError(`invalid --${name} ${JSON.stringify(raw)}; choose one of: ${allowed.join(', ')}`);
  return v;
}

export const checkStatus = (raw: string | undefined): string | undefined => checkEnum('status', raw, parseStatus, STATUSES);
export const checkPriority = (raw: string | undefined): string | undefined => checkEnum('priority', raw, parsePriority, PRIORITIES);
export const checkChannel = (raw: string | undefined): string | undefined => checkEnum('channel', raw, parseChannel, CHANNELS);

/** The editable fields named by flags; absent flags stay absent. */
export async function fieldsFrom(io: IOStreams, flags: FieldFlags): Promise<UpdateTicket> {
  const out: UpdateTicket = {};
  if (flags.description !== undefined) out.description = flags.description === '-' ? (await readAll(io.stdin)).replace(/\n$/, '') : flags.description;
  const status = checkStatus(flags.status);
  const priority = checkPriority(flags.priority);
  const channel = checkChannel(flags.channel);
  if (status) out.status = status;
  if (priority) out.priority = priority;
  if (channel) out.channel = channel;
  if (flags.source !== undefined) out.source = flags.source;
  if (flags.requester !== undefined) out.requester = flags.requester;
  if (flags.assignee !== undefined) out.assignee = flags.assignee;
  if (flags.tag !== undefined) out.tags = flags.tag;
  return out;
}

export function printTicket(io: IOStreams, t: Ticket): void {
  printFields(io, [
    ['id', t.id],
    ['title', t.title],
    ['status', t.status],
    ['priority', t.priority],
    ['channel', t.channel],
    ['source', t.source],
    ['requester', t.requester],
    ['assignee', t.assignee],
    ['tags', t.tags.join(', ')],
    ['created', t.created_at],
    ['updated', t.updated_at],
    ['description', t.description],
  ]);
}
