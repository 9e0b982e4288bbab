// The running counts behind `count` in GET /tickets agree with counting the rows, through
// inserts, edits that move a ticket between statuses, and merges of peer copies.
import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteTicketStore } from '../../../src/store/tickets.js';
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
    expect(await store.count({})).toBe(31);
    expect(await store.count({})).toBe(exact(''));
    for (const s of [...STATUSES, 'closed']) expect(await store.count({ status: s as Status })).toBe(exact(' WHERE status = ?', s));
    for (const s of [...SOURCES, 'phone', 'none']) expect(await store.count({ source: s })).toBe(exact(' WHERE source = ?', s));
    expect(await store.count({ priority: 'high' })).toBe(exact(" WHERE priority = 'high'"));
    // Two filters, and search: counted from the rows.
    expect(await store.count({ status: 'solved', source: 'phone' })).toBe(exact(" WHERE status = 'solved' AND source = 'phone'"));
    expect(await store.count({ search: 't4' })).toBe(2);
  });
});
