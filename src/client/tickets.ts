// Typed client of the ticket tracker API, used by `mkt tickets` and by the daemon's peer replication.
import { HttpClient, type HttpClientOptions } from './http.js';
import { COMMENT_MAX_BYTES, HISTORY_LIMIT, HISTORY_VALUE_MAX, LIST_LIMIT, MAX_PEER_COMMENTS, SENDER_HEADER } from '../schemas/tickets.js';
import type { Comment, HistoryEntry as StoredHistoryEntry, ListQuery, ListResponse, NewTicket, NodeResponse, PullResponse, PushResponse, SyncItem, Ticket, UpdateTicket } from '../schemas/tickets.js';

/** `GET /tickets/{id}/history?limit=`: 50 when not given, at most 500 (re-exported for the CLI). */
export { HISTORY_LIMIT };

const MiB = 1024 * 1024;

// What the client reads of comments and history (issue 34), in the words of src/schemas/tickets.ts.
/** A comment as the API answers it (`POST /tickets/{id}/comments`, `comments` of `GET /tickets/{id}`). */
export type TicketComment = Comment;
/** `GET /tickets/{id}`: the ticket, its comments oldest first, and how many. */
export type TicketWithComments = Omit<Ticket, 'comments'> & { comments?: TicketComment[]; comment_count?: number };
/** One change of `GET /tickets/{id}/history`; `lost`: it lost a per-field merge to a concurrent change. */
export type HistoryEntry = StoredHistoryEntry & { lost?: true };
export interface HistoryPage {
  data: HistoryEntry[];
  next_cursor: string | null;
}

/**
 * One comment's JSON at most: a body of COMMENT_MAX_BYTES escaped (twice its bytes at most: the
 * control characters JSON writes as \u00XX are refused in comments, COMMENT_CONTROL), and 1 KiB
 * for the id, the author (AUTHOR_MAX characters, escaped) and the stamp.
 */
const COMMENT_ANSWER_BYTES = 2 * COMMENT_MAX_BYTES + 1024;
/** One history entry at most: `from` and `to` each HISTORY_VALUE_MAX characters all escaped, and 5 KiB for the rest. */
const HISTORY_ENTRY_BYTES = 2 * 6 * HISTORY_VALUE_MAX + 5 * 1024;
/**
 * Answer caps, in bytes, whoever asks (the CLI or a node replicating with its peers): what the
 * answers can hold, with room to spare. One ticket is at most about 700 kB of JSON (a
 * 100,000-character description with every character escaped as \u00XX), so a ticket gets
 * 1 MiB. A pull page holds about 8 MiB of ticket text (PULL_PAGE_BYTES in the routes), which
 * escaping may grow sixfold. Push and node answers are a few numbers and an id.
 */
export const TICKETS_ANSWER_BYTES = {
  ticket: 2 * MiB,
  /** A ticket with the most comments a node may hold (a peer's copy), each at its largest: about 66 MiB. */
  ticketWithComments: 2 * MiB + MAX_PEER_COMMENTS * COMMENT_ANSWER_BYTES,
  comment: COMMENT_ANSWER_BYTES + MiB,
  perListedTicket: MiB,
  /** A list page's ceiling, below V8's largest string (about 512 Mi characters). */
  listMax: 256 * MiB,
  /**
   * A pull page: about 8 MiB of text escaped, or one ticket larger than a page, up to the largest
   * (ticketWithComments): a ticket with the most comments must still reach every peer.
   */
  pull: 80 * MiB,
  push: MiB,
  node: MiB,
} as const;

/** The cap of a list page of `limit` tickets: 1 MiB a ticket and 1 MiB for the rest. */
export function listAnswerBytes(limit: number | undefined): number {
  return Math.min(TICKETS_ANSWER_BYTES.listMax, ((limit ?? LIST_LIMIT.default) + 1) * TICKETS_ANSWER_BYTES.perListedTicket);
}

