// The merge with comments, history and tombstones: comments and history unite (a join:
// commutative, associative, idempotent), a tombstone wins over any live copy and stays, and
// `lost` marks the entry a concurrent change overwrote.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mergeItem } from '../../../../daemon/services/tickets/item-merge.js';
import { normalize } from '../../../../daemon/services/tickets/field-merge.js';
import { lostEntries } from '../../../../src/store/ticket-sets.js';
import { isTombstone, type HistoryEntry, type PeerComment, type SyncItem, type Ticket, type Tombstone } from '../../../../src/schemas/tickets.js';

const ID = 'a0000000-0000-4000-8000-000000000001';
const at = (ms: number): string => new Date(Date.parse('2026-03-01T09:00:00.000Z') + ms).toISOString();
const base = (comments: PeerComment[], history: HistoryEntry[], ms = 0): Ticket =>
  normalize({ id: ID, short_id: ID.slice(0, 8), title: 't', description: '', status: 'open', priority: 'normal', channel: 'api', source: 'manual', requester: null, assignee: null, tags: [], created_at: at(0), updated_at: at(ms), updated_by: 'n1', field_stamps: { base: [at(ms), 'n1'] }, comments, history });
const comment = (k: number, node: string): PeerComment => ({ id: `c0000000-0000-4000-8000-00000000000${k}`, body: `c${k}`, author: node, created_at: at(10 + k), by: node });
const entry = (ms: number, by: string, to: string): HistoryEntry => ({ field: 'title', from: 't', to, at: at(ms), by });
const tomb = (ms: number, by: string, history: HistoryEntry[] = []): Tombstone => ({ id: ID, updated_at: at(ms), updated_by: by, deleted: { at: at(ms), by }, history });

function join(a: SyncItem, b: SyncItem): SyncItem {
  const o = mergeItem(b, a);
  return o.kind === 'store' ? o.ticket : a;
}

describe('merge with comments, history and tombstones', () => {
  const item = fc.oneof(
    fc.record({ c: fc.subarray([1, 2, 3, 4]), h: fc.subarray([1, 2, 3]) }).map(({ c, h }) => base(c.map((k) => comment(k, k % 2 ? 'n1' : 'n2')), h.map((k) => entry(k, `n${k}`, `v${k}`)))),
    fc.record({ ms: fc.constantFrom(50, 60), h: fc.subarray([1, 2]) }).map(({ ms, h }) => tomb(ms, 'n3', h.map((k) => entry(k, `n${k}`, `v${k}`)))) as fc.Arbitrary<SyncItem>,
  );

  it('is commutative, associative and idempotent', () => {
    fc.assert(
      fc.property(item, item, item, (x, y, z) => {
        const s = (v: SyncItem): string => JSON.stringify(v);
        expect(s(join(x, y))).toBe(s(join(y, x)));
        expect(s(join(join(x, y), z))).toBe(s(join(x, join(y, z))));
        expect(s(join(x, x))).toBe(s(x));
      }),
      { numRuns: 500 },
    );
  });

  it('keeps every comment of both copies, and a comment advances updated_at', () => {
    const a = base([comment(1, 'n1')], []);
    const b = base([comment(2, 'n2')], []);
    const j = join(a, b) as Ticket;
    expect(j.comments!.map((c) => c.body)).toEqual(['c1', 'c2']);
    expect(j.updated_at).toBe(at(12));
  });

  it('a tombstone wins over a later live copy, with the history its deleting node had', () => {
    const live = base([], [entry(1, 'n1', 'x')], 100);
    expect(mergeItem(live, tomb(50, 'n3'))).toEqual({ kind: 'keep' });
    const t = join(live, tomb(50, 'n3'));
    expect(isTombstone(t)).toBe(true);
    expect((t as Tombstone).history).toHaveLength(0);
  });

  it('marks the overwritten concurrent change lost, not a sequential one', () => {
    const concurrent = [entry(1, 'n1', 'a'), entry(2, 'n2', 'b')];
    expect([...lostEntries(concurrent)].map((e) => e.to)).toEqual(['a']);
    const sequential = [entry(1, 'n1', 'a'), { field: 'title', from: 'a', to: 'b', at: at(2), by: 'n2' }];
    expect(lostEntries(sequential).size).toBe(0);
  });
});
