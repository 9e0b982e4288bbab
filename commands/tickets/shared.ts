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

/**
 * Ticket text comes from anyone with the token and from every peer: control characters other
 * than tab and newlines are shown escaped (`\x1b`), so a title cannot clear the screen or
 * rewrite the terminal's title. `--json` keeps them exact.
 */
export function visible(s: string | null): string | null {
  // eslint-disable-next-line no-control-regex -- control characters are what this finds
  return s === null ? null : s.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

export function printTicket(io: IOStreams, t: Ticket): void {
  printFields(io, [
    ['id', t.id],
    ['title', visible(t.title)],
    ['status', t.status],
    ['priority', t.priority],
    ['channel', t.channel],
    ['source', visible(t.source)],
    ['requester', visible(t.requester)],
    ['assignee', visible(t.assignee)],
    ['tags', t.tags.map(visible).join(', ')],
    ['created', t.created_at],
    ['updated', t.updated_at],
    ['description', visible(t.description)],
  ]);
}
