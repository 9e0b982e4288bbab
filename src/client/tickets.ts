// Typed client of the ticket tracker API, used by `mkt tickets` and by the daemon's peer sync.
import { HttpClient, type HttpClientOptions } from './http.js';
import { SENDER_HEADER } from '../schemas/tickets.js';
import type { ListQuery, ListResponse, NewTicket, NodeResponse, PullResponse, PushResponse, Ticket, UpdateTicket } from '../schemas/tickets.js';

export class TicketsClient {
  readonly http: HttpClient;
  constructor(httpOrOptions: HttpClient | HttpClientOptions) {
    this.http = httpOrOptions instanceof HttpClient ? httpOrOptions : new HttpClient(httpOrOptions);
  }

  create(input: NewTicket): Promise<Ticket> {
    return this.http.json('POST', '/tickets', { body: input });
  }
  list(query: ListQuery = {}): Promise<ListResponse> {
    return this.http.json('GET', '/tickets', { query: { ...query } });
  }
  get(id: string): Promise<Ticket> {
    return this.http.json('GET', `/tickets/${encodeURIComponent(id)}`);
  }
  update(id: string, changes: UpdateTicket): Promise<Ticket> {
    return this.http.json('PATCH', `/tickets/${encodeURIComponent(id)}`, { body: changes });
  }
  /** One page of changes after `since`; `has_more` and `next_since` lead to the next. */
  pull(since: string, limit?: number): Promise<PullResponse> {
    return this.http.json('GET', '/sync/pull', { query: { since, ...(limit !== undefined ? { limit: String(limit) } : {}) } });
  }
  /** `sender`: this node's id, so that the receiver does not push the same copies back. */
  push(tickets: Ticket[], sender?: string): Promise<PushResponse> {
    return this.http.json('POST', '/sync/push', { body: tickets, ...(sender !== undefined ? { headers: { [SENDER_HEADER]: sender } } : {}) });
  }
  node(): Promise<NodeResponse> {
    return this.http.json('GET', '/sync/node');
  }
}
