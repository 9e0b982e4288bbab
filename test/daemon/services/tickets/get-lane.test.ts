// GET /tickets/{id} taken before fastify (get-lane.ts), on a real tickets node listening on
// 127.0.0.1: each request sent over HTTP, where the lane can take it, and the same request through
// inject(), which never reaches a lane (the fastify route answers it). Both answers must be the same
// bytes and headers with the same request line; a spy on the server's DirectRoutes tells whether the
// lane answered. What the lane must not answer (no token, another spelling of it, a short id, a
// ticket with comments, an id it does not hold) fastify answers as before.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import fastJson from 'fast-json-stringify';
import { startNode, TOKEN, type TicketNode } from '../../../helpers/tickets-node.js';
import { tempDir } from '../../../helpers/tmp.js';
import { TicketWithCommentsSchema, type Ticket } from '../../../../src/schemas/tickets.js';
import { uncommentedTicketText } from '../../../../daemon/services/tickets/get-lane.js';

let node: TicketNode;
let dir: ReturnType<typeof tempDir>;

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The headers of an answer, the date aside (the second moves it). */
function kept(h: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(h).sort()) if (k !== 'date') out[k] = String(h[k]);
  return out;
}

async function overHttp(path: string, headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }, method = 'GET'): Promise<{ answer: Answer; byLane: boolean }> {
  const begin = vi.spyOn(node.service.app.directRoutes, 'begin');
  try {
    const res = await fetch(node.url + path, { method, headers });
    const answer = { status: res.status, headers: kept(Object.fromEntries(res.headers)), body: await res.text() };
    return { answer, byLane: begin.mock.calls.length > 0 };
  } finally {
    begin.mockRestore();
  }
}

/**
 * The fastify route's answer over HTTP: the same request with the scheme word in lower case, which
 * the auth plugin accepts and the lane declines (the test below proves both).
 */
async function viaFastify(path: string): Promise<Answer> {
  const { answer, byLane } = await overHttp(path, { authorization: `bearer ${TOKEN}` });
  expect(byLane).toBe(false);
  return answer;
}

