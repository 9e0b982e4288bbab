// What the `mkt tickets` verbs share: the client, turning flags into request fields (enum
// values checked here so a typo is a usage error, not a silently ignored filter), and output.
import type { Factory } from '../../src/cli/factory.js';
import { UsageError } from '../../src/cli/errors.js';
import { readAll, type IOStreams } from '../../src/cli/io.js';
import { cellText, printFields } from '../../src/cli/output.js';
import { TicketsClient, type TicketComment } from '../../src/client/tickets.js';
import { PERSON_NONE, SHORT_ID_MIN, type Ticket, type UpdateTicket } from '../../src/schemas/tickets.js';

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

/** The flags of `update` that change single tags (our server's add_tags/remove_tags). */
export interface TagEditFlags {
  addTag?: string[];
  removeTag?: string[];
}

export async function ticketsClient(f: Factory, flags: ClientFlags): Promise<TicketsClient> {
  return new TicketsClient(await f.http('tickets', { server: flags.server }));
}

/** The editable fields named by flags; absent flags stay absent. */
export async function fieldsFrom(io: IOStreams, flags: FieldFlags): Promise<UpdateTicket> {
  const out: UpdateTicket = {};
  if (flags.description !== undefined) out.description = flags.description === '-' ? (await readAll(io.stdin)).replace(/\n$/, '') : flags.description;
  // status, priority and channel come canonical from the parser (choiceOption normalises "On Hold").
  if (flags.status) out.status = flags.status;
  if (flags.priority) out.priority = flags.priority;
  if (flags.channel) out.channel = flags.channel;
  if (flags.source !== undefined) out.source = flags.source;
  // "" (or blanks) clears the field: sent as null, which is what the server stores for nobody.
  if (flags.requester !== undefined) out.requester = blankToNull(flags.requester);
  if (flags.assignee !== undefined) out.assignee = blankToNull(flags.assignee);
  if (flags.tag !== undefined) out.tags = flags.tag;
  return out;
}

const blankToNull = (v: string): string | null => (v.trim() === '' ? null : v);

/** `--add-tag`/`--remove-tag` as the update body's add_tags/remove_tags; a tag in both is a usage error. */
export function tagEdits(flags: TagEditFlags): Pick<UpdateTicket, 'add_tags' | 'remove_tags'> {
  const both = flags.addTag?.find((t) => flags.removeTag?.includes(t));
  if (both !== undefined) throw new UsageError(`--add-tag and --remove-tag both name ${JSON.stringify(both)}; give it to one of them`);
  return { ...(flags.addTag ? { add_tags: flags.addTag } : {}), ...(flags.removeTag ? { remove_tags: flags.removeTag } : {}) };
}

/**
 * An id argument, checked before any request: fewer than SHORT_ID_MIN characters can name no
 * ticket (every id is a UUID and the server takes prefixes from 8 on), so the user hears why.
 */
export function checkTicketId(raw: string): string {
  if (raw.trim().length < SHORT_ID_MIN) throw new UsageError(`ticket id ${JSON.stringify(raw)} is too short: give at least ${SHORT_ID_MIN} characters`);
  return raw.trim();
}

/** `--assignee`/`--requester` of `list`: "" asks for tickets without one, as `none` does. */
export function personFilter(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  return raw.trim() === '' ? PERSON_NONE : raw;
}

/** `comments`: the count, when the server gave one (a node of the previous release does not). */
export function printTicket(io: IOStreams, t: Omit<Ticket, 'comments'> & { comment_count?: number }): void {
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
    ...(t.comment_count !== undefined ? [['comments', t.comment_count] as [string, number]] : []),
  ]);
}

/**
 * A comment body on a terminal: its lines kept, every other control character escaped as
 * cellText escapes it, each line indented so that bodies stand apart from the headings.
 */
function bodyLines(body: string): string {
  return body
    .split(/\r?\n/)
    .map((line) => `    ${cellText(line)}`.trimEnd())
    .join('\n');
}

/**
 * The comments after a ticket, oldest first. On a terminal a heading per comment (author, time,
 * short id) and its body below it; in a pipe one TSV line each, `comment`, id, author, time and
 * the body on one line, beside the ticket's own `key<TAB>value` lines.
 */
export function printComments(io: IOStreams, comments: TicketComment[]): void {
  if (comments.length === 0) return;
  if (!io.stdout.isTTY) {
    io.stdout.write(comments.map((c) => ['comment', c.id, c.author, c.created_at, c.body].map(cellText).join('\t') + '\n').join(''));
    return;
  }
  io.stdout.write(comments.map((c) => `\n${cellText(c.author)}, ${cellText(c.created_at)} (${cellText(c.id.slice(0, SHORT_ID_MIN))}):\n${bodyLines(c.body)}\n`).join(''));
}
