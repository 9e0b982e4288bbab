// docs/tickets.md, sync: nodes whose clocks lie within the maximum skew of each other, editing the
// same tickets concurrently, partitioned and healed, end with the same tickets (field stamps
// included) once every pair has synced; each field holds the edit with the greatest
// [stamp, node id], and each tag is present iff its latest add or remove is an add.
// Comments added anywhere are never lost (every comment of a live ticket is on every node),
// deletes are never undone (a deleted ticket is gone on every node, whatever was edited or
// commented meanwhile elsewhere), and every node shows the same history of each ticket.
// A peer that follows only the spec (copies without field stamps) is settled by whole-ticket
// last-writer-wins. Real stores, routes and the Replicator over HTTP, each node listing the
// others as its peers (a full mesh, so that tombstones are purged as in a deployment); only the
// clocks are fake.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { composeMesh, type MeshNode } from '../helpers/tickets-mesh.js';
import { STAMPED_FIELDS, STATUSES, PRIORITIES, type FieldStamp, type StampedField, type Ticket } from '../../src/schemas/tickets.js';
import { DEFAULT_OVERLAP_MS } from '../../daemon/services/tickets/replication.js';
import { formatStamp, parseStamp } from '../../daemon/services/tickets/stamp.js';

const MAX_SKEW_MS = 60_000;
const START = Date.parse('2026-03-01T09:00:00.000Z');
const RUNS = Number(process.env.MKT_PROPERTY_RUNS ?? 30);
/** Room for MKT_PROPERTY_RUNS beyond the default on a slow machine. */
const TIMEOUT_MS = Math.max(120_000, RUNS * 4_000);
/**
 * Each run starts three servers, so shrinking a failure can take minutes: fast-check stops in
 * time to report the smallest counterexample found so far (and its seed) before vitest's timeout.
 */
const FC_LIMITS = {
  interruptAfterTimeLimit: TIMEOUT_MS - 30_000,
  // Replays a reported failure (with `-t` naming its test): MKT_PROPERTY_SEED and MKT_PROPERTY_PATH.
  ...(process.env.MKT_PROPERTY_SEED ? { seed: Number(process.env.MKT_PROPERTY_SEED), path: process.env.MKT_PROPERTY_PATH, endOnFailure: true } : {}),
};
const MAX_TICKETS = 4;
const MAX_PASSES = 6;
const TITLES = ['printer', 'refund', 'login'];
const TAGS = ['a', 'b', 'c', 'd'];
const PEOPLE = ['ana', 'bo', 'cy'];
const SPEC_PEER = 'spec-peer';

// ---- the model: every write the nodes answered, with its [stamp, node id] ----

interface Write {
  value: unknown;
  stamp: FieldStamp;
}
interface TagOp {
  present: boolean;
  stamp: FieldStamp;
}
interface TicketModel {
  creation: Ticket;
  writes: Map<StampedField, Write[]>;
  tagOps: Map<string, TagOp[]>;
  /** Ids of the comments the nodes answered 201 for. */
  comments: Set<string>;
  deleted: boolean;
}

function compareStamp(a: FieldStamp, b: FieldStamp): number {
  if (a[0] !== b[0]) return a[0] < b[0] ? -1 : 1;
  return a[1] === b[1] ? 0 : a[1] < b[1] ? -1 : 1;
}

class Model {
  /** In creation order (edits pick tickets by position in it). */
  readonly tickets = new Map<string, TicketModel>();

  created(t: Ticket): void {
    const m: TicketModel = { creation: t, writes: new Map(), tagOps: new Map(), comments: new Set(), deleted: false };
    this.tickets.set(t.id, m);
    for (const tag of t.tags) this.tag(t.id, tag, true, [t.updated_at, t.updated_by]);
  }
  write(id: string, field: StampedField, value: unknown, stamp: FieldStamp): void {
    const ws = this.tickets.get(id)!.writes;
    ws.set(field, [...(ws.get(field) ?? []), { value, stamp }]);
  }
  tag(id: string, tag: string, present: boolean, stamp: FieldStamp): void {
    const ops = this.tickets.get(id)!.tagOps;
    ops.set(tag, [...(ops.get(tag) ?? []), { present, stamp }]);
  }

