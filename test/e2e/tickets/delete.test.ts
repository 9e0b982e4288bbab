// Deleting tickets: 204, then 404 everywhere on the API and out of lists, counts and searches;
// the tombstone syncs to a peer, a stale copy pushed afterwards does not bring the ticket back
// (counted as rejected), a tombstone stamped far in the future is refused by the skew rule, and
// tombstones are purged once every configured peer has received them.
import { afterEach, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startTempNode } from '../../helpers/tickets-node.js';
import { waitFor } from '../../helpers/wait.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
const bin = (c: () => Promise<void> | void): void => void cleanups.push(c);

describe('DELETE /tickets/{id}', () => {
  it('is 204, then the ticket is gone from GET, PATCH, comments, lists, counts and searches; a second delete is 404', async () => {
    const n = await startTempNode(bin);
    const keep = (await n.req('POST', '/tickets', { title: 'keep me' })).body;
    const t = (await n.req('POST', '/tickets', { title: 'printer jams', status: 'pending' })).body;
    await n.req('POST', `/tickets/${t.id}/comments`, { body: 'a comment' });
    const stale = (await n.req('GET', '/sync/pull?since=1970-01-01T00:00:00Z')).body.tickets.find((x: { id: string }) => x.id === t.id);
    const del = await n.req('DELETE', `/tickets/${t.id.slice(0, 8)}`);
    expect(del.status).toBe(204);
    expect(del.body).toBe('');
    expect((await n.req('GET', `/tickets/${t.id}`)).status).toBe(404);
    expect((await n.req('PATCH', `/tickets/${t.id}`, { status: 'open' })).status).toBe(404);
    expect((await n.req('POST', `/tickets/${t.id}/comments`, { body: 'x' })).status).toBe(404);
    expect((await n.req('DELETE', `/tickets/${t.id}`)).status).toBe(404);
    expect((await n.req('DELETE', `/tickets/${randomUUID()}`)).status).toBe(404);
    const list = (await n.req('GET', '/tickets')).body;
    expect(list.data.map((x: { id: string }) => x.id)).toEqual([keep.id]);
    expect(list.count).toBe(1);
    expect((await n.req('GET', '/tickets?status=pending')).body.count).toBe(0);
    expect((await n.req('GET', '/tickets?search=printer')).body.count).toBe(0);
    // The pull carries the tombstone, no title.
    const pulled = (await n.req('GET', '/sync/pull?since=1970-01-01T00:00:00Z')).body.tickets;
    const tomb = pulled.find((x: { id: string }) => x.id === t.id);
    expect(tomb).toMatchObject({ id: t.id, deleted: { at: expect.any(String), by: expect.any(String) } });
    expect(tomb.title).toBeUndefined();
    // A stale copy pushed back is refused and the ticket stays deleted.
    expect((await n.req('POST', '/sync/push', [stale])).body).toEqual({ accepted: 0, rejected: 1 });
    expect((await n.req('GET', `/tickets/${t.id}`)).status).toBe(404);
    expect((await n.req('GET', '/tickets')).body.count).toBe(1);
  });

  it('refuses a tombstone stamped far in the future (the skew rule)', async () => {
    const n = await startTempNode(bin);
    const t = (await n.req('POST', '/tickets', { title: 'target' })).body;
    const far = { id: t.id, updated_at: '9999-12-31T23:59:59.999Z', updated_by: 'evil', deleted: { at: '9999-12-31T23:59:59.999Z', by: 'evil' }, history: [] };
    expect((await n.req('POST', '/sync/push', [far])).body).toEqual({ accepted: 0, rejected: 1 });
    expect((await n.req('GET', `/tickets/${t.id}`)).status).toBe(200);
    expect(n.logs.some((l) => l.includes('stamped too far ahead'))).toBe(true);
  });

  it('syncs to a peer, which refuses its own stale copy afterwards; purged once every peer received it', async () => {
    const b = await startTempNode(bin, { syncIntervalMs: 100 });
    const a = await startTempNode(bin, { syncIntervalMs: 100, peers: [b.url] });
    const t = (await a.req('POST', '/tickets', { title: 'to delete' })).body;
    await waitFor(async () => (await b.req('GET', `/tickets/${t.id}`)).status === 200, 'the ticket on b', 30_000);
    const stale = (await b.req('GET', '/sync/pull?since=1970-01-01T00:00:00Z')).body.tickets[0];
    expect((await a.req('DELETE', `/tickets/${t.id}`)).status).toBe(204);
    await waitFor(async () => (await b.req('GET', `/tickets/${t.id}`)).status === 404, 'the delete on b', 30_000);
    expect((await b.req('POST', '/sync/push', [stale])).body).toEqual({ accepted: 0, rejected: 1 });
    // a's only peer (b) received the tombstone: a purges it (its history is then gone).
    await waitFor(async () => (await a.req('GET', `/tickets/${t.id}/history`)).status === 404, 'the purge on a', 30_000);
    // b lists no peer, so it keeps its tombstone (until the maximum age): a stale copy still loses there.
    expect((await b.req('GET', `/tickets/${t.id}/history`)).status).toBe(200);
    expect((await b.req('POST', '/sync/push', [stale])).body).toEqual({ accepted: 0, rejected: 1 });
  }, 60_000);

  it('purges tombstones older than the maximum age with a warning', async () => {
    const n = await startTempNode(bin, { syncIntervalMs: 100, tombstoneMaxAgeMs: 1 });
    const t = (await n.req('POST', '/tickets', { title: 'short-lived' })).body;
    expect((await n.req('DELETE', `/tickets/${t.id}`)).status).toBe(204);
    await waitFor(async () => (await n.req('GET', `/tickets/${t.id}/history`)).status === 404, 'the purge', 30_000);
    expect(n.logs.some((l) => l.includes('older than the maximum age'))).toBe(true);
  }, 60_000);
});
