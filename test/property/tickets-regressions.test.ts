// Counterexamples the property test (tickets-replication.property.test.ts) found, kept as plain tests:
// an edit stamped just past the skew window must not be taken for a stale leftover, and a
// winning copy without field stamps must keep the node's earlier tag removals.
import { expect, it } from 'vitest';
import { composeNode } from '../helpers/tickets-parts.js';

const T = Date.parse('2026-03-01T09:00:00.000Z');

it('an acknowledged edit stamped 1 ms past the skew window survives the next merge', async () => {
  const fast = await composeNode({ clock: { now: () => T + 30_000 }, maxSkewMs: 60_000, pullLimit: 2 });
  const slow = await composeNode({ clock: { now: () => T - 30_000 }, maxSkewMs: 60_000, pullLimit: 2 });
  try {
    const c = (await fast.req('POST', '/tickets', { title: 'printer' })).body; // 09:00:30.000Z
    expect((await slow.replicateFrom(fast)).accepted).toBe(1); // exactly 60 s ahead of slow: accepted
    const e = await slow.req('PATCH', `/tickets/${c.id}`, { status: 'solved' });
    expect([e.status, e.body.status, e.body.updated_at]).toEqual([200, 'solved', '2026-03-01T09:00:30.001Z']);
    await slow.replicateFrom(fast); // re-reads fast's copy within the overlap
    expect((await slow.req('GET', `/tickets/${c.id}`)).body.status).toBe('solved'); // FAILS: 'open'
  } finally {
    await fast.close();
    await slow.close();
  }
});

it('a winning stampless copy keeps the node\'s earlier tag removal, so an older add cannot bring the tag back', async () => {
  const clock = { now: () => T };
  const a = await composeNode({ clock, maxSkewMs: 60_000, pullLimit: 2 });
  const b = await composeNode({ clock, maxSkewMs: 60_000, pullLimit: 2 });
  try {
    const c = (await a.req('POST', '/tickets', { title: 'printer', tags: ['vpn'] })).body; // .000Z, vpn added
    await b.replicateFrom(a); // b holds vpn
    await a.req('PATCH', `/tickets/${c.id}`, { tags: [] }); // .001Z: vpn removed on a
    const { field_stamps: _fs, ...plain } = (await a.snapshot())[0]!;
    const pushed = await a.req('POST', '/sync/push', [{ ...plain, updated_at: '2026-03-01T09:00:00.005Z', updated_by: 'spec-peer' }]);
    expect(pushed.body).toEqual({ accepted: 1, rejected: 0 }); // later, without vpn: replaces the ticket
    await a.replicateFrom(b);
    await b.replicateFrom(a);
    expect((await a.req('GET', `/tickets/${c.id}`)).body.tags).toEqual([]); // FAILS: ['vpn'] on both nodes
  } finally {
    await a.close();
    await b.close();
  }
});
