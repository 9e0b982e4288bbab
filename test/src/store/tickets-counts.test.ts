// The running counts behind `count` in GET /tickets agree with counting the rows, through
// inserts, edits that move a ticket between statuses, and merges of peer copies.
import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SEARCH_COUNT_MAX, SqliteTicketStore, type ListPosition } from '../../../src/store/tickets.js';
import type { Status, Ticket } from '../../../src/schemas/tickets.js';
import { tempDir } from '../../helpers/tmp.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const STATUSES = ['open', 'pending', 'solved'];
const SOURCES = ['mail', 'form'];

function ticket(i: number, stamp: string, fields: Partial<Ticket> = {}): Ticket {
  const id = `d0000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  return { id, short_id: id.slice(0, 8), title: `t${i}`, description: '', status: STATUSES[i % 3]!, priority: i % 2 ? 'high' : 'low', channel: 'api', source: SOURCES[i % 2]!, requester: null, assignee: null, tags: [], created_at: stamp, updated_at: stamp, updated_by: 'n', ...fields };
}

describe('ticket counts', () => {
  it('match count(*) for every single filter and none, after inserts, edits and merges', async () => {
    const d = tempDir();
    cleanups.push(() => d.remove());
    const file = join(d.path, 'tickets.db');
    const store = new SqliteTicketStore(file);
    cleanups.push(() => store.close());
    await Promise.all(Array.from({ length: 30 }, (_, i) => store.insert(ticket(i, '2026-01-01T00:00:00.000Z'))));
    for (let i = 0; i < 10; i++) await store.update(ticket(i, '').id, (t) => ({ ...t, status: 'solved', source: 'phone', updated_at: '2026-01-02T00:00:00.000Z' }));
    await store.merge([ticket(5, '2026-01-03T00:00:00.000Z', { status: 'pending' }), ticket(40, '2026-01-03T00:00:00.000Z')], (t) => ({ kind: 'store', ticket: t, asSent: false }));
    const raw = new Database(file, { readonly: true });
    cleanups.push(() => void raw.close());
    const exact = (where: string, v?: string): number => (raw.prepare(`SELECT count(*) n FROM tickets${where}`).get(...(v === undefined ? [] : [v])) as { n: number }).n;
    expect(await store.count({})).toEqual({ n: 31, capped: false });
    expect((await store.count({})).n).toBe(exact(''));
    for (const s of [...STATUSES, 'closed']) expect((await store.count({ status: s as Status })).n).toBe(exact(' WHERE status = ?', s));
    for (const s of [...SOURCES, 'phone', 'none']) expect((await store.count({ source: s })).n).toBe(exact(' WHERE source = ?', s));
    expect((await store.count({ priority: 'high' })).n).toBe(exact(" WHERE priority = 'high'"));
    // Two filters, and search: counted from the rows.
    expect((await store.count({ status: 'solved', source: 'phone' })).n).toBe(exact(" WHERE status = 'solved' AND source = 'phone'"));
    expect(await store.count({ search: 't4' })).toEqual({ n: 1, capped: false }); // a whole word
    expect(await store.count({ search: 't4*' })).toEqual({ n: 2, capped: false }); // t4 and t40
  });

  it('a search with a filter pages through every match newest first, across shared stamps; a search counts up to 10,000', async () => {
    const d = tempDir();
    cleanups.push(() => d.remove());
    const store = new SqliteTicketStore(join(d.path, 'tickets.db'));
    cleanups.push(() => store.close());
    const n = 20_500;
    const all: Ticket[] = [];
    for (let i = 0; i < n; i++) {
      const stamp = new Date(Date.UTC(2026, 0, 1) + (i % 5000) * 1000).toISOString(); // shared stamps: ties by id
      all.push(ticket(i, stamp, { title: i % 7 === 0 ? 'printer jam' : 'printer fire', status: i % 2 ? 'open' : 'solved' }));
    }
    for (let i = 0; i < n; i += 5000) await store.merge(all.slice(i, i + 5000), (t) => ({ kind: 'store', ticket: t, asSent: false }));
    const expected = all.filter((t) => t.status === 'open');
    // Every page in newest-change-first order; ties (shared stamps) in the store's fixed order.
    const got: Ticket[] = [];
    let after: ListPosition | undefined;
    for (;;) {
      const page = await store.list({ search: 'printer', status: 'open' }, { limit: 500, after });
      got.push(...page.tickets);
      if (!page.more) break;
      after = page.next;
    }
    expect(got.map((t) => t.id).sort()).toEqual(expected.map((t) => t.id).sort());
    expect(got.every((t, i) => i === 0 || t.updated_at <= got[i - 1]!.updated_at)).toBe(true);
    expect(await store.count({ search: 'printer' })).toEqual({ n: SEARCH_COUNT_MAX, capped: true });
    expect(await store.count({ search: 'jam' })).toEqual({ n: all.filter((t) => t.title === 'printer jam').length, capped: false });
  });
});
