// logRun: `mkt tickets log ID` — a ticket's history, newest first: one line per change, from one
// page (or with --all every page) of GET /tickets/{id}/history.
import type { Factory } from '../../src/cli/factory.js';
import { callApi } from '../../src/cli/api-errors.js';
import { UnreachableError, UsageError } from '../../src/cli/errors.js';
import { stdoutIsTTY, type IOStreams } from '../../src/cli/io.js';
import { cellText, printTable, type Cell } from '../../src/cli/output.js';
import { HISTORY_LIMIT, type HistoryEntry, type HistoryPage, type TicketsClient } from '../../src/client/tickets.js';
import { SHORT_ID_MIN } from '../../src/schemas/tickets.js';
import { checkTicketId, ticketsClient, type ClientFlags } from './shared.js';

export interface LogOptions extends ClientFlags {
  factory: Factory;
  id: string;
  limit?: string;
  all?: boolean;
}

/** `--limit`: checked here so that a typo is a usage error before any request. */
export function checkHistoryLimit(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > HISTORY_LIMIT.max) throw new UsageError(`--limit must be a whole number from 1 to ${HISTORY_LIMIT.max}, not ${JSON.stringify(raw)}`);
  return n;
}

/** A value in a line: none as `(none)`, text quoted when blanks at its ends would hide, long text cut. */
function value(v: string | null): string {
  if (v === null) return '(none)';
  const t = cellText(v);
  const cut = t.length > 60 ? `${t.slice(0, 59)}…` : t;
  return cut === '' || cut.trim() !== cut ? JSON.stringify(cut) : cut;
}

/**
 * One change as a person reads it: `at by field: from → to`, with the fields whose from or to
 * is always empty said shorter (a tag added or removed, the creation, a comment, the delete).
 */
export function changeText(e: HistoryEntry): string {
  const what = ((): string => {
    switch (e.field) {
      case 'tags':
        return e.to !== null ? `tags: + ${value(e.to)}` : `tags: - ${value(e.from)}`;
      case 'created':
        return `created: ${value(e.to)}`;
      case 'comment':
        return `comment: ${value(e.to)}`;
      case 'deleted':
        return 'deleted';
      default:
        return `${cellText(e.field)}: ${value(e.from)} → ${value(e.to)}`;
    }
  })();
  return `${cellText(e.at)} ${cellText(e.by.slice(0, SHORT_ID_MIN))} ${what}${e.lost ? ' (lost a merge)' : ''}`;
}

/** In a pipe: at, by (the whole node id), field, from, to, and `lost` or nothing; none is empty. */
const HEADERS = ['at', 'by', 'field', 'from', 'to', 'lost'];
const row = (e: HistoryEntry): Cell[] => [e.at, e.by, e.field, e.from, e.to, e.lost ? 'lost' : ''];
const entries = (n: number): string => `${n} change${n === 1 ? '' : 's'}`;

function printEntries(io: IOStreams, data: HistoryEntry[]): void {
  if (!stdoutIsTTY(io)) return printTable(io, HEADERS, data.map(row));
  if (data.length > 0) io.stdout.write(data.map((e) => changeText(e) + '\n').join(''));
}

export async function logRun(opts: LogOptions): Promise<void> {
  const { io } = opts.factory;
  const id = checkTicketId(opts.id);
  const limit = checkHistoryLimit(opts.limit);
  const client = await ticketsClient(opts.factory, opts);
  if (opts.all) {
    const all: HistoryEntry[] = [];
    await eachPage(client, id, limit, async (page) => {
      // A pipe gets each page as it comes; --json is one array, so it is gathered (a ticket keeps at most MAX_HISTORY changes).
      if (opts.json) all.push(...page.data);
      else printEntries(io, page.data);
    });
    if (opts.json) io.stdout.write(JSON.stringify(all, null, 2) + '\n');
    return;
  }
  const page = await callApi('tickets', () => client.history(id, { limit }), { flags: { limit: '--limit' } });
  if (opts.json) {
    io.stdout.write(JSON.stringify(page.data, null, 2) + '\n');
    return;
  }
  printEntries(io, page.data);
  if (io.stderr.isTTY && page.next_cursor !== null) io.stderr.write(`the newest ${entries(page.data.length)}; --all for every one\n`);
}

async function eachPage(client: TicketsClient, id: string, limit: number | undefined, onPage: (page: HistoryPage) => Promise<void>): Promise<void> {
  let cursor: string | undefined;
  for (;;) {
    const page = await callApi('tickets', () => client.history(id, { limit, cursor }), { flags: { limit: '--limit' } });
    await onPage(page);
    if (page.next_cursor === null) return;
    // A server that hands back the cursor it was given would page forever.
    if (page.next_cursor === cursor) throw new UnreachableError(`server error: the tickets server returned the history cursor it was given (${cursor}); stopping`);
    cursor = page.next_cursor;
  }
}
