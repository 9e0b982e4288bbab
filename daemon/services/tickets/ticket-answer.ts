// A ticket as the API answers it (TicketSchema's fields with comment_count, and its comments on
// GET /tickets/{id}), made by the store's field-by-field ticketView, never by spreading a stored
// ticket: `{ ...t, comment_count }` sets a key the ticket already has, and V8 copies such a spread
// through its runtime into an object fast-json-stringify then reads slowly. GET /tickets/{id}
// spent 6 µs in that spread and 6.5 µs in the serializer, against 1.3 and 0.7 this way
// (bench/README.md, "One line at the answer, issue 37"). The serializer leaves out field_stamps.
import type { Ticket } from '../../../src/schemas/tickets.js';
import { ticketView } from '../../../src/store/tickets.js';

/** `t` with its number of comments, as POST answers it. */
export function ticketAnswer(t: Ticket, commentCount: number): Ticket & { comment_count: number } {
  return ticketView(t, commentCount) as Ticket & { comment_count: number };
}

/** `t` with its comments, as GET /tickets/{id} answers it (one more field: every answer takes the same shape). */
export function ticketWithComments<C>(t: Ticket, comments: C[]): Omit<Ticket, 'comments'> & { comment_count: number; comments: C[] } {
  const shown = ticketAnswer(t, comments.length) as Omit<Ticket, 'comments'> & { comment_count: number; comments: C[] };
  shown.comments = comments;
  return shown;
}
