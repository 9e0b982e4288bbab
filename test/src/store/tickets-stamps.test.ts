// The ticket store keeps one stamp form (canonical RFC 3339 UTC, so text order is instant
// order for `since`), refuses any other, and repairs the `+010000-...` stamps and cursors an
// earlier version wrote once its hybrid clock had followed a year-9999 stamp.
import { afterEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { SqliteTicketStore } from '../../../src/store/tickets.js';
import type { Ticket } from '../../../src/schemas/tickets.js';
import { tempDir } from '../../helpers/tmp.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function file(): string {
  const d = tempDir();
  cleanups.push(() => d.remove());
  return join(d.path, 'tickets.db');
}

function ticket(n: number, updated_at: string): Ticket {
  const id = `c0000000-0000-4000-8000-00000000000${n}`;
  return { id, short_id: id.slice(0, 8), title: `t${n}`, description: '', status: 'open', priority: 'normal', channel: 'api', source: 'manual', requester: null, assignee: null, tags: [], created_at: updated_at, updated_at, updated_by: 'n' };
}

const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('ticket store stamps', () => {
  it('refuses to write a stamp that is not canonical, so `since` can compare text', async () => {
    const store = new SqliteTicketStore(file());
    cleanups.push(() => store.close());
    await expect(store.insert(ticket(1, '+010000-01-01T00:00:00.000Z'))).rejects.toThrow(/canonical/);
    await expect(store.insert(ticket(2, '2026-01-01T00:00:00Z'))).rejects.toThrow(/canonical/);
    await expect(store.setCursor('http://p', '+010000-01-01T00:00:00.000Z')).rejects.toThrow(/canonical/);
    const merged = await store.merge([ticket(3, '+010000-01-01T00:00:00.000Z'), ticket(4, '2026-01-01T00:00:00.000Z')], (t) => ({ kind: 'store', ticket: t, asSent: false }));
    expect(merged).toEqual({ accepted: 1, rejected: 1 });
    expect(((await store.changedSince('1970-01-01T00:00:00.000Z', { limit: 1000 })).tickets as Ticket[]).map((t) => t.title)).toEqual(['t4']);
  });

  it('newestUpdate ignores stamps beyond the bound it is given', async () => {
    const store = new SqliteTicketStore(file());
    cleanups.push(() => store.close());
    await store.insert(ticket(1, '2026-01-01T00:00:00.000Z'));
    await store.insert(ticket(2, '9999-12-31T23:59:59.999Z'));
    expect(await store.newestUpdate('2026-06-01T00:00:00.000Z')).toBe('2026-01-01T00:00:00.000Z');
    expect(await store.newestUpdate('9999-12-31T23:59:59.999Z')).toBe('9999-12-31T23:59:59.999Z');
  });

  it('opening a database an earlier version poisoned re-stamps +010000 edits now and drops such cursors', async () => {
    const f = file();
    let store = new SqliteTicketStore(f);
    await store.insert(ticket(1, '2026-01-01T00:00:00.000Z'));
    await store.insert(ticket(2, '2026-01-02T00:00:00.000Z'));
    await store.setCursor('http://good', '2026-01-01T00:00:00.000Z');
    await store.close();
    // What the earlier version left: its schema version, an edit stamped past year 9999.
    const raw = new Database(f);
    raw.prepare("UPDATE schema_migrations SET version = 1 WHERE component = 'tickets'").run();
    raw.exec(`DROP INDEX tickets_status; DROP INDEX tickets_source;
      CREATE INDEX tickets_updated_at ON tickets(updated_at);
      CREATE TRIGGER tickets_ai AFTER INSERT ON tickets BEGIN
        INSERT INTO tickets_fts(rowid, title, description) VALUES (new.rowid, new.title, new.description);
      END;
      CREATE TRIGGER tickets_au AFTER UPDATE OF title, description ON tickets BEGIN
        INSERT INTO tickets_fts(tickets_fts, rowid, title, description) VALUES ('delete', old.rowid, old.title, old.description);
        INSERT INTO tickets_fts(rowid, title, description) VALUES (new.rowid, new.title, new.description);
      END;
      ALTER TABLE tickets DROP COLUMN comment_count; ALTER TABLE tickets DROP COLUMN history_count;
      DROP TABLE ticket_comments; DROP TABLE ticket_history; DROP TABLE ticket_tombstones; DROP TABLE tombstone_seen;
      ALTER TABLE tickets DROP COLUMN field_stamps; ALTER TABLE tickets DROP COLUMN got_from; DROP TABLE ticket_counts;
      DROP TRIGGER tickets_count_ai; DROP TRIGGER tickets_count_ad; DROP TRIGGER tickets_count_au_status;
      DROP TRIGGER tickets_count_au_priority; DROP TRIGGER tickets_count_au_channel; DROP TRIGGER tickets_count_au_source;`);
    raw.prepare("UPDATE tickets SET updated_at = '+010000-01-01T00:00:00.001Z', created_at = '+010000-01-01T00:00:00.000Z', title = 'poisoned' WHERE id = ?").run(ticket(2, '').id);
    raw.prepare("INSERT INTO peer_cursors (peer, cursor) VALUES ('http://bad', '+010000-01-01T00:00:00.001Z')").run();
    raw.close();

    const before = Date.now();
    store = new SqliteTicketStore(f);
    cleanups.push(() => store.close());
    const repaired = ((await store.changedSince('2026-01-01T00:00:00.000Z', { limit: 1000 })).tickets as Ticket[]).find((t) => t.title === 'poisoned')!;
    expect(repaired.updated_at).toMatch(CANONICAL);
    expect(Date.parse(repaired.updated_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(repaired.updated_at)).toBeLessThan(before + 60_000);
    expect(repaired.created_at).toBe(repaired.updated_at);
    // Untouched: the canonical ticket and cursor.
    expect(((await store.changedSince('1970-01-01T00:00:00.000Z', { limit: 1000 })).tickets as Ticket[]).map((t) => [t.title, t.updated_at])).toEqual([
      ['t1', '2026-01-01T00:00:00.000Z'],
      ['poisoned', repaired.updated_at],
    ]);
    expect(await store.getCursor('http://good')).toBe('2026-01-01T00:00:00.000Z');
    expect(await store.getCursor('http://bad')).toBeUndefined();
    // Re-keyed in newest-change order, and the rebuilt full-text index finds the repaired edit.
    expect((await store.list({}, { limit: 10 })).tickets.map((t) => t.title)).toEqual(['poisoned', 't1']);
    expect((await store.list({ search: 'poisoned' }, { limit: 10 })).tickets.map((t) => t.updated_at)).toEqual([repaired.updated_at]);
  });
});
