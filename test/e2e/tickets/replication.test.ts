// Peer replication between real nodes on 127.0.0.1: convergence under concurrent conflicting
// edits (one node's clock behind, within the allowed skew), a peer that is down, restarts,
// and the overlap window.
import { afterEach, describe, expect, it } from 'vitest';
import { startNode, type TicketNode } from '../../helpers/tickets-node.js';
import { freePort, waitFor } from '../../helpers/wait.js';
import { tempDir } from '../../helpers/tmp.js';
import { SqliteTicketStore } from '../../../src/store/tickets.js';
import type { Clock } from '../../../src/util/clock.js';
import { join } from 'node:path';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function node(flags: Parameters<typeof startNode>[1] = {}, opts: Parameters<typeof startNode>[2] = {}, dir = tempDir()): Promise<TicketNode> {
  const n = await startNode(dir.path, { syncIntervalMs: 100, ...flags }, opts);
  cleanups.push(() => dir.remove());
  cleanups.push(() => n.stop());
  return n;
}

type T = Record<string, unknown> & { id: string; updated_at: string };
async function everything(n: TicketNode): Promise<T[]> {
  const r = await n.req('GET', '/sync/pull?since=1970-01-01T00:00:00Z');
  return (r.body.tickets as T[]).sort((a, b) => a.id.localeCompare(b.id));
}

async function converged(nodes: TicketNode[], expected: number): Promise<T[] | undefined> {
  const lists = await Promise.all(nodes.map(everything));
  const first = JSON.stringify(lists[0]);
  if (lists[0]!.length !== expected) return undefined;
  return lists.every((l) => JSON.stringify(l) === first) ? lists[0] : undefined;
}

// Behind, but within the default maximum skew (5 minutes): further apart, the slow node
// refuses the others' copies as stamped in its future (see skew.test.ts).
const behind: Clock = { now: () => Date.now() - 3 * 60 * 1000 };

