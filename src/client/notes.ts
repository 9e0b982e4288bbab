// Typed client of the marketplace git-notes API (used by `mkt notes` and the notes benchmark).
// Reads are anonymous unless a token is configured; writes need a push-scope token.
import { HttpClient, type HttpClientOptions } from './http.js';
import type { CountResponse, MissingResponse, NamespacesResponse, NoteHistoryResponse, NoteResponse, PutNoteRequest, SearchMode, SearchResponse, WriteResponse } from '../schemas/notes.js';

/** A hosted repository, as `owner/repo`. */
export interface RepoRef {
  owner: string;
  repo: string;
}

/** One search request (GET .../notes/search); every filter is optional, as on the API. */
export interface SearchOptions {
  /** Empty or absent in words mode: every note the filters keep. */
  q?: string;
  mode?: SearchMode;
  namespace?: string;
  commitsOnly?: boolean;
  /** `KEY~text` or `KEY=value`, each sent as its own `field=`. */
  fields?: string[];
  author?: string;
  since?: string;
  until?: string;
  /** Full object ids (at most MAX_COMMITS a request: callers chunk). */
  commits?: string[];
  cursor?: string;
  limit?: number;
  content?: boolean;
}

/** `namespace`, `note_author` or `field:KEY`. */
export type CountBy = string;

export interface GetNoteOptions {
  namespace?: string;
  attribution?: boolean;
}

export class NotesClient {
  readonly http: HttpClient;
  constructor(httpOrOptions: HttpClient | HttpClientOptions) {
    this.http = httpOrOptions instanceof HttpClient ? httpOrOptions : new HttpClient(httpOrOptions);
  }

  private base(r: RepoRef): string {
    return `/api/git/${encodeURIComponent(r.owner)}/${encodeURIComponent(r.repo)}/notes`;
  }

  private ownerBase(owner: string): string {
    return `/api/git/${encodeURIComponent(owner)}/notes`;
  }

  namespaces(r: RepoRef): Promise<NamespacesResponse> {
    return this.http.json('GET', this.base(r));
  }
  /** One page of hits in one repository; continue with `cursor: next_cursor`. */
  search(r: RepoRef, o: SearchOptions): Promise<SearchResponse> {
    return this.http.json('GET', `${this.base(r)}/search?${searchQuery(o)}`);
  }
  /** One page of hits across every repository of `owner` the caller can see (GET /api/git/{owner}/notes/search). */
  searchOwner(owner: string, o: SearchOptions): Promise<SearchResponse> {
    return this.http.json('GET', `${this.ownerBase(owner)}/search?${searchQuery(o)}`);
  }
  /** Groups with counts over every matching note (`count_by`); `owner` alone: owner-wide. */
  countBy(r: RepoRef | string, by: CountBy, o: SearchOptions): Promise<CountResponse> {
    const base = typeof r === 'string' ? this.ownerBase(r) : this.base(r);
    const q = searchQuery({ ...o, cursor: undefined, limit: undefined });
    return this.http.json('GET', `${base}/search?${q}&count_by=${encodeURIComponent(by)}`);
  }
  /** The commits given that have no note in the namespace, in the order given (GET .../notes/missing). */
  missing(r: RepoRef, o: { namespace?: string; commits: string[] }): Promise<MissingResponse> {
    return this.http.json('GET', `${this.base(r)}/missing`, { query: { namespace: o.namespace, commits: o.commits.join(',') } });
  }
  get(r: RepoRef, target: string, o: GetNoteOptions = {}): Promise<NoteResponse> {
    return this.http.json('GET', `${this.base(r)}/${encodeURIComponent(target)}`, {
      query: { namespace: o.namespace, attribution: o.attribution ? true : undefined },
    });
  }
  /** The note's versions, newest first (GET .../notes/{target}/history). */
  history(r: RepoRef, target: string, o: { namespace?: string; limit?: number } = {}): Promise<NoteHistoryResponse> {
    return this.http.json('GET', `${this.base(r)}/${encodeURIComponent(target)}/history`, { query: { namespace: o.namespace, limit: o.limit } });
  }
  put(r: RepoRef, target: string, body: PutNoteRequest): Promise<WriteResponse> {
    return this.http.json('PUT', `${this.base(r)}/${encodeURIComponent(target)}`, { body });
  }
  /** 204 whether or not a note existed (spec rule 5). */
  async delete(r: RepoRef, target: string, namespace?: string): Promise<void> {
    await this.http.json('DELETE', `${this.base(r)}/${encodeURIComponent(target)}`, { query: { namespace } });
  }
}

/**
 * The query string of a search. Built here rather than through RequestOptions.query, which holds
 * one value a name: `field=` repeats.
 */
export function searchQuery(o: SearchOptions): string {
  const p = new URLSearchParams();
  const add = (k: string, v: string | number | boolean | undefined): void => {
    if (v !== undefined) p.append(k, String(v));
  };
  if (o.q !== undefined && o.q !== '') add('q', o.q);
  add('mode', o.mode);
  add('namespace', o.namespace);
  add('commits_only', o.commitsOnly ? true : undefined);
  for (const f of o.fields ?? []) add('field', f);
  add('author', o.author);
  add('since', o.since);
  add('until', o.until);
  if (o.commits !== undefined) add('commits', o.commits.join(','));
  add('content', o.content ? true : undefined);
  add('cursor', o.cursor);
  add('limit', o.limit);
  return p.toString();
}