  expectedValue(id: string, field: StampedField): { value: unknown; by: string } {
    const m = this.tickets.get(id)!;
    const ws = m.writes.get(field) ?? [];
    if (ws.length === 0) return { value: m.creation[field], by: 'creation' };
    const best = ws.reduce((a, b) => (compareStamp(b.stamp, a.stamp) > 0 ? b : a));
    return { value: best.value, by: JSON.stringify(best.stamp) };
  }
  expectedTags(id: string): string[] {
    const out: string[] = [];
    for (const [tag, ops] of this.tickets.get(id)!.tagOps) {
      // The latest add or remove decides; on equal stamps the add wins.
      const last = ops.reduce((a, b) => {
        const c = compareStamp(b.stamp, a.stamp);
        return c > 0 || (c === 0 && b.present) ? b : a;
      });
      if (last.present) out.push(tag);
    }
    return out.sort();
  }
}

// ---- steps ----

type Changes = { status?: string; priority?: string; assignee?: string | null; title?: string; tags?: string[] };
type Step =
  | { kind: 'create'; node: number; title: string; tags: string[]; status?: string }
  | { kind: 'edit'; node: number; pick: number; changes: Changes }
  | { kind: 'sync'; node: number; peer: number }
  | { kind: 'cut' | 'heal'; a: number; b: number }
  | { kind: 'wait'; ms: number }
  | { kind: 'stampless'; node: number; pick: number; newer: boolean; ms: number; changes: Changes }
  | { kind: 'comment'; node: number; pick: number; body: string }
  | { kind: 'delete'; node: number; pick: number };

const tagList = fc.subarray(TAGS);
const changes: fc.Arbitrary<Changes> = fc.record(
  {
    status: fc.constantFrom(...STATUSES),
    priority: fc.constantFrom(...PRIORITIES),
    assignee: fc.option(fc.constantFrom(...PEOPLE), { nil: null }),
    title: fc.constantFrom(...TITLES),
    tags: tagList,
  },
  { requiredKeys: [] },
).filter((c) => Object.keys(c).length > 0);

function steps(nodes: number, extra: fc.WeightedArbitrary<Step>[] = []): fc.Arbitrary<Step[]> {
  const node = fc.nat(nodes - 1);
  const otherOf = (n: number): fc.Arbitrary<number> => fc.nat(nodes - 2).map((k) => (n + 1 + k) % nodes);
  const create = fc.record({ kind: fc.constant('create' as const), node, title: fc.constantFrom(...TITLES), tags: tagList, status: fc.option(fc.constantFrom(...STATUSES), { nil: undefined }) });
  const step: fc.Arbitrary<Step> = fc.oneof(
    { weight: 2, arbitrary: create },
    { weight: 6, arbitrary: fc.record({ kind: fc.constant('edit' as const), node, pick: fc.nat(MAX_TICKETS - 1), changes }) },
    { weight: 6, arbitrary: node.chain((n) => otherOf(n).map((peer): Step => ({ kind: 'sync', node: n, peer }))) },
    { weight: 1, arbitrary: node.chain((a) => otherOf(a).map((b): Step => ({ kind: 'cut', a, b }))) },
    { weight: 1, arbitrary: node.chain((a) => otherOf(a).map((b): Step => ({ kind: 'heal', a, b }))) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('wait' as const), ms: fc.oneof(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 5_000 })) }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('comment' as const), node, pick: fc.nat(MAX_TICKETS - 1), body: fc.constantFrom('same here', 'fixed?', 'no') }) },
    ...extra,
  );
  // Starts with a ticket, so that early edits have one to change; size 'max': the default
  // size would keep plans to 10 steps at most.
  return fc.tuple(create, fc.array(step, { maxLength: 24, size: 'max' })).map(([first, rest]) => [first, ...rest]);
}

// ---- running the steps against real nodes ----

class TrueTime {
  ms = START;
}

interface World {
  time: TrueTime;
  nodes: MeshNode[];
  model: Model;
  cut: Set<string>;
  /** Stamps the spec-only peer has written, by ticket: it never writes two copies at one stamp. */
  specStamps: Set<string>;
}

const pairKey = (a: number, b: number): string => (a < b ? `${a}-${b}` : `${b}-${a}`);
const withoutStamps = ({ field_stamps: _fs, ...t }: Ticket): Ticket => t;

/** The live tickets node `n` holds, in creation order. */
async function held(w: World, n: MeshNode): Promise<Ticket[]> {
  const byId = new Map((await n.snapshot()).map((t) => [t.id, t]));
  return [...w.model.tickets.keys()].filter((id) => byId.has(id)).map((id) => byId.get(id)!);
}

