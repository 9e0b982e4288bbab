// The sync speed-ups of the field merge (a copy already normalized is stored and compared as
// it is; compact in one pass; equality part by part before fingerprints) must not change one
// outcome: a differential test against the merge as it was (field-merge-reference.ts), over
// drawn copies in stored form or not, with ties, tag entries that disagree with the tags
// array, more tag entries than are kept, stampless copies, and stale stamps past the ceiling.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import * as now from '../../../../daemon/services/tickets/field-merge.js';
import * as ref from './field-merge-reference.js';
import { STAMPED_FIELDS, type FieldStamp, type FieldStamps, type StampedField, type TagStamp, type Ticket } from '../../../../src/schemas/tickets.js';

const ID = 'a0000000-0000-4000-8000-000000000001';
const T0 = Date.parse('2026-03-01T09:00:00.000Z');
/** Few stamps, so that ties are common; the last one is an old version's year-10000 leftover. */
const STAMPS = [0, 1, 2, 5, 60_000].map((ms) => new Date(T0 + ms).toISOString()).concat('+010000-01-01T00:00:00.000Z');
const CEILINGS = [undefined, T0 + 2, T0 + 3_600_000];
/** Integer-like names too: objects list those first whatever the insertion order. */
const TAG_NAMES = ['vpn', 'b', 'a', '10', '2'];

const stamp = fc.constantFrom(...STAMPS.slice(0, -1));
const anyStamp = fc.constantFrom(...STAMPS);
const node = fc.constantFrom('node-a', 'node-b', 'node-c');
const fieldStamp: fc.Arbitrary<FieldStamp> = fc.tuple(anyStamp, node);
const tagStamp: fc.Arbitrary<TagStamp> = fc.tuple(anyStamp, node, fc.boolean());

function ticketOf(names: fc.Arbitrary<string>, entries: { minKeys: number; maxKeys: number }): fc.Arbitrary<Ticket> {
  return fc
    .record({
      title: fc.constantFrom('printer', 'refund'),
      description: fc.constantFrom('', 'it jams'),
      status: fc.constantFrom('open', 'solved'),
      priority: fc.constantFrom('normal', 'high'),
      channel: fc.constantFrom('email', 'api'),
      source: fc.constantFrom('manual', 'web'),
      requester: fc.constantFrom(null, 'ana'),
      assignee: fc.constantFrom(null, 'bo'),
      tags: fc.uniqueArray(names, { maxLength: 6 }),
      created_at: stamp,
      updated_at: stamp,
      updated_by: node,
      stamps: fc.option(fc.record({ base: fieldStamp, fields: fc.dictionary(fc.constantFrom(...STAMPED_FIELDS), fieldStamp, { maxKeys: 4 }), tags: fc.option(fc.dictionary(names, tagStamp, entries)) }), { freq: 4 }),
    })
    .map(({ stamps, ...t }) => {
      const ticket: Ticket = { id: ID, short_id: ID.slice(0, 8), ...t };
      if (stamps) {
        const fs: FieldStamps = { base: stamps.base, ...(stamps.fields as Partial<Record<StampedField, FieldStamp>>) };
        if (stamps.tags) fs.tags = stamps.tags;
        ticket.field_stamps = fs;
      }
      return ticket;
    });
}

const copy = ticketOf(fc.constantFrom(...TAG_NAMES), { minKeys: 0, maxKeys: 5 });
/** Enough tag entries, mostly, that the oldest removals are dropped. */
const crowded = ticketOf(
  fc.integer({ min: 0, max: 999 }).map((i) => `t${i}`),
  { minKeys: ref.MAX_TAG_ENTRIES - 5, maxKeys: ref.MAX_TAG_ENTRIES + 20 },
);

/** The same value, as the store hands it back (JSON round trip, no shared arrays). */
const stored = (t: Ticket): Ticket => JSON.parse(JSON.stringify(t)) as Ticket;
/** Exact text, key order included. */
const text = (x: unknown): string => JSON.stringify(x);

function sameOutcome(a: ref.MergeOutcome, b: now.MergeOutcome, label: string): void {
  expect(text(b), label).toBe(text(a));
}

/** Every way a node meets this pair: stored or not, in stored form or not, at each ceiling. */
function checkPair(x: Ticket, y: Ticket): void {
  expect(text(now.normalize(x))).toBe(text(ref.normalize(x)));
  for (const ceiling of CEILINGS) {
    // The incoming copy as parsePeerTicket hands it over (normalized), and raw.
    const incomings: [string, Ticket, Ticket][] = [
      ['raw', x, x],
      ['normalized', ref.normalize(x), now.normalize(x)],
    ];
    for (const [form, inRef, inNow] of incomings) {
      const held: [string, Ticket | undefined][] = [
        ['nothing', undefined],
        ['other raw', stored(y)],
        ['other normalized', stored(ref.normalize(y))],
        ['itself', stored(ref.normalize(x))],
        ['itself raw', stored(x)],
      ];
      for (const [what, s] of held) sameOutcome(ref.mergeCopy(inRef, s, ceiling), now.mergeCopy(inNow, s, ceiling), `${form} copy, ${what} stored, ceiling ${ceiling}`);
    }
    if (x.field_stamps && y.field_stamps) expect(text(now.joinCopies(y, x, ceiling))).toBe(text(ref.joinCopies(y, x, ceiling)));
  }
}

describe('field merge: the same outcomes as before the speed-ups', () => {
  it('normalize, joinCopies and mergeCopy over drawn pairs of copies', () => {
    fc.assert(fc.property(copy, copy, checkPair), { numRuns: 1500 });
  });

  it('copies with more tag entries than are kept', () => {
    let truncated = 0;
    fc.assert(
      fc.property(crowded, crowded, (x, y) => {
        if (ref.expand(x).tags.size > ref.MAX_TAG_ENTRIES) truncated++;
        checkPair(x, y);
      }),
      { numRuns: 60 },
    );
    expect(truncated).toBeGreaterThan(10);
  });

  it('local edits', () => {
    const changes = fc.record(
      { title: fc.constantFrom('printer', 'refund'), status: fc.constantFrom('open', 'closed'), assignee: fc.constantFrom(null, 'cy'), tags: fc.uniqueArray(fc.constantFrom(...TAG_NAMES), { maxLength: 4 }) },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(copy, changes, fieldStamp, (t, c, st) => {
        const base = ref.normalize(t);
        expect(text(now.applyEdit(base, c, () => st))).toBe(text(ref.applyEdit(base, c, () => st)));
      }),
      { numRuns: 2000 },
    );
  });

  it('sameCopy agrees with comparing fingerprints', () => {
    fc.assert(
      fc.property(copy, copy, (x, y) => {
        for (const [a, b] of [[x, y], [x, stored(x)], [ref.normalize(x), now.normalize(x)], [ref.normalize(x), y]] as const) {
          expect(now.sameCopy(a, b)).toBe(ref.fingerprint(a) === ref.fingerprint(b));
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('normalizing is idempotent, which lets a normalized copy be stored as it is', () => {
    fc.assert(
      fc.property(fc.oneof(copy, crowded), (t) => {
        const once = ref.normalize(t);
        expect(text(ref.normalize(once))).toBe(text(once));
      }),
      { numRuns: 1000 },
    );
  });
});
