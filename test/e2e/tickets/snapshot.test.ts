// An empty node's first sync with a peer holding many tickets, over real HTTP: it starts from
// the peer's snapshot (GET /sync/snapshot), then syncs as usual both ways. A peer sending a
// forged snapshot is refused and the node pulls page by page instead; a node that already
// holds a ticket never asks for one. The snapshot carries comments, history and tombstones: the
// new node serves the same and keeps the tombstones (a stale copy pushed to it stays refused).
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { TicketsOptions } from '../../../daemon/services/tickets/options.js';
import { startNode, startTempNode, TOKEN, type TicketNode } from '../../helpers/tickets-node.js';
import { freePort, waitFor } from '../../helpers/wait.js';
import { tempDir } from '../../helpers/tmp.js';
import { SNAPSHOT_MIN_TICKETS } from '../../../daemon/services/tickets/replication.js';
import { SqliteTicketStore } from '../../../src/store/tickets.js';
import type { Ticket } from '../../../src/schemas/tickets.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const node = (flags: TicketsOptions = {}): Promise<TicketNode> => startTempNode((c) => cleanups.push(c), { syncIntervalMs: 60_000, ...flags });

const N = SNAPSHOT_MIN_TICKETS + 500;
const BASE = Date.now() - 3_600_000;

function copy(i: number): Record<string, unknown> {
  const stamp = new Date(BASE + i * 100).toISOString();
  return { id: `c0000000-0000-4000-8000-${String(i).padStart(12, '0')}`, title: `copy ${i} ${i % 10 === 0 ? 'printer' : 'laptop'}`, status: i % 3 ? 'open' : 'pending', priority: 'normal', channel: 'api', updated_at: stamp, created_at: stamp };
}

async function fill(n: TicketNode, count: number): Promise<void> {
  for (let i = 0; i < count; i += 2000) {
    const batch = Array.from({ length: Math.min(2000, count - i) }, (_, k) => copy(i + k));
    expect((await n.req('POST', '/sync/push', batch)).body.accepted).toBe(batch.length);
  }
}

const view = (body: { data: Ticket[] }): unknown[] => body.data.map((t) => [t.id, t.title, t.status, t.updated_at]);