async function create(w: World, s: Extract<Step, { kind: 'create' }>): Promise<void> {
  if (w.model.tickets.size >= MAX_TICKETS) return;
  const n = w.nodes[s.node]!;
  const r = await n.req('POST', '/tickets', { title: s.title, tags: s.tags, ...(s.status ? { status: s.status } : {}) });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  expect(r.body.updated_by).toBe(n.nodeId);
  const pulled = (await n.snapshot()).find((t) => t.id === r.body.id);
  w.model.created(pulled!);
}

async function edit(w: World, s: Extract<Step, { kind: 'edit' }>): Promise<void> {
  const n = w.nodes[s.node]!;
  const have = await held(w, n);
  if (have.length === 0) return;
  const before = have[s.pick % have.length]!;
  const r = await n.req('PATCH', `/tickets/${before.id}`, s.changes);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const after = r.body as Ticket;
  const fields = STAMPED_FIELDS.filter((f) => s.changes[f as keyof Changes] !== undefined && JSON.stringify(s.changes[f as keyof Changes]) !== JSON.stringify(before[f]));
  const want = s.changes.tags;
  const added = want ? [...new Set(want)].filter((t) => !before.tags.includes(t)) : [];
  const removed = want ? before.tags.filter((t) => !want.includes(t)) : [];
  if (fields.length + added.length + removed.length === 0) {
    expect(after.updated_at, 'an edit that changes nothing keeps the stamp').toBe(before.updated_at);
    return;
  }
  // One new stamp for the whole edit, later than anything the ticket held here.
  expect(after.updated_by).toBe(n.nodeId);
  expect(after.updated_at > before.updated_at, `${after.updated_at} after ${before.updated_at}`).toBe(true);
  const stamp: FieldStamp = [after.updated_at, after.updated_by];
  for (const f of fields) {
    expect(after[f]).toEqual(s.changes[f as keyof Changes]);
    w.model.write(before.id, f, after[f], stamp);
  }
  if (want) expect([...after.tags].sort()).toEqual([...new Set(want)].sort());
  for (const t of added) w.model.tag(before.id, t, true, stamp);
  for (const t of removed) w.model.tag(before.id, t, false, stamp);
}

async function sync(w: World, node: number, peer: number): Promise<void> {
  if (w.cut.has(pairKey(node, peer))) return;
  const round = await w.nodes[node]!.replicateFrom(w.nodes[peer]!);
  expect(round.ok, round.error).toBe(true);
}

/**
 * A spec-only peer pushes a copy without field stamps, later or earlier than the node's. Its
 * clock is within the bound too: its stamps are at most half the skew ahead of true time.
 */
async function stampless(w: World, s: Extract<Step, { kind: 'stampless' }>): Promise<void> {
  const n = w.nodes[s.node]!;
  const have = await held(w, n);
  if (have.length === 0) return;
  const before = have[s.pick % have.length]!;
  const stored = parseStamp(before.updated_at)!;
  const at = Math.min(stored + (s.newer ? s.ms : -s.ms), w.time.ms + MAX_SKEW_MS / 2);
  // Two different copies under one [stamp, node] only come from a forged peer (docs/tickets.md).
  if (at === stored || w.specStamps.has(`${before.id}@${at}`)) return;
  w.specStamps.add(`${before.id}@${at}`);
  const copy: Ticket = { ...withoutStamps(before), ...s.changes, updated_at: formatStamp(at), updated_by: SPEC_PEER };
  const r = await n.req('POST', '/sync/push', [copy]);
  expect(r.status).toBe(200);
  const after = (await held(w, n)).find((t) => t.id === before.id)!;
  if (at < stored) {
    expect(r.body, 'an older stampless copy is rejected').toEqual({ accepted: 0, rejected: 1 });
    expect(after, 'an older stampless copy changes nothing').toEqual(before);
    return;
  }
  expect(r.body, 'a later stampless copy is accepted').toEqual({ accepted: 1, rejected: 0 });
  // It replaces the ticket entirely: every field, the tag set, the stamp and its author.
  const { field_stamps: _fs, tags, ...rest } = after;
  const { tags: copyTags, ...copyRest } = copy;
  expect(rest, 'a later stampless copy replaces the ticket').toEqual(copyRest);
  expect([...tags].sort()).toEqual([...new Set(copyTags)].sort());
  // In the model: every field written at its stamp, its tags added, and every tag it lacks that
  // the node knew of (present, or removed earlier) removed at its stamp.
  const stamp: FieldStamp = [copy.updated_at, SPEC_PEER];
  for (const f of STAMPED_FIELDS) w.model.write(before.id, f, copy[f], stamp);
  for (const t of copyTags) w.model.tag(before.id, t, true, stamp);
  const known = new Set([...before.tags, ...Object.keys(before.field_stamps?.tags ?? {})]);
  for (const t of known) if (!copyTags.includes(t)) w.model.tag(before.id, t, false, stamp);
}

