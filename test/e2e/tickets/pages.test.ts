// Paged lists and pulls on a real node: GET /tickets pages with a keyset cursor (no repeats,
// no skipped tickets while others change), GET /sync/pull pages oldest first without
// splitting tickets that share one updated_at, the push bounds, and a peer that follows
// many small pages to catch up, then pushes back only what the other side lacks.
import { afterEach, describe, expect, it } from 'vitest';
import type { TicketsOptions } from '../../../daemon/services/tickets/options.js';
import { startTempNode, type TicketNode } from '../../helpers/tickets-node.js';
import { waitFor } from '../../helpers/wait.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const node = (flags: TicketsOptions = {}): Promise<TicketNode> => startTempNode((c) => cleanups.push(c), { syncIntervalMs: 60_000, ...flags });

type T = { id: string; updated_at: string; title: string; status: string };

function copy(n: number, updated_at: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const id = `b0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
  return { id, title: `copy ${n}`, status: 'open', priority: 'normal', channel: 'api', updated_at, created_at: updated_at, ...extra };
}

describe('GET /tickets pages', () => {
  it('defaults to 100 per page; count counts every match; next_cursor leads on until null', async () => {
    const n = await node();
    const copies = Array.from({ length: 130 }, (_, i) => copy(i, new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), i % 3 === 0 ? { status: 'pending' } : {}));
    expect((await n.req('POST', '/sync/push', copies)).body).toEqual({ accepted: 130, rejected: 0 });
    const first = await n.req('GET', '/tickets');
    expect(first.body.data).toHaveLength(100);
    expect(first.body.count).toBe(130);
    expect(typeof first.body.next_cursor).toBe('string');
    // The stamps are a sync property: list and get answers keep the spec's Ticket.
    expect(first.body.data[0].field_stamps).toBeUndefined();
    expect((await n.req('GET', `/tickets/${first.body.data[0].id}`)).body.field_stamps).toBeUndefined();
    const second = await n.req('GET', `/tickets?cursor=${first.body.next_cursor}`);
    expect(second.body.data).toHaveLength(30);
    expect(second.body.next_cursor).toBeNull();
    const all = [...first.body.data, ...second.body.data] as T[];
    expect(new Set(all.map((t) => t.id)).size).toBe(130);
    // Newest change first, throughout.
    expect(all.map((t) => t.updated_at)).toEqual([...all.map((t) => t.updated_at)].sort().reverse());
    const pending = await n.req('GET', '/tickets?status=pending&limit=5');
    expect(pending.body).toMatchObject({ count: 44 });
    expect(pending.body.data).toHaveLength(5);
    expect((pending.body.data as T[]).every((t) => t.status === 'pending')).toBe(true);
  });

  it('pages stay stable while tickets change: no ticket twice, none that did not change is skipped', async () => {
    const n = await node();
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) ids.push((await n.req('POST', '/tickets', { title: `t${i}` })).body.id);
    const seen: string[] = [];
    const changed = new Set<string>();
    let cursor: string | null = null;
    let round = 0;
    do {
      const r: { body: { data: T[]; next_cursor: string | null } } = await n.req('GET', `/tickets?limit=7${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...r.body.data.map((t) => t.id));
      cursor = r.body.next_cursor;
      // Between pages: edit one ticket not yet shown (it moves to the front) and create one.
      const notYet = ids.find((id) => !seen.includes(id) && !changed.has(id));
      if (notYet) {
        changed.add(notYet);
        await n.req('PATCH', `/tickets/${notYet}`, { status: 'pending' });
      }
      await n.req('POST', '/tickets', { title: `new during page ${round++}` });
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of ids) if (!changed.has(id)) expect(seen).toContain(id);
  });

  it('a forged cursor or a bad limit is 400 with an error body', async () => {
    const n = await node();
    for (const q of ['cursor=nonsense!', `cursor=${Buffer.from('x/y').toString('base64url')}`, 'cursor=', 'limit=0', 'limit=1001', 'limit=abc', 'limit=2.5', 'limit=1e400', 'limit=-1e400']) {
      const r = await n.req('GET', `/tickets?${q}`);
      expect(r.status, q).toBe(400);
      expect(typeof r.body.error, q).toBe('string');
    }
  });
});

