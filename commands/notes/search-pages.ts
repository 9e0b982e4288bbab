// How `mkt notes search|missing|export` walk a search: commit lists cut into requests whose URL
// stays small, next_cursor followed page by page (every page, or until enough hits), and the
// counts of several requests summed. The network is a function given in, so this is testable alone.
import type { CountGroup, SearchResponse } from '../../src/schemas/notes.js';

/**
 * Bytes of `commits=` one request carries at most. An id costs its hex plus `%2C` (the encoded
 * comma): 190 SHA-1 ids or 122 SHA-256 ids a request, so the whole URL stays well under the
 * 16 KiB many proxies accept, with room for a long query and the other filters.
 */
export const COMMITS_URL_BUDGET = 8192;

/**
 * Cuts ids into requests of at most `budget` bytes of `commits=` (and at most `max` ids: the
 * server's MAX_COMMITS in src/schemas/notes.ts, not imported, as the schemas load TypeBox).
 */
export function chunkIds(ids: string[], budget = COMMITS_URL_BUDGET, max = 200): string[][] {
  const chunks: string[][] = [];
  let cur: string[] = [];
  let bytes = 0;
  for (const id of ids) {
    const cost = id.length + 3;
    if (cur.length > 0 && (bytes + cost > budget || cur.length >= max)) {
      chunks.push(cur);
      cur = [];
      bytes = 0;
    }
    cur.push(id);
    bytes += cost;
  }
  if (cur.length > 0) chunks.push(cur);
  return chunks;
}

/** One page request: the commits of this chunk (undefined: no --range), where to start, how many. */
export type FetchPage = (req: { commits?: string[]; cursor?: string; limit?: number }) => Promise<SearchResponse>;

export interface WalkOptions {
  /** With --range: the chunks, in order (never empty: an empty range makes no request). */
  chunks?: string[][];
  /** Follow next_cursor to the end of every chunk. */
  all: boolean;
  /** Without `all`: the most hits wanted in total (pages are asked for what is still wanted). */
  limit: number;
  /** Page size with `all` (undefined: the server's default). */
  pageSize?: number;
  /** Where the first page starts (--cursor; not with chunks). */
  cursor?: string;
}

/** A page as the walk hands it on: its hits (cut to what is still wanted) and its answer. */
export interface WalkedPage {
  hits: SearchResponse['data'];
  answer: SearchResponse;
  /** Whether hits remain that this walk will not fetch (only without `all`). */
  more: boolean;
}

/**
 * The pages of a search, one request at a time: a page is fetched only when the previous one has
 * been consumed (written), so however many hits there are, one page is held. Without `all` it
 * stops once `limit` hits came, following a cursor past pages that came short (a regex page may
 * hold none) and on to the next chunk.
 */
export async function* walkPages(fetch: FetchPage, o: WalkOptions): AsyncGenerator<WalkedPage> {
  const chunks: (string[] | undefined)[] = o.chunks ?? [undefined];
  let wanted = o.limit;
  for (let c = 0; c < chunks.length; c++) {
    let cursor = c === 0 ? o.cursor : undefined;
    for (;;) {
      const answer = await fetch({ commits: chunks[c], cursor, limit: o.all ? o.pageSize : wanted });
      const hits = o.all ? answer.data : answer.data.slice(0, wanted);
      wanted -= hits.length;
      const rest = answer.next_cursor !== null || c < chunks.length - 1 || hits.length < answer.data.length;
      const done = !o.all && wanted <= 0;
      yield { hits, answer, more: done && rest };
      if (done) return;
      if (answer.next_cursor === null) break;
      cursor = answer.next_cursor;
    }
  }
}

/** Counts of several requests (one per chunk of a range) as one answer: summed by key. */
export class CountSum {
  private readonly counts = new Map<string, number>();
  indexed = true;
  truncated = false;
  add(answer: { groups: CountGroup[]; indexed: boolean; truncated: boolean }): void {
    for (const g of answer.groups) this.counts.set(g.key, (this.counts.get(g.key) ?? 0) + g.count);
    this.indexed &&= answer.indexed;
    this.truncated ||= answer.truncated;
  }
  /** Largest count first, then by key (as the server orders one answer). */
  groups(): CountGroup[] {
    return [...this.counts].map(([key, count]) => ({ key, count })).sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }
}