async function comment(w: World, s: Extract<Step, { kind: 'comment' }>): Promise<void> {
  const n = w.nodes[s.node]!;
  const have = await held(w, n);
  if (have.length === 0) return;
  const t = have[s.pick % have.length]!;
  const r = await n.req('POST', `/tickets/${t.id}/comments`, { body: s.body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  w.model.tickets.get(t.id)!.comments.add(r.body.id);
  // A comment is a change of the ticket: its stamp moves on, so that it syncs.
  const after = (await held(w, n)).find((x) => x.id === t.id)!;
  expect(after.updated_at > t.updated_at, `${after.updated_at} after ${t.updated_at}`).toBe(true);
}

async function remove(w: World, s: Extract<Step, { kind: 'delete' }>): Promise<void> {
  const n = w.nodes[s.node]!;
  const have = await held(w, n);
  if (have.length === 0) return;
  const t = have[s.pick % have.length]!;
  expect((await n.req('DELETE', `/tickets/${t.id}`)).status).toBe(204);
  w.model.tickets.get(t.id)!.deleted = true;
  expect((await n.req('GET', `/tickets/${t.id}`)).status).toBe(404);
}

async function run(w: World, s: Step): Promise<void> {
  switch (s.kind) {
    case 'create':
      return create(w, s);
    case 'edit':
      return edit(w, s);
    case 'sync':
      return sync(w, s.node, s.peer);
    case 'cut':
      w.cut.add(pairKey(s.a, s.b));
      return;
    case 'heal':
      w.cut.delete(pairKey(s.a, s.b));
      return;
    case 'wait':
      w.time.ms += s.ms;
      return;
    case 'stampless':
      return stampless(w, s);
    case 'comment':
      return comment(w, s);
    case 'delete':
      return remove(w, s);
  }
}

/**
 * Heals every pair and runs full rounds until a pass changes nothing; fails if it never does.
 * A second passes before each pass, as between real rounds: a hybrid-clock stamp may lie a few
 * ms past the slowest clock's window (1 ms past the newest stamp seen) and is taken once it moves.
 */
async function settle(w: World): Promise<Ticket[][]> {
  w.cut.clear();
  const all = (): Promise<Ticket[][]> => Promise.all(w.nodes.map((n) => n.snapshot()));
  let last = JSON.stringify(await all());
  for (let pass = 1; pass <= MAX_PASSES; pass++) {
    w.time.ms += 1_000;
    for (let i = 0; i < w.nodes.length; i++) for (let j = 0; j < w.nodes.length; j++) if (i !== j) await sync(w, i, j);
    const now = await all();
    if (JSON.stringify(now) === last) return now;
    last = JSON.stringify(now);
  }
  throw new Error(`sync did not quiesce within ${MAX_PASSES} passes`);
}

async function checkAgainstModel(w: World, snapshots: Ticket[][]): Promise<void> {
  const [first, ...rest] = snapshots;
  const live = [...w.model.tickets].filter(([, m]) => !m.deleted).map(([id]) => id);
  // (1) Every node holds exactly the same live tickets, stamps, field stamps, comments and
  // history included; a deleted one is gone from every node (never undone).
  expect(first!.map((t) => t.id).sort()).toEqual(live.sort());
  for (const [k, other] of rest.entries()) {
    expect(other.map((t) => t.id), `node ${k + 1}'s tickets`).toEqual(first!.map((t) => t.id));
    for (const [i, t] of other.entries()) expect(t, `ticket ${t.short_id} on node ${k + 1} and node 0`).toEqual(first![i]);
  }
  for (const t of first!) {
    // (2) Each field: the write with the greatest [stamp, node id], else the creation value.
    for (const f of STAMPED_FIELDS) {
      const want = w.model.expectedValue(t.id, f);
      expect(t[f], `ticket ${t.short_id} field ${f} (expected from ${want.by})`).toEqual(want.value);
    }
    // (3) Each tag: present iff its latest add/remove is an add.
    expect([...t.tags].sort(), `ticket ${t.short_id} tags`).toEqual(w.model.expectedTags(t.id));
    // (4) Every comment added anywhere, no other.
    expect((t.comments ?? []).map((c) => c.id).sort(), `ticket ${t.short_id} comments`).toEqual([...w.model.tickets.get(t.id)!.comments].sort());
  }
  for (const [id, m] of w.model.tickets) {
    // (5) The same history on every node, as the API shows it (derived entries and `lost` marks
    // included): a created entry and one entry per comment; a deleted ticket 404 everywhere.
    const answers = await Promise.all(w.nodes.map((n) => n.req('GET', `/tickets/${id}${m.deleted ? '' : '/history?limit=500'}`)));
    if (m.deleted) {
      for (const [k, a] of answers.entries()) expect(a.status, `deleted ticket ${id.slice(0, 8)} on node ${k}`).toBe(404);
      continue;
    }
    const [h0, ...hs] = answers;
    expect(h0!.status).toBe(200);
    for (const [k, h] of hs.entries()) expect(h.body, `history of ${id.slice(0, 8)} on node ${k + 1} and node 0`).toEqual(h0!.body);
    const entries = h0!.body.data as { field: string; to: string | null }[];
    expect(entries.filter((e) => e.field === 'created')).toHaveLength(1);
    expect(entries.filter((e) => e.field === 'comment').map((e) => e.to).sort()).toEqual([...m.comments].sort());
  }
}

async function withWorld(skews: number[], opts: { pullLimit: number; overlapMs: number }, body: (w: World) => Promise<void>): Promise<void> {
  const time = new TrueTime();
  const nodes = await composeMesh(skews.map((skew) => ({ clock: { now: () => time.ms + skew }, maxSkewMs: MAX_SKEW_MS, pullLimit: opts.pullLimit, overlapMs: opts.overlapMs })));
  try {
    await body({ time, nodes, model: new Model(), cut: new Set(), specStamps: new Set() });
  } finally {
    for (const n of nodes) await n.close();
  }
}

// Often at the very ends, so that two clocks lie exactly the maximum skew apart (the documented bound).
const skew = fc.oneof(fc.constantFrom(-MAX_SKEW_MS / 2, MAX_SKEW_MS / 2), fc.integer({ min: -MAX_SKEW_MS / 2, max: MAX_SKEW_MS / 2 }));
const overlap = fc.constantFrom(0, 1_000, DEFAULT_OVERLAP_MS);

describe('ticket sync between nodes with field stamps (property)', () => {
  it('converges to the same tickets, each field the write with the greatest stamp, each tag its last add or remove, no comment lost, no delete undone, one history', async () => {
    const del: fc.WeightedArbitrary<Step> = { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), node: fc.nat(2), pick: fc.nat(MAX_TICKETS - 1) }) };
    await fc.assert(
      fc.asyncProperty(fc.tuple(skew, skew, skew), overlap, fc.integer({ min: 1, max: 3 }), steps(3, [del]), async (skews, overlapMs, pullLimit, plan) => {
        await withWorld(skews, { pullLimit, overlapMs }, async (w) => {
          for (const s of plan) await run(w, s);
          await checkAgainstModel(w, await settle(w));
        });
      }),
      { numRuns: RUNS, ...FC_LIMITS },
    );
  }, TIMEOUT_MS);

  it('settles copies from a peer without field stamps by whole-ticket last-writer-wins, and still converges', async () => {
    const push: fc.WeightedArbitrary<Step> = {
      weight: 3,
      arbitrary: fc.record({ kind: fc.constant('stampless' as const), node: fc.nat(1), pick: fc.nat(MAX_TICKETS - 1), newer: fc.boolean(), ms: fc.integer({ min: 1, max: 5_000 }), changes }),
    };
    await fc.assert(
      // The default overlap: a stampless copy is relayed only within it (docs/tickets.md, "Topology").
      fc.asyncProperty(fc.tuple(skew, skew), steps(2, [push]), async (skews, plan) => {
        await withWorld(skews, { pullLimit: 2, overlapMs: DEFAULT_OVERLAP_MS }, async (w) => {
          for (const s of plan) await run(w, s);
          await checkAgainstModel(w, await settle(w));
        });
      }),
      { numRuns: Math.max(1, Math.round(RUNS / 2)), ...FC_LIMITS },
    );
  }, TIMEOUT_MS);
});
