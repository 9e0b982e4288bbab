// ReadCache (src/store/read-cache.ts) against a mark it is handed: a read is served again only
// under the mark it was taken at, never when `keep` refuses it or the database gives no mark, and
// made-up keys cannot grow it past its bound (it is emptied when full).
import { expect, it } from 'vitest';
import { ReadCache } from '../../../src/store/read-cache.js';

function marked(): { db: { changeMark(): Promise<number | undefined>; changeMarkNow(): number | undefined }; set(m: number | undefined): void } {
  let mark: number | undefined = 1;
  return { db: { changeMark: async () => mark, changeMarkNow: () => mark }, set: (m) => (mark = m) };
}

/** A cache on a mark the test sets, and a read that answers v1, v2, … one per call. */
function counting(): { m: ReturnType<typeof marked>; cache: ReadCache<string>; read: () => Promise<string> } {
  const m = marked();
  let reads = 0;
  return { m, cache: new ReadCache<string>(m.db), read: async () => `v${++reads}` };
}

it('serves a read again only while the mark is unchanged', async () => {
  const { m, cache, read } = counting();
  expect(await cache.get('k', read, () => true)).toBe('v1');
  expect(await cache.get('k', read, () => true)).toBe('v1');
  m.set(2);
  expect(await cache.get('k', read, () => true)).toBe('v2');
  expect(await cache.get('other', read, () => true)).toBe('v3');
  expect(await cache.get('k', read, () => true)).toBe('v2');
});

it('peek answers what get would serve from what it kept, and nothing it would read', async () => {
  const { m, cache, read } = counting();
  expect(cache.peek('k')).toBeUndefined();
  expect(await cache.get('k', read, () => true)).toBe('v1');
  expect(cache.peek('k')).toBe('v1');
  expect(cache.peek('other')).toBeUndefined();
  m.set(2);
  expect(cache.peek('k')).toBeUndefined();
  expect(await cache.get('k', read, () => false)).toBe('v2');
  expect(cache.peek('k')).toBeUndefined();
  m.set(undefined);
  expect(await cache.get('k', read, () => true)).toBe('v3');
  expect(cache.peek('k')).toBeUndefined();
});

it('keeps nothing that keep refuses, nor anything without a mark', async () => {
  const { m, cache, read } = counting();
  expect(await cache.get('k', read, () => false)).toBe('v1');
  expect(await cache.get('k', read, () => false)).toBe('v2');
  m.set(undefined);
  expect(await cache.get('j', read, () => true)).toBe('v3');
  expect(await cache.get('j', read, () => true)).toBe('v4');
});

it('a read that fails is not kept', async () => {
  const cache = new ReadCache<string>(marked().db);
  await expect(cache.get('k', () => Promise.reject(new Error('database away')), () => true)).rejects.toThrow('database away');
  expect(await cache.get('k', async () => 'fresh', () => true)).toBe('fresh');
});

it('made-up keys cannot grow it past its bound: it is emptied when full', async () => {
  const cache = new ReadCache<number>(marked().db, 100);
  let reads = 0;
  const read = async () => ++reads;
  for (let i = 0; i < 1000; i++) await cache.get(`made-up-${i}`, read, () => true);
  const size = (cache as unknown as { entries: Map<string, unknown> }).entries.size;
  expect(size).toBeGreaterThan(0);
  expect(size).toBeLessThanOrEqual(100);
  // The last key read is still served from the cache; the first has been dropped.
  expect(await cache.get('made-up-999', read, () => true)).toBe(1000);
  expect(await cache.get('made-up-0', read, () => true)).toBe(1001);
});

it('the get after a missed peek reads under the mark the peek read, not reading it again', async () => {
  const m = marked();
  let marks = 0;
  const db = { changeMark: async () => (marks++, m.db.changeMark()), changeMarkNow: () => (marks++, m.db.changeMarkNow()) };
  const cache = new ReadCache<string>(db);
  let reads = 0;
  const read = async () => `v${++reads}`;
  expect(cache.peek('k')).toBeUndefined();
  expect(await cache.get('k', read, () => true)).toBe('v1');
  expect(marks).toBe(1);
  // Once: a later get of the key reads the mark again, as does a get of another key.
  expect(cache.peek('j')).toBeUndefined();
  expect(await cache.get('k', read, () => true)).toBe('v1');
  expect(await cache.get('j', read, () => true)).toBe('v2');
  expect(marks).toBe(4);
});

it('a change between a missed peek and its get is never served from under the older mark', async () => {
  const { m, cache, read } = counting();
  expect(cache.peek('k')).toBeUndefined();
  m.set(2);
  // Read under mark 1 (taken before the read, as get's own would be): kept under 1, served under 2 never.
  expect(await cache.get('k', read, () => true)).toBe('v1');
  expect(cache.peek('k')).toBeUndefined();
  expect(await cache.get('k', read, () => true)).toBe('v2');
  expect(cache.peek('k')).toBe('v2');
});
