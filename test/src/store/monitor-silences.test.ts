// Silences in the monitor store on both engines: added, listed while active and gone once
// expired (at a controlled now), removed by id, found for a target (by name or for every target),
// shared by two stores on one database, and capped: concurrent adds (from two PostgreSQL
// instances) never pass the maximum.
import { expect, it } from 'vitest';
import { newSilenceId } from '../../../src/store/monitor-silences.js';
import { ENGINES } from '../../helpers/engines.js';
import { sharedMonitorStores } from '../../helpers/monitor-stores.js';

const twoStores = sharedMonitorStores();

const T0 = Date.parse('2026-11-28T12:00:00.000Z');
const H = 3_600_000;

it('ids are sil_ and 12 URL-safe base32 characters, and differ', () => {
  const ids = new Set([...Array(1000)].map(() => newSilenceId()));
  expect(ids.size).toBe(1000);
  for (const id of ids) expect(id).toMatch(/^sil_[a-z2-7]{12}$/);
});

for (const engine of ENGINES) {
  it(`[${engine}] add, list while active, expire at its time, remove; another store on the database sees the same`, async () => {
    const [a, b] = await twoStores(engine);
    const api = await a.silences.add({ target: 'api', reason: 'deploy', expiresAt: T0 + 2 * H }, T0, 1000);
    const all = await a.silences.add({ reason: 'network work', expiresAt: T0 + H }, T0, 1000);
    if (!api.ok || !all.ok) throw new Error('refused');
    expect(api.silence).toEqual({ id: api.silence.id, target: 'api', reason: 'deploy', createdAt: T0, expiresAt: T0 + 2 * H });
    expect(all.silence.target).toBeUndefined();
    // Soonest to expire first; the other store reads the same rows.
    expect((await b.silences.list(T0 + 1)).map((s) => s.id)).toEqual([all.silence.id, api.silence.id]);
    // For a target: the one naming it or the one for all, the longest first; another target only by the "all" one.
    expect((await b.silences.activeFor('api', T0 + 1))?.id).toBe(api.silence.id);
    expect((await b.silences.activeFor('web', T0 + 1))?.id).toBe(all.silence.id);
    // At its expiry a silence is gone: not listed, holds nothing, cannot be removed.
    expect(await b.silences.activeFor('web', T0 + H)).toBeUndefined();
    expect((await b.silences.list(T0 + H)).map((s) => s.id)).toEqual([api.silence.id]);
    expect(await a.silences.get(all.silence.id, T0 + H)).toBeUndefined();
    expect(await a.silences.remove(all.silence.id, T0 + H)).toBe(false);
    // Removed by id on one store, gone on the other.
    expect(await b.silences.remove(api.silence.id, T0 + H)).toBe(true);
    expect(await b.silences.remove(api.silence.id, T0 + H)).toBe(false);
    expect(await a.silences.activeFor('api', T0 + H)).toBeUndefined();
    expect(await a.silences.list(T0 + H)).toEqual([]);
    // Listing only reads: the expired row stays until the prune deletes it.
    expect(await a.silences.prune(T0 + H)).toBe(1);
    expect(await a.silences.prune(T0 + H)).toBe(0);
  });

  it(`[${engine}] the cap holds under concurrent adds; expired ones free their places`, async () => {
    const [a, other] = await twoStores(engine);
    // On PostgreSQL from two stores (two cluster instances); one process owns a SQLite file, and two
    // handles in one process would wait on each other's write transaction with the event loop blocked.
    const b = engine === 'postgres' ? other : a;
    const results = await Promise.all([...Array(30)].map((_, i) => (i % 2 ? a : b).silences.add({ target: `t${i}`, reason: 'r', expiresAt: T0 + (i < 10 ? H : 2 * H) }, T0, 20)));
    expect(results.filter((r) => r.ok)).toHaveLength(20);
    expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.reason === 'full' && r.active === 20)).toBe(true);
    expect(await a.silences.list(T0)).toHaveLength(20);
    // Once some expire, adds are taken again (and the expired rows are gone).
    const later = T0 + H;
    const stillActive = (await a.silences.list(later)).length;
    expect(stillActive).toBeLessThan(20);
    expect((await b.silences.add({ reason: 'r', expiresAt: later + H }, later, 20)).ok).toBe(true);
    expect(await b.silences.prune(later + 2 * H)).toBe(stillActive + 1);
  });
}
