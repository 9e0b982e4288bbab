// The ticket answers built field by field (src/store/tickets.ts's ticketView, through
// daemon/services/tickets/ticket-answer.ts) carry every field of the API's schema and, once
// serialized by the route's schema, nothing the API hides: a field added to the schema and
// forgotten in the literal fails here, not in a client.
import { describe, expect, it } from 'vitest';
import Fastify from 'fastify';
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

/** What a route with `schema` as its 200 answer sends for `body`. */
async function served(schema: object, body: unknown): Promise<Record<string, unknown>> {
  const app = Fastify();
  app.get('/', { schema: { response: { 200: schema } } }, async () => body);
  try {
    return (await app.inject({ method: 'GET', url: '/' })).json();
  } finally {
    await app.close();
  }
}

describe('ticket answers', () => {
  it('carry the schema\'s fields with the count given; served, neither the stamps nor the sets', async () => {
    const a = ticketAnswer(ticket, 3);
    for (const k of Object.keys(TicketSchema.properties)) expect(Object.hasOwn(a, k), k).toBe(true);
    expect(a.comment_count).toBe(3);
    const { field_stamps: _s, comments: _c, history: _h, ...shown } = ticket;
    expect(await served(TicketSchema, a)).toEqual({ ...shown, comment_count: 3 });
  });

  it('with comments: the schema of GET /tickets/{id}, the count being the comments\' own', async () => {
    const comments = [{ id: 'c1', body: 'b', author: 'a', created_at: '2026-11-30T14:07:40.000Z' }];
    const a = ticketWithComments(ticket, comments);
    for (const k of Object.keys(TicketWithCommentsSchema.properties)) expect(Object.hasOwn(a, k), k).toBe(true);
    const { field_stamps: _s, comments: _c, history: _h, ...shown } = ticket;
    expect(await served(TicketWithCommentsSchema, a)).toEqual({ ...shown, comment_count: 1, comments });
  });
});
