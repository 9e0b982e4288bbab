// Spec service B, every route and error, against a real node on 127.0.0.1.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNode, TOKEN, type TicketNode } from '../../helpers/tickets-node.js';
import { tempDir } from '../../helpers/tmp.js';
import { ManualClock } from '../../../src/util/clock.js';

const dir = tempDir();
const clock = new ManualClock(Date.parse('2026-03-01T10:00:00.000Z'));
let node: TicketNode;

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function create(body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const r = await node.req('POST', '/tickets', body);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  clock.advance(1000);
  return r.body;
}

async function count(): Promise<number> {
  return (await node.req('GET', '/tickets')).body.count;
}

beforeAll(async () => {
  node = await startNode(dir.path, {}, { clock });
});
afterAll(async () => {
  await node.stop();
  dir.remove();
});

describe('authentication (every route needs the shared token)', () => {
  const routes: [string, string][] = [
    ['POST', '/tickets'],
    ['GET', '/tickets'],
    ['GET', '/tickets/abc'],
    ['PATCH', '/tickets/abc'],
    ['GET', '/sync/pull?since=1970-01-01T00:00:00Z'],
    ['POST', '/sync/push'],
    ['GET', '/sync/node'],
    ['GET', '/openapi.json'],
    ['GET', '/no/such/route'],
  ];
  for (const [method, path] of routes) {
    it(`${method} ${path}: missing, malformed or wrong token is 401 {"error":"unauthorized"}`, async () => {
      for (const headers of [{ authorization: '' }, { authorization: `Basic ${TOKEN}` }, { authorization: 'Bearer wrong' }, { authorization: `Bearer ${TOKEN}x` }]) {
        const r = await node.req(method, path, method === 'GET' ? undefined : {}, headers);
        expect(r.status).toBe(401);
        expect(r.body).toEqual({ error: 'unauthorized' });
      }
    });
  }
  it('the right token passes, and no ticket was created by the refused requests', async () => {
    expect((await node.req('GET', '/openapi.json')).status).toBe(200);
    expect(await count()).toBe(0);
  });
});

