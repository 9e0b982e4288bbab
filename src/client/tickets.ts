// Typed client of the ticket tracker API, used by `mkt tickets` and by the daemon's peer replication.
import { HttpClient, type HttpClientOptions } from './http.js';
import { SENDER_HEADER } from '../schemas/tickets.js';
import { LIST_LIMIT, type ListQuery, type ListResponse, type NewTicket, type NodeResponse, type PullResponse, type PushResponse, type Ticket, type UpdateTicket } from '../schemas/tickets.js';

const MiB = 1024 * 1024;
/**
 * Answer caps, in bytes, whoever asks (the CLI or a node replicating with its peers): what the
 * answers can hold, with room to spare. One ticket is at most about 700 kB of JSON (a
 * 100,000-character description with every character escaped as \u00XX), so a ticket gets
 * 1 MiB. A pull page holds about 8 MiB of ticket text (PULL_PAGE_BYTES in the routes), which
 * escaping may grow sixfold. Push and node answers are a few numbers and an id.
 */
export const TICKETS_ANSWER_BYTES = {
  ticket: 2 * MiB,
  perListedTicket: MiB,
  /** A list page's ceiling, below V8's largest string (about 512 Mi characters). */
  listMax: 256 * MiB,
  pull: 64 * MiB,
  push: MiB,
  node: MiB,
} as const;

/** The cap of a list page of `limit` tickets: 1 MiB a ticket and 1 MiB for the rest. */
export function listAnswerBytes(limit: number | undefined): number {
  return Math.min(TICKETS_ANSWER_BYTES.listMax, ((limit ?? LIST_LIMIT.default) + 1) * TICKETS_ANSWER_BYTES.perListedTicket);
}

export class TicketsClient {
  readonly http: HttpClient;
  constructor(httpOrOptions: HttpClient | HttpClientOptions) {
    this.http = httpOrOptions instanceof HttpClient ? httpOrOptions : new HttpClient(httpOrOptions);
  }

  create(input: NewTicket): Promise<Ticket> {
    return this.http.json('POST', '/tickets', { body: input, maxResponseBytes: TICKETS_ANSWER_BYTES.ticket });
  }
  list(query: ListQuery = {}): Promise<ListResponse> {
    return this.http.json('GET', '/tickets', { query: { ...query }, maxResponseBytes: listAnswerBytes(query.limit) });
  }
  get(id: string): Promise<Ticket> {
    return this.http.json('GET', `/tickets/${encodeURIComponent(id)}`, { maxResponseBytes: TICKETS_ANSWER_BYTES.ticket });
  }
  update(id: string, changes: UpdateTicket): Promise<Ticket> {
    return this.http.json('PATCH', `/tickets/${encodeURIComponent(id)}`, { body: changes, maxResponseBytes: TICKETS_ANSWER_BYTES.ticket });
  }
  /** One page of changes after `since`; `has_more` and `next_since` lead to the next. */
  /**
   * One pull page. `split` asks our peers for pages that may end inside a group sharing one
   * stamp (continued by `cursor`), so that a page stays near 8 MiB of text and under the cap;
   * a peer that does not know it ignores it and sends whole groups.
   */
  pull(since: string, limit?: number, page: { split?: boolean; cursor?: string } = {}): Promise<PullResponse> {
    const query = { since, ...(limit !== undefined ? { limit: String(limit) } : {}), ...(page.split ? { split: 'true' } : {}), ...(page.cursor !== undefined ? { cursor: page.cursor } : {}) };
    return this.http.json('GET', '/sync/pull', { query, maxResponseBytes: TICKETS_ANSWER_BYTES.pull });
  }
  /** `sender`: this node's id, so that the receiver does not push the same copies back. */
  push(tickets: Ticket[], sender?: string): Promise<PushResponse> {
    return this.http.json('POST', '/sync/push', { body: tickets, maxResponseBytes: TICKETS_ANSWER_BYTES.push, ...(sender !== undefined ? { headers: { [SENDER_HEADER]: sender } } : {}) });
  }
  node(): Promise<NodeResponse> {
    return this.http.json('GET', '/sync/node', { maxResponseBytes: TICKETS_ANSWER_BYTES.node });
  }
}
