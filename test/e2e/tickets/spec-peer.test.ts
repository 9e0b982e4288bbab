// A peer that follows only the spec (no pages, no field stamps), played by a plain node:http
// server: our node pulls it in one request per round, settles its stampless copies by
// whole-ticket last-writer-wins, and its pushes of stamped copies are plain JSON it can ignore.
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { startNode, TOKEN } from '../../helpers/tickets-node.js';
import { waitFor } from '../../helpers/wait.js';
import { tempDir } from '../../helpers/tmp.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type Plain = Record<string, unknown> & { id: string; updated_at: string };

/** Answers every pull with all its tickets and records pushes, as the spec describes. */
async function specPeer(tickets: Plain[]): Promise<{ url: string; pulls: string[]; pushed: Plain[] }> {
  const pulls: string[] = [];
  const pushed: Plain[] = [];
  const server: Server = createServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${TOKEN}`) {
      res.writeHead(401).end('{"error":"unauthorized"}');
      return;
    }
    if (req.url?.startsWith('/sync/pull')) {
      pulls.push(req.url);
      const since = new URL(req.url, 'http://x').searchParams.get('since') ?? '';
      const out = tickets.filter((t) => t.updated_at > since);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ tickets: out, count: out.length, node_id: 'spec-peer' }));
      return;
    }
    if (req.method === 'GET' && req.url?.startsWith('/tickets')) {
      // An empty node asks how many tickets a peer holds before it pulls (snapshot or pages).
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: tickets.slice(0, 1), count: tickets.length }));
      return;
    }
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const got = JSON.parse(body) as Plain[];
      pushed.push(...got);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ accepted: got.length, rejected: 0 }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}`, pulls, pushed };
}

describe('a peer that follows only the spec', () => {
  it('is pulled in one request per round; its stampless copies are whole-ticket LWW; it receives our tickets', async () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const now = Date.now();
    const iso = (offsetMs: number): string => new Date(now + offsetMs).toISOString();
    const base = { title: 'from the spec peer', status: 'open', priority: 'normal', channel: 'email', source: 'manual', requester: null, assignee: null, tags: ['a'], description: '', updated_by: 'spec-peer' };
    const older = { ...base, id: 'c1000000-0000-4000-8000-000000000001', created_at: iso(-60_000), updated_at: iso(-60_000), status: 'closed' };
    const fresh = { ...base, id: 'c1000000-0000-4000-8000-000000000002', created_at: iso(-60_000), updated_at: iso(-1_000), status: 'solved', tags: [] };
    const peer = await specPeer([older, fresh]);

    const n = await startNode(dir.path, { peers: [peer.url], syncIntervalMs: 300 });
    cleanups.push(() => n.stop());
    await waitFor(async () => (await n.req('GET', '/tickets?limit=1')).body.count === 2, 'the spec peer tickets');

    // Both tickets change here: an edit later than the peer's copy, which must then lose on
    // every round; and an older stampless copy, which loses to the stored one.
    await n.req('PATCH', `/tickets/${older.id}`, { status: 'pending', tags: ['a', 'b'] });
    await n.req('POST', '/sync/push', [{ ...fresh, status: 'open', tags: ['x'], updated_at: iso(-30_000), updated_by: 'spec-peer' }]);
    expect((await n.req('GET', `/tickets/${fresh.id}`)).body).toMatchObject({ status: 'solved', tags: [] });
    const mine = (await n.req('POST', '/tickets', { title: 'made here' })).body as Plain;

    await waitFor(async () => peer.pushed.some((t) => t.id === mine.id), 'our ticket to reach the spec peer');
    const rounds = n.logs.filter((l) => l.includes('synced with peer')).length;
    // Without has_more in its answers, one pull per round (give or take the round in flight).
    expect(Math.abs(peer.pulls.length - rounds)).toBeLessThanOrEqual(1);
    expect((await n.req('GET', `/tickets/${older.id}`)).body).toMatchObject({ status: 'pending', tags: ['a', 'b'] });
    const sent = peer.pushed.find((t) => t.id === mine.id)!;
    expect(sent).toMatchObject({ id: mine.id, title: 'made here', updated_at: mine.updated_at });
    // Copies it sent and we hold unchanged are not sent back to it.
    expect(peer.pushed.some((t) => t.id === fresh.id)).toBe(false);
  });
});
