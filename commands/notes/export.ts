// exportRun: `mkt notes export` — every note of a repository (of one namespace with --namespace)
// with its metadata, fields and text, as JSON lines or CSV, written page by page as it arrives.
import type { Factory } from '../../src/cli/factory.js';
import { SEARCH_MAX_LIMIT } from '../../src/schemas/notes.js';
import { CSV_HEADER, csvPage, jsonlPage } from './hit-formats.js';
import { withSink } from './output-sink.js';
import { walkPages } from './search-pages.js';
import { callRead, notesClient, repoName, repoOf, type ClientFlags } from './shared.js';

export interface ExportOptions extends Omit<ClientFlags, 'json'> {
  factory: Factory;
  format?: 'jsonl' | 'csv';
}

export async function exportRun(opts: ExportOptions): Promise<void> {
  const { io } = opts.factory;
  const repo = await repoOf(opts.factory, opts);
  const client = await notesClient(opts.factory, opts);
  const csv = opts.format === 'csv';
  // A search with no query: every note, in index order, each with its whole text.
  const fetch = (req: { cursor?: string; limit?: number }) =>
    callRead(() => client.search(repo, { namespace: opts.namespace, content: true, cursor: req.cursor, limit: req.limit }));
  await withSink(io.stdout, async (sink) => {
    if (csv) await sink.write(CSV_HEADER);
    let indexed = true;
    for await (const page of walkPages(fetch, { all: true, limit: Infinity, pageSize: SEARCH_MAX_LIMIT })) {
      indexed &&= page.answer.indexed;
      await sink.write(csv ? csvPage(page.hits, repoName(repo)) : jsonlPage(page.hits, repoName(repo)));
    }
    if (!indexed) io.stderr.write('warning: the search index has not seen this repository yet; notes may be missing\n');
  });
}
