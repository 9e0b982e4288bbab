// Issue 11, defect 5, between real nodes on 127.0.0.1: one copy stamped 9999-12-31 used to
// drag the hybrid clock past RFC 3339 (+010000-...) and stop sync for good. Copies stamped
// more than the maximum skew ahead are refused (counted as rejected, logged with the skew).
import { afterEach, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startNode, type TicketNode } from '../../helpers/tickets-node.js';
import { freePort, waitFor } from '../../helpers/wait.js';
import { tempDir } from '../../helpers/tmp.js';
import { ManualClock } from '../../../src/util/clock.js';
import { SqliteTicketStore } from '../../../src/store/tickets.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function node(flags: Parameters<typeof startNode>[1] = {}, opts: Parameters<typeof startNode>[2] = {}, config?: string): Promise<TicketNode> {
  const dir = tempDir();
  if (config !== undefined) writeFileSync(join(dir.path, 'tickets.yaml'), config);
  const n = await startNode(dir.path, { syncIntervalMs: 100, ...flags }, opts);
  cleanups.push(() => dir.remove());
  cleanups.push(() => n.stop());
  return n;
}

const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const FUTURE = '9999-12-31T23:59:59.999Z';

function attack(id: string, updated_at = FUTURE): Record<string, unknown> {
  return { id, title: 'from the future', status: 'open', priority: 'urgent', channel: 'api', updated_at, created_at: updated_at };
}

/** A fresh stamp is canonical and within a minute of the real clock. */
function fresh(stamp: string): boolean {
  return CANONICAL.test(stamp) && Math.abs(Date.parse(stamp) - Date.now()) < 60_000;
}

async function has(n: TicketNode, id: string, field: string, value: unknown): Promise<boolean> {
  const r = await n.req('GET', `/tickets/${id}`);
  return r.status === 200 && r.body[field] === value;
}

