// searchRun: `mkt notes search [WORDS...]` — words, --literal or --regex over one repository's
// notes (or every repository of --owner), filtered by fields, author, time and a commit range.
// Writes page by page as the answers arrive (--all follows every page; memory holds one).
import type { Factory } from '../../src/cli/factory.js';
import { UsageError } from '../../src/cli/errors.js';
import { printJson, printTable, cellText } from '../../src/cli/output.js';
import type { NotesClient, RepoRef, SearchOptions as ClientSearch } from '../../src/client/notes.js';
import { MAX_FIELD_FILTERS, type SearchMode, type SearchResponse } from '../../src/schemas/notes.js';
import { ndjsonPage, tsvCell, tsvPage, JsonArrayText, stableHit, type AnyHit } from './hit-formats.js';
import { withSink, type OutputSink } from './output-sink.js';
import { CountSum, walkPages, type FetchPage } from './search-pages.js';
import { callRead, notesClient, rangeCommits, repoName, repoOf, short, type ClientFlags } from './shared.js';

export interface SearchOptions extends ClientFlags {
  factory: Factory;
  /** The words; none: every note the filters keep. */
  query: string[];
  literal?: string;
  regex?: string;
  field?: string[];
  author?: string;
  since?: string;
  until?: string;
  range?: string;
  owner?: string;
  all?: boolean;
  format?: 'ndjson' | 'json' | 'tsv';
  countBy?: string;
  cursor?: string;
  commitsOnly?: boolean;
  limit?: string;
}

/** Hits a page holds with --all when --limit is not given: the server's most. */
const ALL_PAGE_SIZE = 200;
const DEFAULT_LIMIT = 50;

export async function searchRun(opts: SearchOptions): Promise<void> {
  const { io } = opts.factory;
  const query = queryOf(opts);
  const limit = limitOf(opts.limit);
  if ((opts.field?.length ?? 0) > MAX_FIELD_FILTERS) throw new UsageError(`at most ${MAX_FIELD_FILTERS} --field filters, not ${opts.field!.length}`);
  // What the server refuses is said in the command line's words.
  const flags = { q: query.mode === 'literal' ? '--literal' : query.mode === 'regex' ? '--regex' : '<words>', commits: '--range', count_by: '--count-by' };
  const where: RepoRef | string = opts.owner ?? (await repoOf(opts.factory, opts));
  const chunks = opts.range === undefined ? undefined : await rangeCommits(opts.factory, opts.range);
  const client = await notesClient(opts.factory, opts);
  const base: ClientSearch = {
    ...query,
    namespace: opts.namespace,
    commitsOnly: opts.commitsOnly,
    fields: opts.field,
    author: opts.author,
    since: opts.since,
    until: opts.until,
  };
  // An empty range names no commit: nothing can match, and no request is made.
  if (chunks !== undefined && chunks.length === 0) {
    if (opts.countBy !== undefined) return printCounts(opts, new CountSum());
    return withSink(io.stdout, async (sink) => {
      const out = writerFor(opts, typeof where === 'string', sink);
      await out.end({ indexed: true });
    });
  }
  if (opts.countBy !== undefined) {
    const sum = new CountSum();
    for (const commits of chunks ?? [undefined]) sum.add(await callRead(() => client.countBy(where, opts.countBy!, { ...base, commits }), flags));
    return printCounts(opts, sum);
  }
  const fetch: FetchPage = (req) => callRead(() => search(client, where, { ...base, ...req }), flags);
  // --json of one page without a range: the API's answer as it came (next_cursor included).
  if (opts.json && !opts.all && chunks === undefined && opts.format === undefined) {
    const answer = await fetch({ cursor: opts.cursor, limit });
    printJson(io, answer);
    warnUnindexed(opts, answer.indexed);
    return;
  }
  await withSink(io.stdout, async (sink) => {
    const out = writerFor(opts, typeof where === 'string', sink);
    let indexed = true;
    let more = false;
    for await (const page of walkPages(fetch, { chunks, all: Boolean(opts.all), limit: limit ?? DEFAULT_LIMIT, pageSize: limit ?? ALL_PAGE_SIZE, cursor: opts.cursor })) {
      indexed &&= page.answer.indexed;
      more ||= page.more;
      await out.page(page.hits, typeof where === 'string' ? undefined : repoName(where));
    }
    await out.end({ indexed });
    warnUnindexed(opts, indexed);
    if (more && io.stderr.isTTY) io.stderr.write(`more hits exist: --all prints every one\n`);
  });
}

function search(client: NotesClient, where: RepoRef | string, o: ClientSearch): Promise<SearchResponse> {
  return typeof where === 'string' ? client.searchOwner(where, o) : client.search(where, o);
}

