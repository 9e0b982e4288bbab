// dropOldest (src/util/bounded-map.ts): the first keys in insertion order go, the newest stay.
import { expect, it } from 'vitest';
import { dropOldest } from '../../../src/util/bounded-map.js';

it('drops the oldest keys until the map holds at most max, and leaves a smaller map alone', () => {
  const m = new Map([['a', 1], ['b', 2], ['c', 3], ['d', 4]]);
  dropOldest(m, 4);
  expect([...m.keys()]).toEqual(['a', 'b', 'c', 'd']);
  // A use re-inserts its key: it is then the newest.
  m.delete('a');
  m.set('a', 1);
  dropOldest(m, 2);
  expect([...m.keys()]).toEqual(['d', 'a']);
  dropOldest(m, 0);
  expect(m.size).toBe(0);
});
