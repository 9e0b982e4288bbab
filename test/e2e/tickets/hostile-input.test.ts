// Issue 11: bad input to the ticket tracker gets a 4xx {"error"} and loses nothing, never a
// 5xx. NUL and other control characters in a search (FTS5 read a NUL as the end of its
// query: 500 "unterminated string"), in every stored field, and through peer sync.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNode, type TicketNode } from '../../helpers/tickets-node.js';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';
import { SqliteTicketStore } from '../../../src/store/tickets.js';
import { join } from 'node:path';

const dirs = [tempDir(), tempDir()];
let node: TicketNode;
let peer: TicketNode;

beforeAll(async () => {
  node = await startNode(dirs[0]!.path);
  // A second node that pulls from the first, to carry the odd characters through sync.
  peer = await startNode(dirs[1]!.path, { peers: [node.url], syncIntervalMs: 100 });
  await node.req('POST', '/tickets', { title: 'Printer on fire', description: 'smoke from tray 2' });
});
afterAll(async () => {
  await peer.stop();
  await node.stop();
  for (const d of dirs) d.remove();
});

async function count(): Promise<number> {
  return (await node.req('GET', '/tickets')).body.count;
}

describe('GET /tickets?search= with control characters and query syntax', () => {
  it('a NUL is a word separator, not a storage failure (was 500 "unterminated string")', async () => {
    for (const q of ['%00', 'a%00b', 'printer%00', '%00%00%00']) {
      const r = await node.req('GET', `/tickets?search=${q}`);
      expect(r.status, q).toBe(200);
      expect(r.body.count, q).toBe(r.body.data.length);
    }
    // A quote beside the NUL is no word either: refused like any search with nothing to search
    // for (issue 30), never a 500.
    const quote = await node.req('GET', '/tickets?search=%22%00');
    expect(quote.status).toBe(400);
    expect(quote.body.error).toMatch(/^search has no words to search for: /);
    const found = (await node.req('GET', '/tickets?search=print*%00fir*')).body;
    expect(found.data.map((t: { title: string }) => t.title)).toEqual(['Printer on fire']);
    expect((await node.req('GET', '/tickets?search=%01printer%1b%7f')).body.count).toBe(1);
  });

  it('FTS5 operators and quotes are searched literally; syntax with no word in it is 400, never a 500', async () => {
    for (const q of ['printer*', 'NEAR(printer', 'printer OR x', 'NOT', '-printer', '^printer', 'title:printer']) {
      const r = await node.req('GET', `/tickets?search=${encodeURIComponent(q)}`);
      expect(r.status, q).toBe(200);
    }
    for (const q of ['"', '""', '*', '(', '\\']) {
      const r = await node.req('GET', `/tickets?search=${encodeURIComponent(q)}`);
      expect(r.status, q).toBe(400);
      expect(r.body.error, q).toMatch(/^search has no words to search for: /);
    }
  });

  it('NUL in the other filters is no filter match, never a 500', async () => {
    for (const q of ['status=%00', 'priority=high%00', 'channel=%00email', 'source=%00']) {
      const r = await node.req('GET', `/tickets?${q}`);
      expect(r.status, q).toBe(200);
    }
    expect((await node.req('GET', '/tickets/%00')).status).toBe(404);
    expect((await node.req('GET', '/tickets/%00')).body.error).toMatch(/not found/);
    const pull = await node.req('GET', '/sync/pull?since=2026-01-01T00:00:00Z%00');
    expect(pull.status).toBe(400);
    expect(pull.body.error).toMatch(/since/);
  });

  it('a pull narrowed by a forged or odd since_cursor, late_after or node id answers 400 or from since, never less', async () => {
    const since = '1970-01-01T00:00:00Z';
    const all = (await node.req('GET', `/sync/pull?since=${since}`)).body.count as number;
    expect(all).toBeGreaterThan(0);
    for (const q of ['since_cursor=yesterday&late_after=1', 'since_cursor=2026-01-01T00:00:00Z%00&late_after=1', 'since_cursor=2026-01-01T00:00:00Z&late_after=-5', 'since_cursor=2026-01-01T00:00:00Z&late_after=abc']) {
      const r = await node.req('GET', `/sync/pull?since=${since}&${q}`);
      expect(r.status, q).toBe(400);
      expect(typeof r.body.error, q).toBe('string');
    }
    // What arrived since an instant the node cannot vouch for (before it started, far in the
    // future, past its window) is not known: the whole page from since.
    for (const lateAfter of [1, 8_640_000_000_000_000, Date.now() - 11 * 60_000]) {
      const r = await node.req('GET', `/sync/pull?since=${since}&since_cursor=9999-12-31T23:59:59.999Z&late_after=${lateAfter}`);
      expect(r.status, String(lateAfter)).toBe(200);
      expect(r.body.count, String(lateAfter)).toBe(all);
    }
    // A cursor before since narrows nothing.
    const before = await node.req('GET', `/sync/pull?since=2000-01-01T00:00:00Z&since_cursor=${since}&late_after=${(await node.req('GET', `/sync/pull?since=${since}`)).body.arrivals_at}`);
    expect(before.body.count).toBe(all);
  });

  it('an over-long search or source is 400 with an error body', async () => {
    for (const q of [`search=${'a '.repeat(600)}`, `source=${'s'.repeat(201)}`, `status=${'x'.repeat(101)}`]) {
      const r = await node.req('GET', `/tickets?${q}`);
      expect(r.status).toBe(400);
      expect(typeof r.body.error).toBe('string');
    }
  });
});

