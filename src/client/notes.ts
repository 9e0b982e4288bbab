// Typed client of the marketplace git-notes API (used by `mkt notes` and the notes benchmark).
// Reads are anonymous unless a token is configured; writes need a push-scope token.
import { HttpClient, type HttpClientOptions } from './http.js';
import type { NamespacesResponse, NoteHistoryResponse, NoteResponse, PutNoteRequest, SearchResponse, WriteResponse } from '../schemas/notes.js';

/** A hosted repository, as `owner/repo`. */
export interface RepoRef {
  owner: string;
  repo: string;
}

export interface SearchOptions {
  q: string;
  namespace?: string;
  commitsOnly?: boolean;
  limit?: number;
}

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

  namespaces(r: RepoRef): Promise<NamespacesResponse> {
    return this.http.json('GET', this.base(r));
  }
  search(r: RepoRef, o: SearchOptions): Promise<SearchResponse> {
    return this.http.json('GET', `${this.base(r)}/search`, {
      query: { q: o.q, namespace: o.namespace, commits_only: o.commitsOnly ? true : undefined, limit: o.limit },
    });
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