/** The text condition: words (maybe none), --literal or --regex (never empty). */
export function queryOf(opts: Pick<SearchOptions, 'query' | 'literal' | 'regex'>): { q?: string; mode?: SearchMode } {
  if (opts.literal !== undefined) {
    if (opts.literal === '') throw new UsageError('--literal needs a non-empty text');
    return { q: opts.literal, mode: 'literal' };
  }
  if (opts.regex !== undefined) {
    if (opts.regex === '') throw new UsageError('--regex needs a non-empty pattern');
    return { q: opts.regex, mode: 'regex' };
  }
  if (opts.query.length === 0) return {};
  const q = opts.query.join(' ').trim();
  // Words given but blank (an empty "$Q" in a script) would list every note: refuse instead.
  if (q === '') throw new UsageError('the search query is empty', 'leave the words out to list every note the filters keep');
  return { q };
}

export function limitOf(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new UsageError(`--limit must be a positive whole number, not ${JSON.stringify(raw)}`);
  return Number(raw);
}

function warnUnindexed(opts: SearchOptions, indexed: boolean): void {
  if (!indexed) opts.factory.io.stderr.write('warning: the search index has not seen this repository yet; results may be missing\n');
}

/** How the hits are written: each page as it comes, then whatever closes the output. */
interface HitWriter {
  page(hits: AnyHit[], repo: string | undefined): Promise<void>;
  end(tail: { indexed: boolean }): Promise<void>;
}

function writerFor(opts: SearchOptions, ownerWide: boolean, sink: OutputSink): HitWriter {
  const io = opts.factory.io;
  let total = 0;
  switch (opts.format) {
    case 'ndjson':
      return { page: (hits, repo) => sink.write(ndjsonPage(hits, repo)), end: async () => undefined };
    case 'tsv':
      return { page: (hits, repo) => sink.write(tsvPage(hits, repo)), end: async () => undefined };
    case 'json': {
      const arr = new JsonArrayText();
      let opened = false;
      return {
        page: async (hits, repo) => {
          const head = opened ? '' : '[';
          opened = true;
          await sink.write(head + arr.items(hits.map((h) => stableHit(h, repo))));
        },
        end: async () => sink.write((opened ? '' : '[') + arr.close() + '\n'),
      };
    }
    default:
      break;
  }
  if (opts.json) {
    // --json over several pages (--all, --range): the API's shape, every hit in one `data`, streamed.
    const arr = new JsonArrayText();
    let opened = false;
    return {
      page: async (hits) => {
        const head = opened ? '' : '{"data":[';
        opened = true;
        await sink.write(head + arr.items(hits));
      },
      end: async ({ indexed }) => sink.write(`${opened ? '' : '{"data":['}${arr.close()},"next_cursor":null,"indexed":${indexed},"total":${arr.length}}\n`),
    };
  }
  const tty = Boolean(io.stdout.isTTY);
  return {
    page: async (hits, repo) => {
      total += hits.length;
      const rows = hits.map((raw) => {
        const h = stableHit(raw, repo);
        const row = [h.namespace, tty ? short(h.object) : h.object, h.snippet.trim()];
        return ownerWide ? [h.repo, ...row] : row;
      });
      if (tty) {
        // A table a page (a terminal is read, not piped: no EPIPE to watch for).
        if (rows.length > 0) printTable(io, ownerWide ? ['repo', 'namespace', 'target', 'snippet'] : ['namespace', 'target', 'snippet'], rows);
        return;
      }
      await sink.write(rows.map((r) => r.map(cellText).join('\t') + '\n').join(''));
    },
    end: async () => {
      if (io.stderr.isTTY) io.stderr.write(`${total} hit${total === 1 ? '' : 's'}\n`);
    },
  };
}

/** --count-by: `key<TAB>count` lines, or the answer's JSON (--json, --format json), or NDJSON groups. */
function printCounts(opts: SearchOptions, sum: CountSum): void {
  const io = opts.factory.io;
  const groups = sum.groups();
  if (opts.json || opts.format === 'json') printJson(io, { groups, indexed: sum.indexed, truncated: sum.truncated });
  else if (opts.format === 'ndjson') io.stdout.write(groups.map((g) => JSON.stringify(g) + '\n').join(''));
  else if (groups.length > 0) io.stdout.write(groups.map((g) => `${tsvCell(g.key)}\t${g.count}\n`).join(''));
  if (sum.truncated) io.stderr.write('warning: more groups exist than the server counts (the largest are shown)\n');
  warnUnindexed(opts, sum.indexed);
}