/** The cap of a history page of `limit` entries, each at its largest, below the list ceiling. */
export function historyAnswerBytes(limit: number | undefined): number {
  return Math.min(TICKETS_ANSWER_BYTES.listMax, (limit ?? HISTORY_LIMIT.default) * HISTORY_ENTRY_BYTES + MiB);
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
  /** The ticket with its comments (a node of the previous release answers without them). */
  get(id: string): Promise<TicketWithComments> {
    return this.http.json('GET', `/tickets/${encodeURIComponent(id)}`, { maxResponseBytes: TICKETS_ANSWER_BYTES.ticketWithComments });
  }
  update(id: string, changes: UpdateTicket): Promise<Ticket> {
    return this.http.json('PATCH', `/tickets/${encodeURIComponent(id)}`, { body: changes, maxResponseBytes: TICKETS_ANSWER_BYTES.ticket });
  }
  /** Adds a comment; `author` defaults on the server to its node id. */
  comment(id: string, input: { body: string; author?: string }): Promise<TicketComment> {
    return this.http.json('POST', `/tickets/${encodeURIComponent(id)}/comments`, { body: input, maxResponseBytes: TICKETS_ANSWER_BYTES.comment });
  }
  /** Deletes the ticket (204); an unknown or already deleted one is a 404. */
  async delete(id: string): Promise<void> {
    await this.http.json('DELETE', `/tickets/${encodeURIComponent(id)}`, { maxResponseBytes: TICKETS_ANSWER_BYTES.node });
  }
  /** One page of the ticket's changes, newest first; `next_cursor` leads to the next. */
  history(id: string, page: { limit?: number; cursor?: string } = {}): Promise<HistoryPage> {
    const query = { ...(page.limit !== undefined ? { limit: String(page.limit) } : {}), ...(page.cursor !== undefined ? { cursor: page.cursor } : {}) };
    return this.http.json('GET', `/tickets/${encodeURIComponent(id)}/history`, { query, maxResponseBytes: historyAnswerBytes(page.limit) });
  }
  /**
   * One pull page. `split` asks our peers for pages that may end inside a group sharing one
   * stamp (continued by `cursor`), so that a page stays near 8 MiB of text and under the cap;
   * a peer that does not know it ignores it and sends whole groups. `sinceCursor` and
   * `lateAfter` let our peers narrow the overlap (`since` is the cursor less it) to the copies
   * that arrived late; a peer that does not know them reads from `since`. `sender`, this node's
   * id, so that copies it sent itself do not count as late for it.
   */
  pull(since: string, limit?: number, page: { split?: boolean; cursor?: string; sinceCursor?: string; lateAfter?: number; sender?: string } = {}): Promise<PullResponse> {
    const narrow = page.sinceCursor !== undefined && page.lateAfter !== undefined ? { since_cursor: page.sinceCursor, late_after: String(page.lateAfter) } : {};
    const query = { since, ...(limit !== undefined ? { limit: String(limit) } : {}), ...(page.split ? { split: 'true' } : {}), ...(page.cursor !== undefined ? { cursor: page.cursor } : {}), ...narrow };
    return this.http.json('GET', '/sync/pull', { query, maxResponseBytes: TICKETS_ANSWER_BYTES.pull, ...(page.sender !== undefined ? { headers: { [SENDER_HEADER]: page.sender } } : {}) });
  }
  /** Live tickets and tombstones; `sender`: this node's id, so that the receiver does not push the same copies back. */
  push(tickets: readonly SyncItem[], sender?: string): Promise<PushResponse> {
    return this.http.json('POST', '/sync/push', { body: tickets, maxResponseBytes: TICKETS_ANSWER_BYTES.push, ...(sender !== undefined ? { headers: { [SENDER_HEADER]: sender } } : {}) });
  }
  node(): Promise<NodeResponse> {
    return this.http.json('GET', '/sync/node', { maxResponseBytes: TICKETS_ANSWER_BYTES.node });
  }
}