describe('peer sync', () => {
  it('three nodes with concurrent conflicting edits converge to identical tickets, one clock three minutes behind', async () => {
    const ports = [await freePort(), await freePort(), await freePort()];
    const urls = ports.map((p) => `http://127.0.0.1:${p}`);
    const peersOf = (i: number): string[] => urls.filter((_, j) => j !== i);
    const a = await node({ peers: peersOf(0) }, { port: ports[0] });
    const b = await node({ peers: peersOf(1) }, { port: ports[1] });
    const c = await node({ peers: peersOf(2) }, { port: ports[2], clock: behind });
    const nodes = [a, b, c];

    // Each node creates tickets; one shared ticket is then edited on all three at once.
    for (const [i, n] of nodes.entries()) for (let k = 0; k < 5; k++) await n.req('POST', '/tickets', { title: `node ${i} ticket ${k}`, priority: 'low' });
    const shared = (await a.req('POST', '/tickets', { title: 'shared', description: 'conflict here' })).body as T;
    await waitFor(() => converged(nodes, 16), 'the first convergence');

    await Promise.all([
      a.req('PATCH', `/tickets/${shared.id}`, { status: 'pending', assignee: 'a' }),
      b.req('PATCH', `/tickets/${shared.id}`, { status: 'solved', assignee: 'b' }),
      c.req('PATCH', `/tickets/${shared.id}`, { status: 'closed', assignee: 'c' }),
      a.req('POST', '/tickets', { title: 'late on a' }),
      c.req('POST', '/tickets', { title: 'late on c' }),
    ]);
    const after = await waitFor(() => converged(nodes, 18), 'convergence after concurrent edits');
    const winner = after.find((t) => t.id === shared.id)!;
    expect(['a', 'b', 'c']).toContain(winner.assignee);

    // The node whose clock is an hour behind makes a genuinely later edit: it must win everywhere.
    const edit = await c.req('PATCH', `/tickets/${shared.id}`, { status: 'open', assignee: 'c-later' });
    expect(edit.body.updated_at > winner.updated_at).toBe(true);
    const final = await waitFor(async () => {
      const list = await converged(nodes, 18);
      return list?.find((t) => t.id === shared.id)?.assignee === 'c-later' ? list : undefined;
    }, 'the slow-clock edit to win on every node');
    expect(final.find((t) => t.id === shared.id)).toMatchObject({ status: 'open', assignee: 'c-later' });
  });

  it('add_tags on one node and remove_tags on another, made at once, both survive; an unassign replicates as null (issue 30)', async () => {
    const ports = [await freePort(), await freePort()];
    const [ua, ub] = ports.map((p) => `http://127.0.0.1:${p}`);
    const a = await node({ peers: [ub!] }, { port: ports[0] });
    const b = await node({ peers: [ua!] }, { port: ports[1] });
    const t = (await a.req('POST', '/tickets', { title: 'tags on two nodes', tags: ['vpn', 'triage'], assignee: 'bo' })).body as T;
    await waitFor(() => converged([a, b], 1), 'the ticket to reach b');
    const [onA, onB] = await Promise.all([
      a.req('PATCH', `/tickets/${t.id}`, { add_tags: ['urgent'], assignee: '' }),
      b.req('PATCH', `/tickets/${t.id}`, { add_tags: ['net'], remove_tags: ['triage'] }),
    ]);
    // Each answer holds its own edit (a sync round may already have brought the other's).
    expect(onA.body.tags).toContain('urgent');
    expect(onB.body.tags).toEqual(expect.arrayContaining(['vpn', 'net']));
    expect(onB.body.tags).not.toContain('triage');
    const final = await waitFor(async () => {
      const list = await converged([a, b], 1);
      const got = list?.[0];
      return got && [...(got.tags as string[])].sort().join() === 'net,urgent,vpn' ? got : undefined;
    }, 'both tag edits on both nodes');
    expect(final.assignee).toBeNull();
  });

  it('a peer that is down is logged and does not stop sync with the others', async () => {
    const down = `http://127.0.0.1:${await freePort()}`;
    const b = await node();
    const a = await node({ peers: [down, b.url] });
    const t = (await a.req('POST', '/tickets', { title: 'reaches b anyway' })).body as T;
    await waitFor(async () => (await b.req('GET', `/tickets/${t.id}`)).status === 200, 'b to receive the ticket');
    expect(a.logs.some((l) => l.includes('sync with peer failed') && l.includes(down))).toBe(true);
    expect(a.logs.join('\n')).not.toContain('shared-test-token');
  });

  it('a restart keeps tickets, the node id and the per-peer cursors', async () => {
    const b = await node();
    for (let k = 0; k < 3; k++) await b.req('POST', '/tickets', { title: `on b ${k}` });
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    let a = await startNode(dir.path, { peers: [b.url], syncIntervalMs: 100 });
    await waitFor(async () => (await everything(a)).length === 3, 'a to pull from b');
    const nodeId = (await a.req('GET', '/sync/node')).body.node_id;
    const before = await everything(a);
    await a.stop();

    const store = new SqliteTicketStore(join(dir.path, 'tickets.db'));
    const cursor = await store.getCursor(b.url);
    await store.close();
    expect(cursor).toBe(before.map((t) => t.updated_at).sort().at(-1));

    a = await startNode(dir.path, { peers: [b.url], syncIntervalMs: 100 });
    cleanups.push(() => a.stop());
    expect((await a.req('GET', '/sync/node')).body.node_id).toBe(nodeId);
    expect(await everything(a)).toEqual(before);
    expect(a.announced.filter((l) => l.includes('token'))).toEqual([]);
  });

  it('re-reads an overlap before the cursor, so a copy that reaches the peer late with an older stamp is not lost', async () => {
    const p = await node();
    const withOverlap = await node({ peers: [p.url] });
    const without = await node({ peers: [p.url], syncOverlapMs: 0 });
    const x = (await p.req('POST', '/tickets', { title: 'x' })).body as T;
    for (const n of [withOverlap, without]) await waitFor(async () => (await n.req('GET', `/tickets/${x.id}`)).status === 200, 'x to arrive');
    // Rounds that re-read nothing: the overlap is narrowed to what arrived late (none yet), so
    // what follows shows the late copy found by that narrowing, not by re-reading everything.
    const quiet = withOverlap.logs.length;
    await waitFor(async () => withOverlap.logs.slice(quiet).some((l) => l.includes('nothing new')), 'a round with nothing new');

    // A node with a slow clock delivers a ticket stamped two minutes before x, after x was pulled.
    const late = { id: '1a7e0000-0000-4000-8000-000000000001', title: 'late arrival', status: 'open', priority: 'high', channel: 'email', updated_at: new Date(Date.parse(x.updated_at) - 120_000).toISOString() };
    expect((await p.req('POST', '/sync/push', [late])).body).toEqual({ accepted: 1, rejected: 0 });

    await waitFor(async () => (await withOverlap.req('GET', `/tickets/${late.id}`)).status === 200, 'the late ticket via the overlap window');
    // Without the overlap the cursor has passed its stamp: several rounds later it is still missing.
    const rounds = (): number => without.logs.filter((l) => l.includes('synced with peer')).length;
    const start = rounds();
    await waitFor(async () => rounds() >= start + 3, 'three more rounds');
    expect((await without.req('GET', `/tickets/${late.id}`)).status).toBe(404);
  });

  it('re-reads the overlap only for copies that arrived late: a caught-up pair sends nothing again, yet a late copy still reaches the other node', async () => {
    const p = await node();
    const q = await node({ peers: [p.url] });
    for (let i = 0; i < 5; i++) expect((await p.req('POST', '/tickets', { title: `p ${i}` })).status).toBe(201);
    for (let i = 0; i < 3; i++) expect((await q.req('POST', '/tickets', { title: `q ${i}` })).status).toBe(201);
    await waitFor(async () => (await converged([p, q], 8)) !== undefined, 'the pair to converge');

    // With the whole 10-minute overlap every round pulled p's five and pushed q's three again,
    // and no round was ever "nothing new"; now, once one is, all that follow are.
    await waitFor(async () => q.logs.some((l) => l.includes('nothing new')), 'a round with nothing new');
    const rounds = (from: number): string[] => q.logs.slice(from).filter((l) => l.includes('synced with peer'));
    const start = q.logs.length;
    await waitFor(async () => rounds(start).length >= 3, 'three more rounds');
    expect(rounds(start).filter((l) => !l.includes('nothing new'))).toEqual([]);

    // A third node delivers to q a ticket stamped before q's cursor for p: q's next push takes it to p.
    const newest = (await everything(p)).map((t) => t.updated_at).sort().at(-1)!;
    const late = { id: '1a7e0000-0000-4000-8000-000000000002', title: 'relayed late', status: 'open', priority: 'low', channel: 'web', updated_at: new Date(Date.parse(newest) - 120_000).toISOString() };
    expect((await q.req('POST', '/sync/push', [late])).body).toEqual({ accepted: 1, rejected: 0 });
    await waitFor(async () => (await p.req('GET', `/tickets/${late.id}`)).status === 200, 'the late copy to reach p');
    await waitFor(async () => (await converged([p, q], 9)) !== undefined, 'the pair to converge again');
  });
});