describe('control characters in stored fields', () => {
  const odd = 'a\u0000b\u0001c\u001b[31md\u007f\u2028e';
  it('round-trip exactly through create, get, list, search, patch, and peer sync', async () => {
    const created = await node.req('POST', '/tickets', { title: `nul ${odd}`, description: odd, source: `src${odd}`, requester: odd, assignee: odd, tags: [odd, 'plain'] });
    expect(created.status).toBe(201);
    const t = created.body;
    expect(t).toMatchObject({ title: `nul ${odd}`, description: odd, source: `src${odd}`, requester: odd, assignee: odd, tags: [odd, 'plain'] });
    expect({ ...(await node.req('GET', `/tickets/${t.id}`)).body, comments: undefined }).toEqual(t);
    expect((await node.req('GET', `/tickets?source=${encodeURIComponent(`src${odd}`)}`)).body.data).toEqual([t]);
    expect((await node.req('GET', '/tickets?search=nul')).body.data).toEqual([t]);

    const patched = await node.req('PATCH', `/tickets/${t.id}`, { title: `still ${odd}`, description: `${odd}${odd}` });
    expect(patched.status).toBe(200);
    expect((await node.req('GET', '/tickets?search=still')).body.data).toEqual([patched.body]);
    expect((await node.req('GET', '/tickets?search=nul')).body.count).toBe(0); // the old title left the index

    const copy = await waitFor(async () => {
      const r = await peer.req('GET', `/tickets/${t.id}`);
      return r.status === 200 && r.body.updated_at === patched.body.updated_at ? r.body : undefined;
    }, 'the edited ticket on the peer');
    expect({ ...copy, comments: undefined }).toEqual(patched.body);
    expect((await peer.req('GET', '/tickets?search=still')).body.data).toEqual([patched.body]);
  });

  it('1 MiB strings in any field are 400 with an error body and store nothing', async () => {
    const before = await count();
    const big = 'x'.repeat(1024 * 1024);
    for (const field of ['title', 'description', 'source', 'requester', 'assignee']) {
      const r = await node.req('POST', '/tickets', { title: 'ok', [field]: big });
      expect(r.status, field).toBe(400);
      expect(r.body.error, field).toMatch(new RegExp(field));
    }
    const tags = await node.req('POST', '/tickets', { title: 'ok', tags: [big] });
    expect(tags.status).toBe(400);
    const some = (await node.req('GET', '/tickets')).body.data[0];
    const patch = await node.req('PATCH', `/tickets/${some.id}`, { description: big });
    expect(patch.status).toBe(400);
    expect({ ...(await node.req('GET', `/tickets/${some.id}`)).body, comments: undefined }).toEqual(some);
    expect(await count()).toBe(before);

    // A peer copy with an oversized field is rejected, the rest of the push still counts.
    const ok = { id: 'b0000000-0000-4000-8000-000000000001', title: 'fits', status: 'open', priority: 'low', channel: 'api', updated_at: new Date().toISOString() };
    const pushed = await node.req('POST', '/sync/push', [{ ...ok, id: 'b0000000-0000-4000-8000-000000000002', description: big }, ok]);
    expect(pushed.body).toEqual({ accepted: 1, rejected: 1 });
  });
});

describe('large change sets', () => {
  it('700 tickets with 100 kB descriptions (70 MB, past the 16 MiB body limit) still reach a peer, in several pushes', async () => {
    const dirA = tempDir();
    const dirB = tempDir();
    try {
      const store = new SqliteTicketStore(join(dirA.path, 'tickets.db'));
      const stamp = new Date().toISOString();
      for (let i = 0; i < 700; i++) {
        const id = `d${String(i).padStart(7, '0')}-0000-4000-8000-000000000000`;
        void store.insert({ id, short_id: id.slice(0, 8), title: `big ${i}`, description: 'x'.repeat(100_000), status: 'open', priority: 'low', channel: 'api', source: 'manual', requester: null, assignee: null, tags: [], created_at: stamp, updated_at: stamp, updated_by: 'seed' });
      }
      await store.close();
      const b = await startNode(dirB.path);
      const a = await startNode(dirA.path, { peers: [b.url], syncIntervalMs: 100 });
      try {
        await waitFor(async () => (await b.req('GET', '/tickets?priority=low')).body.count === 700, 'all 700 tickets on the peer', 60_000);
        expect(a.logs.filter((l) => l.includes('sync with peer failed'))).toEqual([]);
      } finally {
        await a.stop();
        await b.stop();
      }
    } finally {
      dirA.remove();
      dirB.remove();
    }
  });
});
