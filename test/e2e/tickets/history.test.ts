// GET /tickets/{id}/history: field changes, tags, comments, creation and the delete, newest
// first, paged with an opaque cursor (a forged one is 400); a change that lost a concurrent
// merge on another node is marked lost, and the history is the same on both nodes.
import { afterEach, describe, expect, it } from 'vitest';
import { startTempNode } from '../../helpers/tickets-node.js';
import { waitFor } from '../../helpers/wait.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
const bin = (c: () => Promise<void> | void): void => void cleanups.push(c);

describe('ticket history', () => {
  it('lists changes newest first, pages them, refuses a forged cursor, and keeps the delete', async () => {
    const n = await startTempNode(bin);
    const t = (await n.req('POST', '/tickets', { title: 'first title' })).body;
    await n.req('PATCH', `/tickets/${t.id}`, { title: 'second title', status: 'pending' });
    await n.req('PATCH', `/tickets/${t.id}`, { add_tags: ['vpn'] });
    const c = (await n.req('POST', `/tickets/${t.id}/comments`, { body: 'hello' })).body;
    const all = (await n.req('GET', `/tickets/${t.id}/history`)).body;
    expect(all.next_cursor).toBeNull();
    expect(all.data.map((e: { field: string }) => e.field)).toEqual(['comment', 'tags', 'title', 'status', 'created'].filter(() => true).sort((x, y) => ['comment', 'tags', 'title', 'status', 'created'].indexOf(x) - ['comment', 'tags', 'title', 'status', 'created'].indexOf(y)));
    expect(all.data[0]).toMatchObject({ field: 'comment', from: null, to: c.id });
    expect(all.data[1]).toMatchObject({ field: 'tags', from: null, to: 'vpn' });
    expect(all.data.find((e: { field: string }) => e.field === 'title')).toMatchObject({ from: 'first title', to: 'second title' });
    expect(all.data[all.data.length - 1]).toMatchObject({ field: 'created', from: null, to: 'first title', at: t.created_at });
    // Paged two at a time: the same entries.
    const paged: unknown[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: { data: unknown[]; next_cursor: string | null } } = await n.req('GET', `/tickets/${t.id}/history?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      paged.push(...page.body.data);
      cursor = page.body.next_cursor;
    } while (cursor !== null);
    expect(paged).toEqual(all.data);
    expect((await n.req('GET', `/tickets/${t.id}/history?cursor=forged`)).status).toBe(400);
    const listCursor = Buffer.from('2026-01-01T00:00:00.000Z~1').toString('base64url');
    expect((await n.req('GET', `/tickets/${t.id}/history?cursor=${listCursor}`)).status).toBe(400);
    expect((await n.req('GET', `/tickets/${t.id}/history?limit=501`)).status).toBe(400);
    expect((await n.req('DELETE', `/tickets/${t.id}`)).status).toBe(204);
    const after = (await n.req('GET', `/tickets/${t.id}/history`)).body;
    expect(after.data[0]).toMatchObject({ field: 'deleted', from: null, to: null });
    expect(after.data.some((e: { field: string }) => e.field === 'title')).toBe(true);
  });

  it('marks the change that lost a concurrent edit as lost, the same on both nodes', async () => {
    const b = await startTempNode(bin, { syncIntervalMs: 100 });
    const a = await startTempNode(bin, { syncIntervalMs: 100, peers: [b.url] });
    const t = (await a.req('POST', '/tickets', { title: 'start' })).body;
    await waitFor(async () => (await b.req('GET', `/tickets/${t.id}`)).status === 200, 'the ticket on b', 30_000);
    // Concurrent: neither has seen the other's title when it edits (the next round is 100 ms away at most,
    // so both edits go out in one request each, before either node pulls).
    const [ra, rb] = await Promise.all([a.req('PATCH', `/tickets/${t.id}`, { title: 'from a' }), b.req('PATCH', `/tickets/${t.id}`, { title: 'from b' })]);
    const winner = ra.body.updated_at > rb.body.updated_at || (ra.body.updated_at === rb.body.updated_at && ra.body.updated_by > rb.body.updated_by) ? 'from a' : 'from b';
    const titles = async (): Promise<unknown[] | undefined> => {
      const ha = (await a.req('GET', `/tickets/${t.id}/history`)).body.data;
      const hb = (await b.req('GET', `/tickets/${t.id}/history`)).body.data;
      const ta = ha.filter((e: { field: string }) => e.field === 'title');
      return ta.length === 2 && JSON.stringify(ha) === JSON.stringify(hb) ? ta : undefined;
    };
    const both = (await waitFor(titles, 'both titles in both histories', 30_000)) as { to: string; lost?: true }[];
    expect(both.find((e) => e.to === winner)!.lost).toBeUndefined();
    expect(both.find((e) => e.to !== winner)!.lost).toBe(true);
    expect((await a.req('GET', `/tickets/${t.id}`)).body.title).toBe(winner);
  }, 60_000);
});
