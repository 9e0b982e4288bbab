// Ticket comments over the API and between peers: limits (body size, blank, comments per ticket,
// a flood of 10,000 adds), GET shows them oldest first, lists only their count, and two nodes
// commenting concurrently both end with both comments (a grow-only set).
import { afterEach, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startTempNode, type TicketNode } from '../../helpers/tickets-node.js';
import { waitFor } from '../../helpers/wait.js';
import { COMMENT_MAX_BYTES, MAX_COMMENTS, MAX_PEER_COMMENTS, SENDER_HEADER } from '../../../src/schemas/tickets.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
const bin = (c: () => Promise<void> | void): void => void cleanups.push(c);

async function ticket(n: TicketNode, title = 'printer jams'): Promise<{ id: string; updated_at: string }> {
  const r = await n.req('POST', '/tickets', { title });
  expect(r.status).toBe(201);
  return r.body;
}

describe('ticket comments', () => {
  it('adds comments, shows them oldest first on GET, and only their count in lists', async () => {
    const n = await startTempNode(bin);
    const t = await ticket(n);
    const a = await n.req('POST', `/tickets/${t.id.slice(0, 8)}/comments`, { body: 'first' });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({ body: 'first', author: expect.any(String) });
    expect(a.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.body.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const b = await n.req('POST', `/tickets/${t.id}/comments`, { body: 'second', author: 'ana' });
    expect(b.body.author).toBe('ana');
    const got = await n.req('GET', `/tickets/${t.id}`);
    expect(got.body.comment_count).toBe(2);
    expect(got.body.comments.map((c: { body: string }) => c.body)).toEqual(['first', 'second']);
    // The comment advanced the ticket's change stamp, so that it syncs.
    expect(got.body.updated_at).toBe(b.body.created_at);
    const list = await n.req('GET', '/tickets');
    expect(list.body.data[0].comment_count).toBe(2);
    expect(list.body.data[0].comments).toBeUndefined();
    const pulled = await n.req('GET', '/sync/pull?since=1970-01-01T00:00:00Z');
    expect(pulled.body.tickets[0].comments.map((c: { body: string; by: string }) => c.body)).toEqual(['first', 'second']);
  });

  it('refuses an empty body or a control character (400), one byte over the limit (413), an unknown ticket (404) and the 1001st comment (413)', async () => {
    const n = await startTempNode(bin);
    const t = await ticket(n);
    expect((await n.req('POST', `/tickets/${t.id}/comments`, { body: '  \n ' })).status).toBe(400);
    expect((await n.req('POST', `/tickets/${t.id}/comments`, { body: '' })).status).toBe(400);
    // Comments are text: a control character (JSON would write it six bytes long) is refused, tab, CR and LF are not.
    const control = await n.req('POST', `/tickets/${t.id}/comments`, { body: 'bell \u0007 here' });
    expect(control.status).toBe(400);
    expect(control.body.error).toMatch(/control characters/);
    expect((await n.req('POST', `/tickets/${t.id}/comments`, { body: 'a\tb\r\nc' })).status).toBe(201);
    const over = await n.req('POST', `/tickets/${t.id}/comments`, { body: 'é'.repeat(COMMENT_MAX_BYTES / 2) + 'x' });
    expect(over.status).toBe(413);
    expect(over.body.error).toMatch(/bytes/);
    expect((await n.req('POST', `/tickets/${t.id}/comments`, { body: 'x'.repeat(COMMENT_MAX_BYTES) })).status).toBe(201);
    expect((await n.req('POST', `/tickets/${randomUUID()}/comments`, { body: 'hi' })).status).toBe(404);
    expect((await n.req('POST', `/tickets/${t.id}/comments`, { body: 'hi', author: 'a'.repeat(101) })).status).toBe(400);
    // 10,000 adds, ten at a time: the first MAX_COMMENTS are stored, every other one is a 413.
    const statuses: number[] = [];
    for (let i = 0; i < 10_000; i += 10) {
      const batch = await Promise.all(Array.from({ length: 10 }, (_, k) => n.req('POST', `/tickets/${t.id}/comments`, { body: `flood ${i + k}` })));
      statuses.push(...batch.map((r) => r.status));
    }
    expect(statuses.filter((s) => s === 201)).toHaveLength(MAX_COMMENTS - 2);
    expect(statuses.filter((s) => s === 413)).toHaveLength(10_000 - (MAX_COMMENTS - 2));
    const got = await n.req('GET', `/tickets/${t.id}`);
    expect(got.body.comment_count).toBe(MAX_COMMENTS);
  }, 300_000);

  it('refuses a peer copy with more than MAX_PEER_COMMENTS comments as malformed', async () => {
    const n = await startTempNode(bin);
    const t = await ticket(n);
    const copy = (await n.req('GET', '/sync/pull?since=1970-01-01T00:00:00Z')).body.tickets[0];
    const at = copy.updated_at;
    const comments = Array.from({ length: MAX_PEER_COMMENTS + 1 }, () => ({ id: randomUUID(), body: 'x', author: 'a', created_at: at, by: 'peer' }));
    const r = await n.req('POST', '/sync/push', [{ ...copy, comments }], { [SENDER_HEADER]: 'peer' });
    expect(r.body).toEqual({ accepted: 0, rejected: 1 });
    expect((await n.req('GET', `/tickets/${t.id}`)).body.comment_count).toBe(0);
    const controlled = await n.req('POST', '/sync/push', [{ ...copy, comments: [{ ...comments[0], body: 'nul \u0000' }] }], { [SENDER_HEADER]: 'peer' });
    expect(controlled.body).toEqual({ accepted: 0, rejected: 1 });
    const ok = await n.req('POST', '/sync/push', [{ ...copy, comments: comments.slice(0, MAX_PEER_COMMENTS) }]);
    expect(ok.body).toEqual({ accepted: 1, rejected: 0 });
    expect((await n.req('GET', `/tickets/${t.id}`)).body.comment_count).toBe(MAX_PEER_COMMENTS);
  }, 60_000);

  it('two nodes commenting on one ticket concurrently both end with both comments', async () => {
    const b = await startTempNode(bin, { syncIntervalMs: 100 });
    const a = await startTempNode(bin, { syncIntervalMs: 100, peers: [b.url] });
    const t = await ticket(a);
    await waitFor(async () => (await b.req('GET', `/tickets/${t.id}`)).status === 200, 'the ticket on b', 30_000);
    await Promise.all([a.req('POST', `/tickets/${t.id}/comments`, { body: 'from a' }), b.req('POST', `/tickets/${t.id}/comments`, { body: 'from b' })]);
    // And an edit on b, so that a's copy, pushed back without b's comment, must not lose it.
    await b.req('PATCH', `/tickets/${t.id}`, { status: 'pending' });
    const both = async (n: TicketNode): Promise<boolean> => {
      const g = (await n.req('GET', `/tickets/${t.id}`)).body;
      return g.comment_count === 2 && g.status === 'pending';
    };
    await waitFor(async () => (await both(a)) && (await both(b)), 'both comments and the edit on both nodes', 30_000);
    const ga = (await a.req('GET', `/tickets/${t.id}`)).body;
    const gb = (await b.req('GET', `/tickets/${t.id}`)).body;
    expect(ga.comments).toEqual(gb.comments);
    expect(ga.comments.map((c: { body: string }) => c.body).sort()).toEqual(['from a', 'from b']);
    expect(ga.updated_at).toBe(gb.updated_at);
  }, 60_000);
});
