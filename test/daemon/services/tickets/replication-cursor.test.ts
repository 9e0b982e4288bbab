// The saved pull cursor after a split page (issue 28): a page that may have ended inside a group
// of tickets sharing one stamp leaves the cursor a millisecond before that stamp, so a node that
// stops between two pages of the group reads the whole group again on its next round instead of
// skipping its rest (pulls take stamps strictly after the cursor).
import { describe, expect, it } from 'vitest';
import { cursorAfterPage } from '../../../../daemon/services/tickets/replication.js';

const G = '2026-01-01T00:00:03.000Z';

describe('cursorAfterPage', () => {
  it('a page that ends where the next starts inside its last stamp: a millisecond before that stamp', () => {
    expect(cursorAfterPage(G, { updated_at: G, seq: 17 })).toBe('2026-01-01T00:00:02.999Z');
  });

  it('the last page, a page of a spec peer (no next) or an empty page: its newest stamp, or nothing', () => {
    expect(cursorAfterPage(G, undefined)).toBe(G);
    expect(cursorAfterPage(undefined, undefined)).toBeUndefined();
    expect(cursorAfterPage(undefined, { updated_at: G, seq: 0 })).toBeUndefined();
  });

  it('a next position after every stamp stored (no ticket of that stamp stored yet): the newest stored', () => {
    expect(cursorAfterPage('2026-01-01T00:00:02.000Z', { updated_at: G, seq: 0 })).toBe('2026-01-01T00:00:02.000Z');
  });

  it('never goes before the epoch', () => {
    expect(cursorAfterPage('1970-01-01T00:00:00.000Z', { updated_at: '1970-01-01T00:00:00.000Z', seq: 3 })).toBe('1970-01-01T00:00:00.000Z');
  });
});
