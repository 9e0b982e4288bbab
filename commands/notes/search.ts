// searchRun: `mkt notes search QUERY` — full-text search over a repository's notes. In pipes one
// hit a line (namespace, target, snippet; tab-separated) for scripts; a table on a terminal.
import type { Factory } from '../../src/cli/factory.js';
import { UsageError } from '../../src/cli/errors.js';
import { printJson, printTable } from '../../src/cli/output.js';
import { call, notesClient, repoOf, short, type ClientFlags } from './shared.js';

export interface SearchOptions extends ClientFlags {
  factory: Factory;
  query: string[];
  commitsOnly?: boolean;
  limit?: string;
}

export async function searchRun(opts: SearchOptions): Promise<void> {
  const { io } = opts.factory;
  const q = opts.query.join(' ').trim();
  if (q === '') throw new UsageError('the search query is empty');
  let limit: number | undefined;
  if (opts.limit !== undefined) {
    limit = Number(opts.limit);
    if (!/^\d+$/.test(opts.limit) || limit < 1) throw new UsageError(`--limit must be a positive whole number, not ${JSON.stringify(opts.limit)}`);
  }
  const repo = await repoOf(opts.factory, opts);
  const client = await notesClient(opts.factory, opts);
  const res = await call(repo, () => client.search(repo, { q, namespace: opts.namespace, commitsOnly: opts.commitsOnly, limit }));
  if (opts.json) {
    printJson(io, res);
    return;
  }
  const tty = Boolean(io.stdout.isTTY);
  printTable(
    io,
    ['namespace', 'target', 'snippet'],
    res.data.map((h) => [h.namespace, tty ? short(h.target) : h.target, h.snippet.trim()]),
  );
  if (!res.indexed) io.stderr.write('warning: the search index has not seen this repository yet; results may be missing\n');
  if (io.stderr.isTTY) io.stderr.write(`${res.total} hit${res.total === 1 ? '' : 's'}\n`);
}
