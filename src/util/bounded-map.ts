// The bound of the memos kept in insertion order (verified tokens, callers known to exist, tickets
// read): a Map iterates in insertion order, so its first key is the oldest, or the least recently
// used where a use deletes and sets the key again.

/** Drops the oldest entries of `map` until it holds at most `max`. */
export function dropOldest<K, V>(map: Map<K, V>, max: number): void {
  while (map.size > max) map.delete(map.keys().next().value as K);
}