describe('POST /tickets', () => {
  it('creates a ticket with a UUID id, short id, defaults and millisecond UTC stamps (201)', async () => {
    const t = await create({ title: 'Printer on fire' });
    expect(t.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(t.short_id).toBe(String(t.id).slice(0, 8));
    expect(t).toMatchObject({ title: 'Printer on fire', description: '', status: 'open', priority: 'normal', channel: 'api', source: 'manual', requester: null, assignee: null, tags: [] });
    expect(t.updated_at).toMatch(ISO_MS);
    expect(t.created_at).toBe(t.updated_at);
    const node_id = (await node.req('GET', '/sync/node')).body.node_id;
    expect(t.updated_by).toBe(node_id);
  });

  it('takes every NewTicket field, enums case-insensitively', async () => {
    // Tags set in one edit come back in alphabetical order (docs/tickets.md, "Field-by-field merge").
    const t = await create({ title: 'VPN drops', description: 'every hour', status: 'On Hold', priority: 'URGENT', channel: 'Email', source: 'support@example.com', requester: 'ana', assignee: 'bo', tags: ['vpn', 'net', 'vpn'] });
    expect(t).toMatchObject({ status: 'on_hold', priority: 'urgent', channel: 'email', source: 'support@example.com', requester: 'ana', assignee: 'bo', tags: ['net', 'vpn'] });
  });

  it('bad input is 400 with an error body and stores nothing', async () => {
    const before = await count();
    const cases: [unknown, RegExp][] = [
      [{}, /title/],
      [{ title: '' }, /title/],
      [{ title: '   ' }, /title/],
      [{ title: 5 }, /title/],
      [{ title: 'x', status: 'bogus' }, /invalid status: "bogus"/],
      [{ title: 'x', priority: 'meh' }, /invalid priority: "meh"/],
      [{ title: 'x', channel: 'fax' }, /invalid channel: "fax"/],
      [{ title: 'x', tags: 'a' }, /tags/],
      [{ title: 'x', colour: 'red' }, /colour/],
      [[], /object/],
    ];
    for (const [body, text] of cases) {
      const r = await node.req('POST', '/tickets', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toMatch(text);
    }
    const malformed = await node.req('POST', '/tickets', '{"title": "x"');
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toMatch(/malformed JSON/);
    expect(await count()).toBe(before);
  });
});

describe('GET /tickets', () => {
  it('filters by status, priority, channel and source; newest change first', async () => {
    await create({ title: 'Laptop battery swollen', priority: 'high', channel: 'phone', source: 'helpdesk' });
    const all = (await node.req('GET', '/tickets')).body;
    expect(all.count).toBe(all.data.length);
    const stamps = all.data.map((t: { updated_at: string }) => t.updated_at);
    expect([...stamps].sort().reverse()).toEqual(stamps);
    const high = (await node.req('GET', '/tickets?priority=high')).body;
    expect(high.data.map((t: { title: string }) => t.title)).toEqual(['Laptop battery swollen']);
    expect((await node.req('GET', '/tickets?status=on_hold')).body.count).toBe(1);
    expect((await node.req('GET', '/tickets?channel=phone&source=helpdesk')).body.count).toBe(1);
    expect((await node.req('GET', '/tickets?source=nowhere')).body.count).toBe(0);
  });

  it('an unparseable status, priority or channel is ignored (no filter applied)', async () => {
    const total = await count();
    expect((await node.req('GET', '/tickets?status=bogus')).body.count).toBe(total);
    expect((await node.req('GET', '/tickets?priority=meh&channel=fax')).body.count).toBe(total);
  });

  it('search uses full text over title and description (all words, whole; word* a prefix)', async () => {
    const titles = async (q: string): Promise<string[]> => (await node.req('GET', `/tickets?search=${encodeURIComponent(q)}`)).body.data.map((t: { title: string }) => t.title).sort();
    expect(await titles('printer')).toEqual(['Printer on fire']);
    expect(await titles('hour')).toEqual(['VPN drops']); // description only
    expect(await titles('batt* lap*')).toEqual(['Laptop battery swollen']);
    expect(await titles('battery LAPTOP')).toEqual(['Laptop battery swollen']);
    expect(await titles('batt lap')).toEqual([]); // whole words only, unless marked with *
    expect(await titles('vpn printer')).toEqual([]);
    // A prefix costs a merge of every word it covers: at least 3 characters, at most 3 a search.
    for (const [q, why] of [
      ['l*', /at least 3 characters before its \*: "l\*"/],
      ['ba* laptop', /at least 3 characters/],
      ['bat* lap* swo* vpn*', /at most 3 prefixes/],
      // Issue 28: punctuation the tokenizer drops does not count, and the star takes the last
      // token, so each of these runs as `l*` and is refused as `l*` is.
      ['..l*', /at least 3 characters before its \*: "\.\.l\*" \(searched as "l\*"/],
      ['...l*', /searched as "l\*"/],
      ['laptop.l*', /searched as "l\*"/],
      ['"l"*', /searched as "l\*"/],
    ] as const) {
      const r = await node.req('GET', `/tickets?search=${encodeURIComponent(q)}`);
      expect(r.status, q).toBe(400);
      expect(r.body.error, q).toMatch(why);
    }
    // Punctuation that leaves 3 characters or more in the last token is still a prefix.
    expect(await titles('..bat*')).toEqual(['Laptop battery swollen']);
    expect(await titles('(lap*')).toEqual(['Laptop battery swollen']);
    // Nothing but punctuation and stars holds no word: `***` listed every ticket and `...` none.
    // Refused as a notes search refuses such a query (issue 30); a search of only blanks is no search.
    for (const q of ['..*', '***', '-*', '...', '"', '*', '* *']) {
      const r = await node.req('GET', `/tickets?search=${encodeURIComponent(q)}`);
      expect(r.status, q).toBe(400);
      expect(r.body.error, q).toBe(`search has no words to search for: ${JSON.stringify(q)}`);
    }
    expect((await titles('*** laptop'))).toEqual(['Laptop battery swollen']); // the word is searched
    for (const q of ['', '  ']) expect((await node.req('GET', `/tickets?search=${encodeURIComponent(q)}`)).body.count, q).toBe((await node.req('GET', '/tickets')).body.count);
    // The same prefix twice is one (and so within the three).
    expect(await titles('bat* bat* lap* lap* swo*')).toEqual(['Laptop battery swollen']);
    // FTS syntax in user input is taken literally, never a 500
    for (const q of ['a OR', 'NEAR(', 'title:x', "it's"]) {
      const r = await node.req('GET', `/tickets?search=${encodeURIComponent(q)}`);
      expect(r.status, q).toBe(200);
    }
  });
});

describe('GET and PATCH /tickets/{id}', () => {
  it('accepts the full id and the short id; an unknown id is 404 saying not found', async () => {
    const t = await create({ title: 'Short ids work' });
    expect((await node.req('GET', `/tickets/${t.id}`)).body.id).toBe(t.id);
    expect((await node.req('GET', `/tickets/${t.short_id}`)).body.id).toBe(t.id);
    expect((await node.req('GET', `/tickets/${String(t.short_id).toUpperCase()}`)).body.id).toBe(t.id);
    const missing = await node.req('GET', '/tickets/00000000-0000-4000-8000-000000000000');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatch(/not found/);
    expect((await node.req('GET', '/tickets/abc')).status).toBe(404); // too short to be a short id
  });

  it('a short id shared by two tickets is ambiguous (409), the full ids still work', async () => {
    const base = { title: 't', status: 'open', priority: 'low', channel: 'web', updated_at: '2026-01-01T00:00:00.000Z' };
    const a = { ...base, id: 'abcdef01-0000-4000-8000-000000000001' };
    const b = { ...base, id: 'abcdef01-0000-4000-8000-000000000002' };
    expect((await node.req('POST', '/sync/push', [a, b])).body).toEqual({ accepted: 2, rejected: 0 });
    const r = await node.req('GET', '/tickets/abcdef01');
    expect(r.status).toBe(409);
    expect(r.body.error).toMatch(/ambiguous/);
    expect((await node.req('GET', `/tickets/${a.id}`)).status).toBe(200);
  });

  it('PATCH with a valid status changes it and moves updated_at forward (200)', async () => {
    const t = await create({ title: 'Patch me' });
    const r = await node.req('PATCH', `/tickets/${t.short_id}`, { status: 'solved' });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('solved');
    expect(r.body.updated_at > String(t.updated_at)).toBe(true);
    expect((await node.req('GET', `/tickets/${t.id}`)).body.status).toBe('solved');
  });

  it('PATCH without status leaves it unchanged (200 with the ticket); other fields can change', async () => {
    const t = await create({ title: 'Keep my status', status: 'pending' });
    const same = await node.req('PATCH', `/tickets/${t.id}`, {});
    expect(same.status).toBe(200);
    expect(same.body).toEqual(t);
    const r = await node.req('PATCH', `/tickets/${t.id}`, { assignee: 'cy', priority: 'high', tags: ['x'], title: 'Renamed' });
    expect(r.body).toMatchObject({ status: 'pending', assignee: 'cy', priority: 'high', tags: ['x'], title: 'Renamed' });
  });

  it('PATCH with an unparseable status is 400 naming the value and changes nothing', async () => {
    const t = await create({ title: 'Bad patch', priority: 'low' });
    const r = await node.req('PATCH', `/tickets/${t.id}`, { status: 'exploded', priority: 'high' });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('invalid status: "exploded"');
    for (const body of [{ status: 5 }, { title: '' }, { nope: 1 }, '{"status":']) {
      const bad = await node.req('PATCH', `/tickets/${t.id}`, body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(typeof bad.body.error).toBe('string');
    }
    expect({ ...(await node.req('GET', `/tickets/${t.id}`)).body, comments: undefined }).toEqual(t);
  });

  it('PATCH of an unknown ticket is 404', async () => {
    const r = await node.req('PATCH', '/tickets/00000000-0000-4000-8000-000000000000', { status: 'open' });
    expect(r.status).toBe(404);
    expect(r.body.error).toMatch(/not found/);
  });

  it('a node whose clock went backwards still stamps an edit later than the stored copy', async () => {
    const t = await create({ title: 'Clock skew' });
    clock.advance(-3_600_000);
    const r = await node.req('PATCH', `/tickets/${t.id}`, { status: 'pending' });
    expect(r.body.updated_at > String(t.updated_at)).toBe(true);
    clock.advance(3_600_000);
  });
});

describe('sync endpoints', () => {
  it('GET /sync/node gives the node id, the same one pull reports', async () => {
    const n = await node.req('GET', '/sync/node');
    expect(n.status).toBe(200);
    expect(n.body.node_id).toMatch(/^[0-9a-f-]{36}$/);
    const p = await node.req('GET', '/sync/pull?since=1970-01-01T00:00:00Z');
    expect(p.body.node_id).toBe(n.body.node_id);
  });

  it('GET /sync/pull returns tickets updated strictly after since, oldest first', async () => {
    const all = (await node.req('GET', '/sync/pull?since=1970-01-01T00:00:00Z')).body;
    expect(all.count).toBe(all.tickets.length);
    expect(all.count).toBe(await count());
    const stamps = all.tickets.map((t: { updated_at: string }) => t.updated_at);
    expect([...stamps].sort()).toEqual(stamps);
    const mid = stamps[Math.floor(stamps.length / 2)];
    const after = (await node.req('GET', `/sync/pull?since=${encodeURIComponent(mid)}`)).body;
    expect(after.tickets.every((t: { updated_at: string }) => t.updated_at > mid)).toBe(true);
    // the same instant in another offset means the same thing
    const offset = new Date(Date.parse(mid) + 2 * 3_600_000).toISOString().replace('Z', '+02:00');
    expect((await node.req('GET', `/sync/pull?since=${encodeURIComponent(offset)}`)).body.count).toBe(after.count);
  });

  it('GET /sync/pull without or with a bad since is 400', async () => {
    expect((await node.req('GET', '/sync/pull')).status).toBe(400);
    const bad = await node.req('GET', '/sync/pull?since=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/since/);
  });

  it('POST /sync/push upserts with last-writer-wins and counts accepted and rejected', async () => {
    const id = '5e1f0000-0000-4000-8000-00000000aaaa';
    const v1 = { id, title: 'v1', status: 'open', priority: 'low', channel: 'web', source: 'peer', updated_at: '2026-02-01T00:00:00+01:00', updated_by: 'n1' };
    expect((await node.req('POST', '/sync/push', [v1])).body).toEqual({ accepted: 1, rejected: 0 });
    const stored = (await node.req('GET', `/tickets/${id}`)).body;
    expect(stored.updated_at).toBe('2026-01-31T23:00:00.000Z'); // normalised to UTC ms
    const older = { ...v1, title: 'older', updated_at: '2026-01-01T00:00:00Z' };
    const newer = { ...v1, title: 'newer', updated_at: '2026-02-02T00:00:00Z' };
    expect((await node.req('POST', '/sync/push', [older])).body).toEqual({ accepted: 0, rejected: 1 });
    expect((await node.req('POST', '/sync/push', [newer, newer])).body).toEqual({ accepted: 2, rejected: 0 }); // a re-delivered copy is idempotent
    expect((await node.req('GET', `/tickets/${id}`)).body.title).toBe('newer');
    // copies that cannot be stored are rejected; the rest of the batch still counts
    const bad = [5, null, { id: 'not-a-uuid', title: 'x' }, { ...newer, id: '5e1f0000-0000-4000-8000-00000000bbbb', status: 'weird' }, { ...newer, id: '5e1f0000-0000-4000-8000-00000000cccc', updated_at: 'soon' }];
    expect((await node.req('POST', '/sync/push', [...bad, { ...newer, id: '5e1f0000-0000-4000-8000-00000000dddd' }])).body).toEqual({ accepted: 1, rejected: 5 });
  });

  it('equal updated_at settles on the same copy whichever arrives first', async () => {
    const base = { status: 'open', priority: 'low', channel: 'web', updated_at: '2026-02-03T00:00:00.000Z' };
    const a = { ...base, id: '7a000000-0000-4000-8000-000000000001', title: 'from A', updated_by: 'node-a' };
    const b = { ...a, title: 'from B', updated_by: 'node-b' };
    await node.req('POST', '/sync/push', [a]);
    const first = await node.req('POST', '/sync/push', [b]);
    const a2 = { ...a, id: '7a000000-0000-4000-8000-000000000002' };
    const b2 = { ...b, id: a2.id };
    await node.req('POST', '/sync/push', [b2]);
    const second = await node.req('POST', '/sync/push', [a2]);
    const t1 = (await node.req('GET', `/tickets/${a.id}`)).body.title;
    const t2 = (await node.req('GET', `/tickets/${a2.id}`)).body.title;
    expect(t1).toBe(t2);
    expect(t1).toBe('from B'); // node-b sorts after node-a
    expect(first.body.accepted + second.body.accepted).toBe(1);
  });

  it('POST /sync/push with a body that is not an array is 400 and stores nothing', async () => {
    const before = await count();
    for (const body of [{}, '"x"', '[{"id":']) {
      const r = await node.req('POST', '/sync/push', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(typeof r.body.error).toBe('string');
    }
    expect(await count()).toBe(before);
  });
});

describe('unknown routes and the OpenAPI document', () => {
  it('an unknown route is 404 with an error body', async () => {
    const r = await node.req('GET', '/nope');
    expect(r.status).toBe(404);
    expect(typeof r.body.error).toBe('string');
  });
  it('/openapi.json documents every route', async () => {
    const doc = (await node.req('GET', '/openapi.json')).body;
    expect(Object.keys(doc.paths).sort()).toEqual(['/sync/node', '/sync/pull', '/sync/push', '/sync/snapshot', '/tickets', '/tickets/{id}', '/tickets/{id}/comments', '/tickets/{id}/history']);
  });
});
