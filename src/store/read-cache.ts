// Reads kept while the database has not changed: each entry holds the change mark it was read
// under (SqlDatabase.changeMark), and is served only while the mark is still the same, so a
// commit by any process or instance sharing the file, or a write of this one, is seen by the next
// read. Where the database gives no mark (PostgreSQL) nothing is kept. Bounded: emptied when
// full, so keys a client makes up cannot grow it.
import type { SqlDatabase } from './sql.js';

const DEFAULT_ENTRIES = 10_000;

export class ReadCache<V> {
  private readonly entries = new Map<string, { mark: number; value: V }>();
  /**
   * The key a peek last missed and the mark it read: the get that follows a miss (the caller's
   * slower path) reads under that mark rather than reading it again, which on SQLite is a read
   * transaction of its own (4 µs). Any earlier mark is safe: marks only grow, so a value kept
   * under one that has since moved is read again, never served.
   */
  private missed: { key: string; mark: number } | undefined;

  constructor(
    private readonly sql: Pick<SqlDatabase, 'changeMark' | 'changeMarkNow'>,
    private readonly maxEntries = DEFAULT_ENTRIES,
  ) {}

  /**
   * `key`'s value as get would answer it from what it kept, without waiting: undefined when
   * nothing is kept under the current mark, or the mark cannot be read now (get reads then).
   */
  peek(key: string): V | undefined {
    const mark = this.sql.changeMarkNow();
    if (mark === undefined) return undefined;
    const hit = this.entries.get(key);
    if (hit !== undefined && hit.mark === mark) return hit.value;
    this.missed = { key, mark };
    return undefined;
  }

  /**
   * `key`'s value as `read` gives it, or as it gave it under the same change mark. `keep` says
   * whether a value may be kept at all (one that depends on the clock as well must not).
   */
  async get(key: string, read: () => Promise<V>, keep: (value: V) => boolean): Promise<V> {
    const missed = this.missed;
    this.missed = undefined;
    const mark = missed !== undefined && missed.key === key ? missed.mark : await this.sql.changeMark();
    if (mark === undefined) return read();
    const hit = this.entries.get(key);
    if (hit !== undefined && hit.mark === mark) return hit.value;
    const value = await read();
    // Kept under the mark taken before the read: a change made in between moves the mark, so
    // the next get does not serve it.
    if (keep(value)) {
      if (this.entries.size >= this.maxEntries) this.entries.clear();
      this.entries.set(key, { mark, value });
    }
    return value;
  }
}