describe('a copy stamped 9999-12-31T23:59:59.999Z', () => {
  it('pushed to a node is rejected and logged with the skew; afterwards edits sync both ways and since works', async () => {
    const [pa, pb] = [await freePort(), await freePort()];
    const a = await node({ peers: [`http://127.0.0.1:${pb}`] }, { port: pa });
    const b = await node({ peers: [`http://127.0.0.1:${pa}`] }, { port: pb });
    const existing = (await a.req('POST', '/tickets', { title: 'existing' })).body;
    await waitFor(() => has(b, existing.id, 'title', 'existing'), 'the first ticket on b');

    // The attack: a brand-new ticket, and a copy of the existing one, both from year 9999.
    const pushed = await a.req('POST', '/sync/push', [attack('f0000000-0000-4000-8000-000000000001'), { ...existing, title: 'hijacked', updated_at: FUTURE }]);
    expect(pushed).toEqual({ status: 200, body: { accepted: 0, rejected: 2 } });
    expect((await a.req('GET', '/tickets/f0000000-0000-4000-8000-000000000001')).status).toBe(404);
    expect({ ...(await a.req('GET', `/tickets/${existing.id}`)).body, comments: undefined }).toEqual(existing);
    const warning = a.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => String(l.msg).includes('too far ahead'));
    expect(warning).toMatchObject({ peer: '127.0.0.1', refused: 2 });
    expect(warning!.skew_ms).toBeGreaterThan(200 * 365 * 24 * 3600 * 1000);

    // New stamps stay RFC 3339 and current, and edits flow a -> b and b -> a.
    const before = new Date(Date.now() - 1000).toISOString();
    const created = (await a.req('POST', '/tickets', { title: 'after the attack' })).body;
    expect(fresh(created.updated_at), created.updated_at).toBe(true);
    await waitFor(() => has(b, created.id, 'title', 'after the attack'), 'a -> b after the attack');
    const edited = (await b.req('PATCH', `/tickets/${existing.id}`, { status: 'solved' })).body;
    expect(fresh(edited.updated_at), edited.updated_at).toBe(true);
    await waitFor(() => has(a, existing.id, 'status', 'solved'), 'b -> a after the attack');
    const edited2 = (await a.req('PATCH', `/tickets/${created.id}`, { assignee: 'ana' })).body;
    expect(fresh(edited2.updated_at), edited2.updated_at).toBe(true);
    await waitFor(() => has(b, created.id, 'assignee', 'ana'), 'a -> b edit after the attack');

    // `since` still answers the edits made after it, and only those.
    for (const n of [a, b]) {
      const pulled = (await n.req('GET', `/sync/pull?since=${encodeURIComponent(before)}`)).body;
      expect(pulled.tickets.map((t: { id: string }) => t.id).sort()).toEqual([existing.id, created.id].sort());
      expect(pulled.tickets.every((t: { updated_at: string }) => fresh(t.updated_at))).toBe(true);
    }
  });

  it('offered by a peer on pull is refused, logged with the peer and skew, and does not move the cursor', async () => {
    // A peer whose clock says year 9999 stamps its own edits there.
    const evil = await node({}, { clock: new ManualClock(Date.parse('9999-12-31T23:59:59.000Z')) });
    const honest = await node();
    const a = await node({ peers: [evil.url, honest.url] });
    const t = (await evil.req('POST', '/tickets', { title: 'stamped in 9999' })).body;
    expect(t.updated_at).toMatch(/^9999-12-31T23:59:59\.\d{3}Z$/);
    await waitFor(async () => a.logs.some((l) => l.includes('too far ahead') && l.includes(evil.url)), 'the refusal in a\'s log');
    expect((await a.req('GET', `/tickets/${t.id}`)).status).toBe(404);

    // Later edits on an honest peer still arrive, stamped now, and a's own stamps stay current.
    const later = (await honest.req('POST', '/tickets', { title: 'honest' })).body;
    await waitFor(() => has(a, later.id, 'title', 'honest'), 'the honest ticket');
    const mine = (await a.req('POST', '/tickets', { title: 'mine' })).body;
    expect(fresh(mine.updated_at), mine.updated_at).toBe(true);
    await waitFor(() => has(honest, mine.id, 'title', 'mine'), 'a -> honest');
    const refusals = a.logs.filter((l) => l.includes('too far ahead') && l.includes(evil.url));
    expect(JSON.parse(refusals[0]!)).toMatchObject({ peer: evil.url, refused: 1, tickets: [t.short_id] });
    expect(JSON.parse(refusals[0]!).skew_ms).toBeGreaterThan(200 * 365 * 24 * 3600 * 1000);
    // The cursor for the future peer never moved (a cursor in 9999 would hide every later edit).
    const store = new SqliteTicketStore(join(a.dataDir, 'tickets.db'));
    cleanups.push(() => store.close());
    expect(await store.getCursor(evil.url)).toBeUndefined();
    expect(await store.getCursor(honest.url)).toMatch(CANONICAL);
  });

  it('stored by an earlier version, it neither drags the clock nor beats an honest edit', async () => {
    const id = 'e0000000-0000-4000-8000-000000000001';
    const base = { id, short_id: id.slice(0, 8), description: '', status: 'open', priority: 'normal', channel: 'api', source: 'manual', requester: null, assignee: null, tags: [] as string[], updated_by: 'x' };
    const seed = async (dir: string, title: string, stamp: string): Promise<void> => {
      const store = new SqliteTicketStore(join(dir, 'tickets.db'));
      await store.insert({ ...base, title, created_at: stamp, updated_at: stamp });
      await store.close();
    };
    const [da, db] = [tempDir(), tempDir()];
    cleanups.push(() => da.remove(), () => db.remove());
    await seed(da.path, 'stuck in 9999', FUTURE);
    await seed(db.path, 'honest', new Date(Date.now() - 3_600_000).toISOString());
    const a = await startNode(da.path, { syncIntervalMs: 100 });
    cleanups.push(() => a.stop());
    const b = await startNode(db.path, { peers: [a.url], syncIntervalMs: 100 });
    cleanups.push(() => b.stop());

    const mine = (await a.req('POST', '/tickets', { title: 'new on a' })).body;
    expect(fresh(mine.updated_at), mine.updated_at).toBe(true);
    const edit = (await b.req('PATCH', `/tickets/${id}`, { title: 'edited on b' })).body;
    await waitFor(() => has(a, id, 'title', 'edited on b'), 'the honest edit to replace the 9999 copy');
    expect((await a.req('GET', `/tickets/${id}`)).body.updated_at).toBe(edit.updated_at);
    await waitFor(() => has(b, mine.id, 'title', 'new on a'), 'a -> b');
  });

  it('malformed stamps are rejected; max_clock_skew in tickets.yaml moves the limit', async () => {
    const strict = await node();
    const lenient = await node({}, {}, 'max_clock_skew: 900\n');
    const tenMinutesAhead = new Date(Date.now() + 10 * 60_000).toISOString();
    const copies = [
      attack('f0000000-0000-4000-8000-000000000002', tenMinutesAhead),
      attack('f0000000-0000-4000-8000-000000000003', '+010000-01-01T00:00:00.000Z'),
      attack('f0000000-0000-4000-8000-000000000004', '2026-02-31T00:00:00Z'),
      attack('f0000000-0000-4000-8000-000000000005', 'yesterday'),
    ];
    expect((await strict.req('POST', '/sync/push', copies)).body).toEqual({ accepted: 0, rejected: 4 });
    expect((await lenient.req('POST', '/sync/push', copies)).body).toEqual({ accepted: 1, rejected: 3 });
    expect((await lenient.req('GET', '/tickets/f0000000-0000-4000-8000-000000000002')).body.updated_at).toBe(tenMinutesAhead);
  });
});
