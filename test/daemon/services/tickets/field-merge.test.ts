// Field-by-field merging: concurrent edits of different fields both survive, the later stamp
// wins a field (node id on a tie), tags merge as adds and removes, a copy without stamps is
// whole-ticket last-writer-wins, and the result does not depend on the order copies arrive.
import { describe, expect, it } from 'vitest';
import { applyEdit, fingerprint, joinCopies, MAX_TAG_ENTRIES, mergeCopy, normalize } from '../../../../daemon/services/tickets/field-merge.js';
import type { FieldStamp, Ticket } from '../../../../src/schemas/tickets.js';

const ID = 'a0000000-0000-4000-8000-000000000001';
const T0 = '2026-11-24T10:00:00.000Z';
const at = (min: number, ms = 0): string => new Date(Date.parse(T0) + min * 60_000 + ms).toISOString();

function created(fields: Partial<Ticket> = {}): Ticket {
  return normalize({
    id: ID,
    short_id: ID.slice(0, 8),
    title: 'VPN drops',
    description: '',
    status: 'open',
    priority: 'normal',
    channel: 'email',
    source: 'manual',
    requester: null,
    assignee: null,
    tags: ['vpn'],
    created_at: T0,
    updated_at: T0,
    updated_by: 'node-a',
    field_stamps: { base: [T0, 'node-a'] },
    ...fields,
  });
}

function edit(t: Ticket, changes: Parameters<typeof applyEdit>[1], stamp: FieldStamp): Ticket {
  const next = applyEdit(t, changes, () => stamp);
  if (!next) throw new Error('the edit changed nothing');
  return next;
}

/** Merges `b` into `a` the way a node does: stored `a`, incoming `b`. */
function merged(a: Ticket, b: Ticket): Ticket {
  const o = mergeCopy(b, a);
  return o.kind === 'store' ? o.ticket : a;
}

