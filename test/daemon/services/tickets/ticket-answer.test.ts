// The ticket answers built field by field (daemon/services/tickets/ticket-answer.ts) show every
// field of the API's schema, in its order, and nothing the API hides: a field added to the schema
// and forgotten there fails here, not in a client.
import { describe, expect, it } from 'vitest';
import { TicketSchema, TicketWithCommentsSchema, type Ticket } from '../../../../src/schemas/tickets.js';
import { ticketAnswer, ticketWithComments } from '../../../../daemon/services/tickets/ticket-answer.js';

const ticket: Ticket = {
  id: '46b59898-b8d6-4113-be92-c6d6b2a1a0f1',
  short_id: '46b59898',
  title: 'printer error after update',
  description: 'duplex fails',
  status: 'open',
  priority: 'high',
  channel: 'email',
  source: 'manual',
  requester: null,
  assignee: 'ana',
  tags: ['hardware'],
  created_at: '2026-11-30T14:07:31.311Z',
  updated_at: '2026-11-30T14:08:00.000Z',
  updated_by: 'node-1',
  field_stamps: { base: ['2026-11-30T14:07:31.311Z', 'node-1'] } as unknown as Ticket['field_stamps'],
  comment_count: 7,
  comments: [{ id: 'c1', body: 'b', author: 'a', created_at: '2026-11-30T14:07:40.000Z', by: 'node-1' }],
  history: [],
};

describe('ticket answers', () => {
  it('show the schema\'s fields in its order, with the count given, and not the stamps or sets', () => {
    const a = ticketAnswer(ticket, 3);
    expect(Object.keys(a)).toEqual([...new Set([...Object.keys(TicketSchema.properties), 'comment_count'])]);
    const { field_stamps: _s, comments: _c, history: _h, ...shown } = ticket;
    expect(a).toEqual({ ...shown, comment_count: 3 });
  });

  it('with comments: the schema of GET /tickets/{id}, the count being the comments\' own', () => {
    const comments = [{ id: 'c1', body: 'b', author: 'a', created_at: '2026-11-30T14:07:40.000Z' }];
    const a = ticketWithComments(ticket, comments);
    expect(Object.keys(a)).toEqual(Object.keys(TicketWithCommentsSchema.properties));
    expect(a.comment_count).toBe(1);
    expect(a.comments).toBe(comments);
  });
});
