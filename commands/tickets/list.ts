// listRun: `mkt tickets list [filters]` — a table (TSV in pipes) or the list response as JSON.
import type { Factory } from '../../src/cli/factory.js';
import { callApi } from '../../src/cli/api-errors.js';
import { printJson, printTable } from '../../src/cli/output.js';
import { checkChannel, checkPriority, checkStatus, ticketsClient, type ClientFlags } from './shared.js';

export interface ListOptions extends ClientFlags {
  factory: Factory;
  status?: string;
  priority?: string;
  channel?: string;
  source?: string;
  search?: string;
}

export async function listRun(opts: ListOptions): Promise<void> {
  const { io } = opts.factory;
  const query = {
    status: checkStatus(opts.status),
    priority: checkPriority(opts.priority),
    channel: checkChannel(opts.channel),
    source: opts.source,
    search: opts.search,
  };
  const client = await ticketsClient(opts.factory, opts);
  const res = await callApi('tickets', () => client.list(query));
  if (opts.json) {
    printJson(io, res);
    return;
  }
  printTable(
    io,
    ['id', 'status', 'priority', 'channel', 'assignee', 'updated', 'title'],
    res.data.map((t) => [t.short_id, t.status, t.priority, t.channel, t.assignee, t.updated_at, t.title]),
  );
  if (io.stderr.isTTY) io.stderr.write(`${res.count} ticket${res.count === 1 ? '' : 's'}\n`);
}