/** The route's answer through inject(), which never reaches a lane (no connection headers there). */
async function injected(path: string): Promise<Omit<Answer, 'headers'> & { type: string; length: string }> {
  const res = await node.service.app.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${TOKEN}` } });
  return { status: res.statusCode, type: String(res.headers['content-type']), length: String(res.headers['content-length']), body: res.body };
}

function asInjected(a: Answer): Omit<Answer, 'headers'> & { type: string; length: string } {
  return { status: a.status, type: a.headers['content-type']!, length: a.headers['content-length']!, body: a.body };
}

/** The request lines of the log, without what differs by when they ran. */
function lastRequestLine(): string {
  const lines = node.logs.filter((l) => l.includes('"msg":"request"'));
  return lines[lines.length - 1]!.replace(/"time":\d+,/, '').replace(/"ms":[\d.]+,/, '').replace(/"reqId":"req-[0-9a-z]+"/, '"reqId":"<id>"');
}

async function create(body: object): Promise<string> {
  const r = await node.req('POST', '/tickets', body);
  expect(r.status).toBe(201);
  return r.body.id as string;
}

beforeAll(async () => {
  dir = tempDir();
  node = await startNode(dir.path);
});

afterAll(async () => {
  await node?.stop();
  dir?.remove();
});

describe('the GET /tickets/{id} lane', () => {
  it('answers a cached ticket without comments with the bytes, headers and request line of the fastify route', async () => {
    const tickets = [
      await create({ title: 'printer error after update' }),
      await create({ title: 'quote " backslash \\ newline \n é 😀 \u2028', description: 'd', requester: 'ana@example.com', assignee: 'bo', tags: ['hardware', 'floor-3'], priority: 'high', channel: 'email' }),
    ];
    for (const id of tickets) {
      const { answer, byLane } = await overHttp(`/tickets/${id}`);
      expect(byLane, id).toBe(true);
      expect(answer.status).toBe(200);
      const laneLine = lastRequestLine();
      expect(answer).toEqual(await viaFastify(`/tickets/${id}`));
      expect(laneLine).toEqual(lastRequestLine());
      expect(asInjected(answer)).toEqual(await injected(`/tickets/${id}`));
      expect(laneLine).toContain('"method":"GET","route":"/tickets/:id","status":200');
    }
  });

  it('answers a ticket as changed after an edit, never an answer kept from before', async () => {
    const id = await create({ title: 'before' });
    expect(JSON.parse((await overHttp(`/tickets/${id}`)).answer.body).title).toBe('before');
    expect((await node.req('PATCH', `/tickets/${id}`, { title: 'after', tags: ['x'] })).status).toBe(200);
    // The edit drops the cached copy: fastify reads the row again and caches it; the lane takes the next.
    expect(JSON.parse((await overHttp(`/tickets/${id}`)).answer.body)).toMatchObject({ title: 'after', tags: ['x'] });
    const again = await overHttp(`/tickets/${id}`);
    expect(again.byLane).toBe(true);
    expect(JSON.parse(again.answer.body)).toMatchObject({ title: 'after', tags: ['x'] });
    expect(again.answer).toEqual(await viaFastify(`/tickets/${id}`));
  });

  it('leaves to fastify what it must not answer: no token, a wrong one, other spellings, a short or upper-case id, comments, an unknown id, HEAD, a query, a longer path', async () => {
    const id = await create({ title: 'declined cases' });
    const commented = await create({ title: 'with a comment' });
    expect((await node.req('POST', `/tickets/${commented}/comments`, { body: 'hello' })).status).toBe(201);
    await node.req('GET', `/tickets/${commented}`);
    const bearer = { authorization: `Bearer ${TOKEN}` };
    const cases: [string, string, Record<string, string>, number, string?][] = [
      ['no token', `/tickets/${id}`, {}, 401],
      ['a wrong token', `/tickets/${id}`, { authorization: `Bearer ${TOKEN}x` }, 401],
      ['a token prefix', `/tickets/${id}`, { authorization: `Bearer ${TOKEN.slice(0, -1)}` }, 401],
      ['scheme in lower case', `/tickets/${id}`, { authorization: `bearer ${TOKEN}` }, 200],
      ['Basic with the token (the tickets take Bearer only)', `/tickets/${id}`, { authorization: `Basic ${Buffer.from(`git:${TOKEN}`).toString('base64')}` }, 401],
      ['a short id', `/tickets/${id.slice(0, 8)}`, bearer, 200],
      ['an upper-case id', `/tickets/${id.toUpperCase()}`, bearer, 200],
      ['a ticket with comments', `/tickets/${commented}`, bearer, 200],
      ['an unknown id', '/tickets/00000000-0000-4000-8000-000000000000', bearer, 404],
      ['a query string', `/tickets/${id}?x=1`, bearer, 200],
      ['the history', `/tickets/${id}/history`, bearer, 200],
      ['HEAD', `/tickets/${id}`, bearer, 200, 'HEAD'],
    ];
    for (const [what, path, headers, status, method] of cases) {
      const { answer, byLane } = await overHttp(path, headers, method);
      expect(byLane, what).toBe(false);
      expect(answer.status, what).toBe(status);
    }
    const withComments = JSON.parse((await overHttp(`/tickets/${commented}`)).answer.body);
    expect(withComments).toMatchObject({ comment_count: 1, comments: [{ body: 'hello' }] });
  });
});

describe('the lane\'s answer text', () => {
  const ticket: Ticket = {
    id: '46b59898-b8d6-4113-be92-c6d6b2a1a0f1',
    short_id: '46b59898',
    title: 'quote " and \\ and \n and \u0001 and é and 😀 and \u2028 and a lone \ud800',
    description: '',
    status: 'open',
    priority: 'high',
    channel: 'email',
    source: 'manual',
    requester: null,
    assignee: 'ana',
    tags: ['hardware', 'ünïcode'],
    created_at: '2026-11-30T14:07:31.311Z',
    updated_at: '2026-11-30T14:08:00.000Z',
    updated_by: 'node-1',
    field_stamps: { base: ['2026-11-30T14:07:31.311Z', 'node-1'] },
    comment_count: 0,
  };

  it('is what the route\'s response schema serializes (fastify\'s serializer), escapes, nulls and all, without the field stamps', () => {
    const serialize = fastJson(TicketWithCommentsSchema as object);
    for (const t of [ticket, { ...ticket, requester: 'bo', assignee: null, tags: [] }]) {
      const { field_stamps: _s, ...shown } = t;
      expect(uncommentedTicketText(t)).toBe(serialize({ ...shown, comment_count: 0, comments: [] }));
    }
  });

  it('carries every property of the schema, in its order: a field added to the schema fails here', () => {
    expect(Object.keys(JSON.parse(uncommentedTicketText(ticket)))).toEqual(Object.keys(TicketWithCommentsSchema.properties));
  });
});