describe('GET /sync/pull pages', () => {
  it('oldest first, has_more and next_since; tickets sharing one updated_at are never split', async () => {
    const n = await node();
    const t = (s: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
    // Stamps: 1, 2, then six tickets at 3, then 4 and 5.
    const copies = [copy(1, t(1)), copy(2, t(2)), ...[3, 4, 5, 6, 7, 8].map((i) => copy(i, t(3))), copy(9, t(4)), copy(10, t(5))];
    await n.req('POST', '/sync/push', copies);
    const p1 = await n.req('GET', '/sync/pull?since=1970-01-01T00:00:00Z&limit=4');
    expect(p1.body.tickets.map((x: T) => x.updated_at)).toEqual([t(1), t(2), t(3), t(3), t(3), t(3), t(3), t(3)]);
    expect(p1.body).toMatchObject({ count: 8, has_more: true, next_since: t(3) });
    const p2 = await n.req('GET', `/sync/pull?since=${encodeURIComponent(p1.body.next_since)}&limit=4`);
    expect(p2.body.tickets.map((x: T) => x.title)).toEqual(['copy 9', 'copy 10']);
    expect(p2.body).toMatchObject({ count: 2, has_more: false, next_since: t(5) });
    const none = await n.req('GET', `/sync/pull?since=${encodeURIComponent(t(5))}`);
    expect(none.body).toMatchObject({ tickets: [], count: 0, has_more: false, next_since: null });
    expect(p1.body.tickets[0].field_stamps).toEqual({ base: [t(1), ''] });
    for (const q of ['limit=0', 'limit=5001', 'limit=1e400', 'limit=-1e400']) expect((await n.req('GET', `/sync/pull?since=1970-01-01T00:00:00Z&${q}`)).status).toBe(400);
  });

  it('split=true (our peers): a page may end inside a group, next_cursor continues it, and every ticket comes once (issue 28)', async () => {
    // A group sharing one stamp cannot be split for a spec peer, so its page has no size bound;
    // our peers ask for split pages, which stay near the page size and under the answer cap.
    const n = await node();
    const t = (s: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
    const copies = [copy(1, t(1)), ...Array.from({ length: 9 }, (_, i) => copy(i + 2, t(3))), copy(11, t(5))];
    await n.req('POST', '/sync/push', copies);
    const seen: string[] = [];
    const pages: number[] = [];
    let q = 'since=1970-01-01T00:00:00Z&limit=4&split=true';
    for (let i = 0; i < 10; i++) {
      const p = await n.req('GET', `/sync/pull?${q}`);
      expect(p.status).toBe(200);
      seen.push(...p.body.tickets.map((x: T) => x.title));
      pages.push(p.body.count);
      if (!p.body.has_more) {
        expect(p.body).not.toHaveProperty('next_cursor');
        break;
      }
      expect(typeof p.body.next_cursor).toBe('string');
      q = `since=${encodeURIComponent(p.body.next_since)}&limit=4&split=true&cursor=${encodeURIComponent(p.body.next_cursor)}`;
    }
    expect(pages).toEqual([4, 4, 3]);
    expect(seen.sort()).toEqual(copies.map((c) => c.title as string).sort());
    // Without split, the same request keeps the spec's whole groups.
    const whole = await n.req('GET', '/sync/pull?since=1970-01-01T00:00:00Z&limit=4');
    expect(whole.body.count).toBe(10);
    expect(whole.body).not.toHaveProperty('next_cursor');
    // A cursor this node did not write is refused, never guessed at.
    for (const c of ['x', 'bm90IGEgY3Vyc29y', '']) {
      const bad = await n.req('GET', `/sync/pull?since=1970-01-01T00:00:00Z&split=true&cursor=${encodeURIComponent(c)}`);
      expect(bad.status, c).toBe(400);
      expect(bad.body.error, c).toBe('invalid cursor');
    }
  });

  it('a push of more than 2000 tickets is 400, a body over 16 MiB is 413; both store nothing', async () => {
    const n = await node();
    const many = Array.from({ length: 2001 }, (_, i) => copy(i, '2026-01-01T00:00:00.000Z'));
    const r = await n.req('POST', '/sync/push', many);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/2000/);
    const big = Array.from({ length: 200 }, (_, i) => copy(i, '2026-01-01T00:00:00.000Z', { description: 'x'.repeat(90_000) }));
    const r2 = await n.req('POST', '/sync/push', big);
    expect(r2.status).toBe(413);
    expect(typeof r2.body.error).toBe('string');
    expect((await n.req('GET', '/tickets')).body.count).toBe(0);
  });
});

describe('the peer loop', () => {
  it('pulls a group sharing one stamp, larger than its page, in split pages: every ticket once (issue 28)', async () => {
    const source = await node();
    const t = (s: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
    const copies = [copy(1, t(1)), ...Array.from({ length: 23 }, (_, i) => copy(i + 2, t(3))), copy(99, t(5))];
    await source.req('POST', '/sync/push', copies);
    const sink = await node({ peers: [source.url], syncIntervalMs: 200, syncPullLimit: 5 });
    await waitFor(async () => (await sink.req('GET', '/tickets?limit=1')).body.count === 25, 'the sink to hold the whole group');
    const held = (await sink.req('GET', '/tickets?limit=100')).body.data as T[];
    expect(held.map((x) => x.title).sort()).toEqual(copies.map((c) => c.title as string).sort());
    expect(sink.logs.filter((l) => l.includes('sync with peer failed'))).toEqual([]);
  });

  it('follows small pages until caught up, then pushes only what the peer lacks', async () => {
    const source = await node();
    const copies = Array.from({ length: 57 }, (_, i) => copy(i, new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString()));
    await source.req('POST', '/sync/push', copies);
    const mine = (await source.req('POST', '/tickets', { title: 'made on the source' })).body as T;
    const sink = await node({ peers: [source.url], syncIntervalMs: 200, syncPullLimit: 5 });
    const local = (await sink.req('POST', '/tickets', { title: 'made on the sink' })).body as T;
    await waitFor(async () => (await sink.req('GET', '/tickets?limit=1')).body.count === 59, 'the sink to hold everything');
    await waitFor(async () => (await source.req('GET', `/tickets/${local.id}`)).status === 200, 'the sink ticket to reach the source');
    expect((await sink.req('GET', `/tickets/${mine.id}`)).body.title).toBe('made on the source');
    // One round pulled 12 pages of at most 5; the push carried only the sink's own ticket.
    await waitFor(async () => sink.logs.some((l) => l.includes('synced with peer') && l.includes('"pulled":58')), 'the first round');
    const first = JSON.parse(sink.logs.find((l) => l.includes('synced with peer') && l.includes('"pulled":58'))!);
    expect(first).toMatchObject({ pulled: 58, accepted: 58, pushed: 1 });
    const pulls = source.logs.filter((l) => l.includes('"route":"/sync/pull"'));
    expect(pulls.length).toBeGreaterThanOrEqual(12);
  });
});