describe('starting from a snapshot', () => {
  it('a node starts by removing the snapshot files a kill left behind, and nothing else', async () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const left = ['snapshot-1b2c.db', 'snapshot-in-3d4e.db', 'snapshot-in-3d4e.db-wal', 'snapshot-in-3d4e.db-shm', 'snapshot-in-5f6a.db-journal'];
    for (const f of [...left, 'snapshot-notes.txt']) writeFileSync(join(dir.path, f), 'x');
    const n = await startNode(dir.path, { syncIntervalMs: 60_000 });
    cleanups.push(() => n.stop());
    expect(readdirSync(dir.path).filter((f) => f.startsWith('snapshot-'))).toEqual(['snapshot-notes.txt']);
  });

  it(`an empty node whose peer holds ${N} tickets takes its snapshot (comments, history and tombstones too), then syncs edits both ways`, async () => {
    const a = await node();
    await fill(a, N);
    const edited = (await a.req('PATCH', `/tickets/${copy(5).id as string}`, { title: 'edited on a' })).body as Ticket;
    // A ticket with comments and a history; two deleted tickets (one with a history), and a stale copy of one.
    const talked = copy(7).id as string;
    for (const body of ['first', 'second']) expect((await a.req('POST', `/tickets/${talked}/comments`, { body, author: 'ana' })).status).toBe(201);
    expect((await a.req('PATCH', `/tickets/${talked}`, { status: 'solved', tags: ['hw'] })).status).toBe(200);
    const gone = [copy(8).id as string, copy(9).id as string];
    expect((await a.req('PATCH', `/tickets/${gone[0]}`, { priority: 'high' })).status).toBe(200);
    const stale = (await a.req('GET', '/sync/pull?since=1970-01-01T00:00:00Z&limit=1000')).body.tickets.find((t: Ticket) => t.id === gone[1]);
    expect(stale).toBeDefined();
    for (const id of gone) expect((await a.req('DELETE', `/tickets/${id}`)).status).toBe(204);
    // An edit after the deletes: the snapshot's newest stamp, where b's pulls resume. With no
    // overlap (syncOverlapMs 0), b can have the comments, history and tombstones only from the snapshot.
    const last = (await a.req('PATCH', `/tickets/${copy(6).id as string}`, { title: 'the newest change' })).body as Ticket;
    // A second peer that never answers: b cannot count its tombstones as received by every peer,
    // so it keeps them (it would purge them once a alone held them, a being its only peer).
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const b = await node({ peers: [a.url, nobody], syncIntervalMs: 500, syncOverlapMs: 0 });
    await waitFor(async () => (await b.req('GET', '/tickets?limit=1')).body.count === N - 2, 'b holds every ticket', 30_000);
    expect(b.logs.some((l) => l.includes("started from the peer's snapshot"))).toBe(true);
    expect(a.logs.some((l) => l.includes('sending a snapshot'))).toBe(true);
    // The same tickets, in the same order, searchable, and b keeps its own node id.
    expect(view((await b.req('GET', '/tickets?limit=300')).body)).toEqual(view((await a.req('GET', '/tickets?limit=300')).body));
    expect((await b.req('GET', '/tickets?search=printer')).body.count).toBe((await a.req('GET', '/tickets?search=printer')).body.count);
    expect((await b.req('GET', '/tickets?status=pending')).body.count).toBe((await a.req('GET', '/tickets?status=pending')).body.count);
    expect((await b.req('GET', `/tickets/${edited.id}`)).body.title).toBe('edited on a');
    expect((await b.req('GET', '/sync/node')).body.node_id).not.toBe((await a.req('GET', '/sync/node')).body.node_id);
    // The same comments and history; the deleted tickets gone, their tombstones (and history) kept.
    const shown = (await b.req('GET', `/tickets/${talked}`)).body;
    expect(shown.comments.map((c: { body: string; author: string }) => [c.body, c.author])).toEqual([['first', 'ana'], ['second', 'ana']]);
    expect(shown).toEqual((await a.req('GET', `/tickets/${talked}`)).body);
    for (const id of [talked, ...gone]) {
      const theirs = await a.req('GET', `/tickets/${id}/history?limit=500`);
      expect(theirs.status).toBe(200);
      expect((await b.req('GET', `/tickets/${id}/history?limit=500`)).body).toEqual(theirs.body);
    }
    expect((await b.req('GET', `/tickets/${gone[0]}/history`)).body.data[0]).toMatchObject({ field: 'deleted' });
    // The deletes are the newest changes: a pull of the last ten minutes holds their tombstones.
    const recent = new Date(Date.now() - 600_000).toISOString();
    const tombs = async (n: TicketNode): Promise<unknown[]> => (await n.req('GET', `/sync/pull?since=${recent}&limit=1000`)).body.tickets.filter((t: { deleted?: unknown }) => t.deleted !== undefined);
    expect(await tombs(b)).toEqual(await tombs(a));
    expect(await tombs(b)).toHaveLength(2);
    for (const id of gone) expect((await b.req('GET', `/tickets/${id}`)).status).toBe(404);
    expect((await b.req('POST', '/sync/push', [stale])).body).toEqual({ accepted: 0, rejected: 1 });
    expect((await b.req('GET', `/tickets/${gone[1]}`)).status).toBe(404);
    expect((await b.req('GET', `/tickets/${last.id}`)).body.title).toBe('the newest change');
    // Afterwards: pulls and pushes as usual.
    const onA = (await a.req('POST', '/tickets', { title: 'made on a after the snapshot' })).body as Ticket;
    const onB = (await b.req('POST', '/tickets', { title: 'made on b' })).body as Ticket;
    await waitFor(async () => (await b.req('GET', `/tickets/${onA.id}`)).status === 200, 'a ticket made on a reaches b', 15_000);
    await waitFor(async () => (await a.req('GET', `/tickets/${onB.id}`)).status === 200, 'a ticket made on b reaches a', 15_000);
    // No snapshot file is left behind on either side.
    for (const n of [a, b]) expect((await import('node:fs')).readdirSync(n.dataDir).filter((f) => f.startsWith('snapshot-'))).toEqual([]);
  }, 90_000);

  /**
   * A forger: a real store's file of 50 tickets, changed by `forge`, served as its snapshot beside
   * honest pulls of the same 50 tickets; `snapshots` counts the snapshots asked for.
   */
  async function forger(forge: string): Promise<{ url: string; tickets: Ticket[]; snapshots: () => number }> {
    const d = tempDir();
    cleanups.push(() => d.remove());
    const file = join(d.path, 'forged.db');
    const store = new SqliteTicketStore(file);
    const tickets: Ticket[] = [];
    for (let i = 0; i < 50; i++) {
      const c = copy(i) as unknown as Ticket;
      tickets.push({ ...c, short_id: c.id.slice(0, 8), description: '', source: 'api', requester: null, assignee: null, tags: [], updated_by: 'forger', field_stamps: { base: [c.updated_at, 'forger'] } });
    }
    await store.merge(tickets, (t) => ({ kind: 'store', ticket: t, asSent: false }));
    await store.close();
    const raw = new Database(file);
    raw.exec(`${forge}; PRAGMA journal_mode = DELETE;`);
    raw.close();
    const bytes = readFileSync(file);
    let snapshots = 0;
    const server: Server = createServer((req, res) => {
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return void res.writeHead(401).end();
      const url = new URL(req.url ?? '/', 'http://x');
      res.setHeader('content-type', 'application/json');
      if (url.pathname === '/tickets') return void res.end(JSON.stringify({ data: [], count: 1_000_000, next_cursor: null }));
      if (url.pathname === '/sync/snapshot') {
        snapshots++;
        res.writeHead(200, { 'content-type': 'application/vnd.sqlite3', 'content-length': bytes.length });
        return void res.end(bytes);
      }
      if (url.pathname === '/sync/pull') return void res.end(JSON.stringify({ tickets, count: tickets.length, node_id: 'forger', has_more: false, next_since: null }));
      if (url.pathname === '/sync/push') return void res.end(JSON.stringify({ accepted: 0, rejected: 0 }));
      res.writeHead(404).end(JSON.stringify({ error: 'not found' }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
    return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, tickets, snapshots: () => snapshots };
  }

  it('a forged snapshot (a trigger of its own) is refused; the node pulls page by page instead', async () => {
    const f = await forger("CREATE TRIGGER evil AFTER INSERT ON tickets BEGIN UPDATE tickets SET title = 'pwned'; END");
    const b = await node({ peers: [f.url], syncIntervalMs: 500 });
    await waitFor(async () => (await b.req('GET', '/tickets?limit=1')).body.count === 50, 'b pulled the forger\'s tickets', 15_000);
    expect(f.snapshots()).toBe(1);
    expect(b.logs.some((l) => l.includes('not taken') && l.includes('schema differs'))).toBe(true);
    const all = (await b.req('GET', '/tickets?limit=100')).body.data as Ticket[];
    expect(all.some((t) => t.title === 'pwned')).toBe(false);
    // It held tickets after the first round: no second snapshot is asked for.
    await new Promise((r) => setTimeout(r, 1200));
    expect(f.snapshots()).toBe(1);
    expect((await import('node:fs')).readdirSync(b.dataDir).filter((f) => f.startsWith('snapshot-'))).toEqual([]);
  }, 60_000);

  it('a forged snapshot with rows at rowid -2^40 (issue 28) is refused; the node pulls, lists and counts the same 50', async () => {
    // Below every stamp's key, where the screening once never looked: a status no node stores,
    // 200,000 characters, year 9999, and tags that are not JSON (GET /tickets answered 500).
    const stamp = '9999-12-31T23:59:59.999Z';
    const row = (rowid: string, n: number, tags: string): string =>
      `INSERT INTO tickets (rowid, id, title, description, status, priority, channel, source, tags, created_at, updated_at, updated_by, field_stamps) VALUES (${rowid}, 'c0000000-0000-4000-8000-9${String(n).padStart(11, '0')}', 'pwned', printf('%.*c', 200000, 'x'), 'pwned', 'normal', 'api', 'api', '${tags}', '${stamp}', '${stamp}', 'evil', '{"base":["${stamp}","evil"]}')`;
    const f = await forger(`${row('-1099511627776', 1, '[]')}; ${row('-1099511627775', 2, 'not json')}`);
    const b = await node({ peers: [f.url], syncIntervalMs: 500 });
    await waitFor(async () => (await b.req('GET', '/tickets?limit=1')).body.count === 50, 'b pulled the forger\'s tickets', 15_000);
    expect(f.snapshots()).toBe(1);
    expect(b.logs.some((l) => l.includes('not taken'))).toBe(true);
    const listed = await b.req('GET', '/tickets?limit=100');
    expect(listed.status).toBe(200);
    expect(listed.body.count).toBe(50);
    expect((listed.body.data as Ticket[]).map((t) => t.id).sort()).toEqual(f.tickets.map((t) => t.id).sort());
    expect((await b.req('GET', '/tickets?search=pwned')).body.count).toBe(0);
  }, 60_000);

  it('GET /sync/snapshot needs the token, and a second one meanwhile is 429 with Retry-After', async () => {
    const a = await node();
    expect((await a.req('GET', '/sync/snapshot', undefined, { authorization: 'Bearer wrong' })).status).toBe(401);
    const res = await fetch(`${a.url}/sync/snapshot`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/vnd.sqlite3');
    const second = await fetch(`${a.url}/sync/snapshot`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBe('30');
    expect((await second.json()) as unknown).toMatchObject({ error: expect.stringMatching(/retry later/) });
    const body = Buffer.from(await res.arrayBuffer());
    expect(body.subarray(0, 16).toString('latin1')).toBe('SQLite format 3\0');
    expect(body.length).toBe(Number(res.headers.get('content-length')));
    // The next one is served once the first's file stream has closed, a moment after its last byte.
    const third = await waitFor(async () => {
      const r = await fetch(`${a.url}/sync/snapshot`, { headers: { authorization: `Bearer ${TOKEN}` } });
      if (r.status === 200) return r;
      await r.arrayBuffer();
      return undefined;
    }, 'a snapshot after the first was sent', 5_000);
    await third.arrayBuffer();
  });
});
