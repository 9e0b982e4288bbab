// The ticket store's order key (rowid = ms(updated_at) * 32768 + seq), which lists, pulls and
// FTS5 share: tickets sharing one stamp get distinct seqs, an edit moves a ticket and its
// full-text entry together, and the FTS5 index stays equal to the rows through every write.
import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteTicketStore } from '../../../src/store/tickets.js';
import type { Ticket } from '../../../src/schemas/tickets.js';
import { tempDir } from '../../helpers/tmp.js';
import { listAll } from '../../helpers/list-all.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function ticket(i: number, stamp: string, fields: Partial<Ticket> = {}): Ticket {
  const id = `e0000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  return { id, short_id: id.slice(0, 8), title: `ticket number${i}`, description: 'shared words', status: 'open', priority: 'low', channel: 'api', source: 'mail', requester: null, assignee: null, tags: [], created_at: stamp, updated_at: stamp, updated_by: 'n', ...fields };
}

function open(): { store: SqliteTicketStore; raw: Database.Database } {
  const d = tempDir();
  cleanups.push(() => d.remove());
  const file = join(d.path, 'tickets.db');
  const store = new SqliteTicketStore(file);
  cleanups.push(() => store.close());
  const raw = new Database(file, { readonly: true });
  cleanups.push(() => void raw.close());
  return { store, raw };
}

const take = (t: Ticket): { kind: 'store'; ticket: Ticket; asSent: boolean } => ({ kind: 'store', ticket: t, asSent: false });

const walk = (store: SqliteTicketStore, search?: string): Promise<Ticket[]> => listAll(store, search ? { search } : {}, 97);

describe('ticket order key', () => {
  it('2,000 tickets on one millisecond get distinct keys (colliding hashes take the next seq); pages and pulls hold each once', async () => {
    const { store, raw } = open();
    const stamp = '2026-03-01T10:00:00.123Z';
    const all = Array.from({ length: 2000 }, (_, i) => ticket(i, stamp));
    await store.merge(all.slice(0, 1000), take);
    await Promise.all(all.slice(1000).map((t) => store.insert(t)));
    // ~60 of 2,000 hashes collide in 32,768 seqs, so the probe ran; every key is in the stamp's millisecond.
    const keys = raw.prepare('SELECT rowid >> 15 AS ms, rowid & 32767 AS seq FROM tickets').all() as { ms: number; seq: number }[];
    expect(new Set(keys.map((k) => k.seq)).size).toBe(2000);
    expect(new Set(keys.map((k) => k.ms))).toEqual(new Set([Date.parse(stamp)]));
    const listed = await walk(store);
    expect(listed.map((t) => t.id).sort()).toEqual(all.map((t) => t.id).sort());
    const searched = await walk(store, 'shared');
    expect(searched.map((t) => t.id)).toEqual(listed.map((t) => t.id));
    // One group: a pull page never splits it, however small the limit.
    const pull = await store.changedSince('2026-03-01T10:00:00.122Z', { limit: 10 });
    expect(pull.tickets.length).toBe(2000);
    expect(pull.more).toBe(false);
    expect((await store.changedSince(stamp, { limit: 10 })).tickets).toEqual([]);
  });

  it('an edit moves the ticket and its full-text entry to the new stamp; old words are gone, unchanged words still found', async () => {
    const { store, raw } = open();
    for (let i = 0; i < 5; i++) await store.insert(ticket(i, `2026-03-01T10:00:0${i}.000Z`));
    // Status only: same text, new key.
    await store.update(ticket(1, '').id, (t) => ({ ...t, status: 'solved', updated_at: '2026-03-02T00:00:00.000Z' }));
    // New title.
    await store.update(ticket(3, '').id, (t) => ({ ...t, title: 'renamed printer', updated_at: '2026-03-03T00:00:00.000Z' }));
    // Same stamp, new text (a merge may store a join with the stored stamp): keeps its key.
    await store.merge([ticket(0, '2026-03-01T10:00:00.000Z', { title: 'scanner number0' })], take);
    expect((await walk(store)).map((t) => t.title)).toEqual(['renamed printer', 'ticket number1', 'ticket number4', 'ticket number2', 'scanner number0']);
    expect((await walk(store, 'shared')).map((t) => t.title)).toEqual(['renamed printer', 'ticket number1', 'ticket number4', 'ticket number2', 'scanner number0']);
    expect(await walk(store, 'number3')).toEqual([]);
    expect((await walk(store, 'printer')).map((t) => t.title)).toEqual(['renamed printer']);
    expect((await walk(store, 'scanner')).map((t) => t.title)).toEqual(['scanner number0']);
    expect((await walk(store, 'number1')).map((t) => t.status)).toEqual(['solved']);
    // FTS5's own check: its index matches the rows (fails on a stale or missing entry).
    expect(() => raw.prepare("INSERT INTO tickets_fts (tickets_fts, rank) VALUES ('integrity-check', 1)").run()).toThrow(/readonly|read-only/i);
    const rw = new Database(raw.name);
    cleanups.push(() => void rw.close());
    expect(() => rw.prepare("INSERT INTO tickets_fts (tickets_fts, rank) VALUES ('integrity-check', 1)").run()).not.toThrow();
  });

  it('newestUpdate and pulls read the key: greatest stamp at or before a bound, strictly after a cursor', async () => {
    const { store } = open();
    await store.merge(['2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.001Z', '2026-01-01T00:00:00.001Z', '2026-06-01T00:00:00.000Z'].map((s, i) => ticket(i, s)), take);
    expect(await store.newestUpdate('2026-01-01T00:00:00.001Z')).toBe('2026-01-01T00:00:00.001Z');
    expect(await store.newestUpdate('2026-05-31T23:59:59.999Z')).toBe('2026-01-01T00:00:00.001Z');
    expect(await store.newestUpdate('2025-12-31T23:59:59.999Z')).toBeUndefined();
    expect((await store.changedSince('2026-01-01T00:00:00.000Z', { limit: 1 })).tickets.map((t) => t.updated_at)).toEqual(['2026-01-01T00:00:00.001Z', '2026-01-01T00:00:00.001Z']);
    expect((await store.changedSince('1969-01-01T00:00:00.000Z', { limit: 100 })).tickets).toHaveLength(4);
  });
});