describe('field-by-field merge', () => {
  it('concurrent edits of different fields both survive, in either order', () => {
    const base = created();
    const onA = edit(base, { status: 'pending' }, [at(1), 'node-a']);
    const onB = edit(base, { assignee: 'bo' }, [at(1, 5), 'node-b']);
    const ab = merged(onA, onB);
    const ba = merged(onB, onA);
    expect(ab).toMatchObject({ status: 'pending', assignee: 'bo', updated_at: at(1, 5), updated_by: 'node-b' });
    expect(fingerprint(ab)).toBe(fingerprint(ba));
    expect(ab.field_stamps).toEqual({ base: [T0, 'node-a'], status: [at(1), 'node-a'], assignee: [at(1, 5), 'node-b'] });
  });

  it('one field edited on two nodes: the later stamp wins; on the same millisecond, the greater node id', () => {
    const base = created();
    const early = edit(base, { status: 'pending' }, [at(1), 'node-z']);
    const late = edit(base, { status: 'solved' }, [at(2), 'node-a']);
    expect(merged(early, late).status).toBe('solved');
    expect(merged(late, early).status).toBe('solved');
    const x = edit(base, { status: 'pending' }, [at(3), 'node-a']);
    const y = edit(base, { status: 'closed' }, [at(3), 'node-b']);
    expect(merged(x, y).status).toBe('closed');
    expect(merged(y, x).status).toBe('closed');
  });

  it('tags merge as a set: adds and removes on different nodes both apply; the later of an add and a remove wins', () => {
    const base = created({ tags: ['vpn', 'net'] });
    const onA = edit(base, { tags: ['vpn', 'net', 'urgent'] }, [at(1), 'node-a']); // adds urgent
    const onB = edit(base, { tags: ['net'] }, [at(1), 'node-b']); // removes vpn
    expect(merged(onA, onB).tags.sort()).toEqual(['net', 'urgent']);
    expect(fingerprint(merged(onA, onB))).toBe(fingerprint(merged(onB, onA)));
    // Removed on A at 2 while B adds it on its own at 3: present. B adding at 1.5: absent.
    const removed = edit(onA, { tags: ['vpn', 'net'] }, [at(2), 'node-a']);
    const addedLater = edit(base, { tags: ['vpn', 'net', 'urgent'] }, [at(3), 'node-b']);
    expect(merged(removed, addedLater).tags).toContain('urgent');
    expect(merged(addedLater, removed).tags).toContain('urgent');
    const addedEarlier = edit(base, { tags: ['vpn', 'net', 'urgent'] }, [at(1, 500), 'node-b']);
    expect(merged(removed, addedEarlier).tags).not.toContain('urgent');
    expect(merged(addedEarlier, removed).tags).not.toContain('urgent');
  });

  it('an add and a remove of one tag with equal stamps: the add wins, whichever arrives first', () => {
    const base = created({ tags: ['vpn'] });
    const rm = { ...base, tags: [], field_stamps: { base: base.field_stamps!.base, tags: { vpn: [at(1), 'node-a', false] as [string, string, boolean] } } };
    const add = { ...base, tags: ['vpn'], field_stamps: { base: base.field_stamps!.base, tags: { vpn: [at(1), 'node-a', true] as [string, string, boolean] } } };
    expect(joinCopies(rm, add).tags).toEqual(['vpn']);
    expect(joinCopies(add, rm).tags).toEqual(['vpn']);
  });

  it('is idempotent and reports an identical copy as same, an older one as keep', () => {
    const t = edit(created(), { priority: 'high' }, [at(1), 'node-a']);
    expect(mergeCopy(t, t)).toEqual({ kind: 'same' });
    expect(mergeCopy(created(), t)).toEqual({ kind: 'keep' });
    const newer = edit(t, { priority: 'urgent' }, [at(2), 'node-b']);
    expect(mergeCopy(newer, t)).toMatchObject({ kind: 'store', asSent: true });
  });

  it('a copy without field stamps is whole-ticket last-writer-wins, its missing tags removed', () => {
    const stored = edit(created({ tags: ['vpn', 'net'] }), { assignee: 'bo' }, [at(5), 'node-a']);
    const { field_stamps: _, ...plain } = stored;
    const older: Ticket = { ...plain, status: 'closed', tags: [], updated_at: at(4), updated_by: 'spec-peer' };
    expect(mergeCopy(older, stored)).toEqual({ kind: 'keep' });
    const newer: Ticket = { ...plain, status: 'closed', assignee: null, tags: ['net'], updated_at: at(6), updated_by: 'spec-peer' };
    const o = mergeCopy(newer, stored);
    expect(o.kind).toBe('store');
    const t = (o as { ticket: Ticket }).ticket;
    expect(t).toMatchObject({ status: 'closed', assignee: null, tags: ['net'], updated_at: at(6), updated_by: 'spec-peer' });
    // A stamped copy that added vpn before the stampless one cannot bring it back.
    const stale = edit(created({ tags: ['net'] }), { tags: ['net', 'vpn'] }, [at(5, 500), 'node-c']);
    expect(merged(t, stale).tags).toEqual(['net']);
  });

  it('a stored stamp beyond the ceiling (left by an older version) loses to an honest copy', () => {
    const future = '9999-12-31T23:59:59.999Z';
    const stuck = normalize({ ...created(), title: 'stuck', created_at: future, updated_at: future, field_stamps: { base: [future, 'x'] } });
    const honest = edit(created(), { title: 'edited' }, [at(1), 'node-b']);
    const o = mergeCopy(honest, stuck, Date.parse(at(10)));
    expect(o.kind).toBe('store');
    expect((o as { ticket: Ticket }).ticket).toMatchObject({ title: 'edited', updated_at: at(1) });
  });

  it('an edit that changes nothing draws no stamp', () => {
    let drawn = 0;
    const t = created();
    expect(applyEdit(t, { status: 'open', tags: ['vpn'] }, () => (drawn++, [at(1), 'n']))).toBeUndefined();
    expect(drawn).toBe(0);
  });

  it('keeps at most MAX_TAG_ENTRIES tag entries, dropping the oldest removals first', () => {
    let t = created({ tags: [] });
    for (let i = 0; i < MAX_TAG_ENTRIES + 10; i++) t = edit(edit(t, { tags: [`t${i}`] }, [at(i, 1), 'n']), { tags: [] }, [at(i, 2), 'n']);
    t = edit(t, { tags: ['keep'] }, [at(MAX_TAG_ENTRIES + 20), 'n']);
    expect(Object.keys(t.field_stamps!.tags!)).toHaveLength(MAX_TAG_ENTRIES);
    expect(t.field_stamps!.tags!.t0).toBeUndefined();
    expect(t.tags).toEqual(['keep']);
  });
});
