// listRun: `mkt tickets list [filters]` — one page (or with --all every page) of tickets as a
// table (TSV in pipes) or as the list response in JSON.
import type { Factory } from '../../src/cli/factory.js';
import { callApi } from '../../src/cli/api-errors.js';
import { UnreachableError, UsageError } from '../../src/cli/errors.js';
import { stdoutIsTTY, type IOStreams } from '../../src/cli/io.js';
import { cellText, printJson, printTable, type Cell } from '../../src/cli/output.js';
import type { TicketsClient } from '../../src/client/tickets.js';
import { LIST_LIMIT, type ListQuery, type ListResponse, type Ticket } from '../../src/schemas/tickets.js';
import { personFilter, ticketsClient, type ClientFlags } from './shared.js';

export interface ListOptions extends ClientFlags {
  factory: Factory;
  status?: string;
  priority?: string;
  channel?: string;
  source?: string;
  assignee?: string;
  requester?: string;
  search?: string;
  limit?: string;
  cursor?: string;
  all?: boolean;
}

const HEADERS = ['id', 'status', 'priority', 'channel', 'assignee', 'updated', 'title'];
const row = (t: Ticket): Cell[] => [t.short_id, t.status, t.priority, t.channel, t.assignee, t.updated_at, t.title];
const tickets = (n: number): string => `${n} ticket${n === 1 ? '' : 's'}`;

/** `--limit`: checked here so that a typo is a usage error before any request. */
export function checkLimit(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > LIST_LIMIT.max) throw new UsageError(`--limit must be a whole number from 1 to ${LIST_LIMIT.max}, not ${JSON.stringify(raw)}`);
  return n;
}

export async function listRun(opts: ListOptions): Promise<void> {
  const { io } = opts.factory;
  const query: ListQuery = {
    // Canonical already: the parser's choiceOption normalises these.
    status: opts.status,
    priority: opts.priority,
    channel: opts.channel,
    source: opts.source,
    assignee: personFilter(opts.assignee),
    requester: personFilter(opts.requester),
    search: opts.search,
    limit: checkLimit(opts.limit),
    cursor: opts.cursor,
  };
  const client = await ticketsClient(opts.factory, opts);
  if (opts.all) return listAll(io, client, query, Boolean(opts.json));

  const res = await callApi('tickets', () => client.list(query));
  if (opts.json) {
    printJson(io, res);
    return;
  }
  printTable(io, HEADERS, res.data.map(row));
  if (!io.stderr.isTTY) return;
  if (res.next_cursor === null) io.stderr.write(`${tickets(res.count)}\n`);
  else io.stderr.write(`${res.data.length} of ${tickets(res.count)}; --all for every page, or --cursor ${cellText(res.next_cursor)}\n`);
}

/** Every page from `query.cursor` (or the first) on, each handed to `onPage` as it arrives. */
async function eachPage(client: TicketsClient, query: ListQuery, onPage: (page: ListResponse) => Promise<void>): Promise<void> {
  let cursor = query.cursor;
  for (;;) {
    const page = await callApi('tickets', () => client.list({ ...query, cursor }));
    await onPage(page);
    if (page.next_cursor === null) return;
    // A server that hands back the cursor it was given would page forever.
    if (page.next_cursor === cursor) throw new UnreachableError(`server error: the tickets server returned the cursor it was given (${cursor}); stopping`);
    cursor = page.next_cursor;
  }
}

/**
 * `--all`. In a pipe and with --json each page is written as it arrives and then dropped, so a
 * list of millions costs one page of memory; --json writes one object, the list response of
 * every page together. Only the terminal table, which pads columns to the widest cell, is
 * gathered first: nobody reads millions of rows on a terminal.
 */
async function listAll(io: IOStreams, client: TicketsClient, query: ListQuery, json: boolean): Promise<void> {
  if (json) {
    let written = 0;
    let count = 0;
    await write(io, '{"data":[');
    await eachPage(client, query, async (page) => {
      count = page.count;
      if (page.data.length === 0) return;
      await write(io, (written === 0 ? '\n' : ',\n') + page.data.map((t) => JSON.stringify(t)).join(',\n'));
      written += page.data.length;
    });
    // `count` as the server last reported it: every match on every page, as without --all.
    await write(io, `\n],"count":${count},"next_cursor":null}\n`);
    return;
  }
  let printed = 0;
  if (!stdoutIsTTY(io)) {
    await eachPage(client, query, async (page) => {
      printTable(io, HEADERS, page.data.map(row));
      printed += page.data.length;
      await drained(io);
    });
  } else {
    const rows: Cell[][] = [];
    await eachPage(client, query, async (page) => {
      for (const t of page.data) rows.push(row(t));
    });
    printTable(io, HEADERS, rows);
    printed = rows.length;
  }
  if (io.stderr.isTTY) io.stderr.write(`${tickets(printed)}\n`);
}

async function write(io: IOStreams, text: string): Promise<void> {
  io.stdout.write(text);
  await drained(io);
}

/** Waits while stdout's buffer is full, so that a slow reader holds back the next page. */
async function drained(io: IOStreams): Promise<void> {
  const out = io.stdout;
  if (!out.writableNeedDrain) return;
  await new Promise<void>((resolve) => {
    const done = (): void => {
      out.off('drain', done);
      out.off('close', done);
      resolve();
    };
    out.on('drain', done);
    out.on('close', done);
  });
}
