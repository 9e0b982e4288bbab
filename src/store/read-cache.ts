// Reads kept while the database has not changed: each entry holds the change mark it was read
// under (SqlDatabase.changeMark), and is served only while the mark is still the same, so a
// commit by any process or instance sharing the file, or a write of this one, is seen by the next
// read. Where the database gives no mark (PostgreSQL) nothing is kept. Bounded: emptied when
// full, so keys a client makes up cannot grow it.
import type { SqlDatabase } from './sql.js';

const DEFAULT_ENTRIES = 10_000;

export class ReadCache<V> {
  private readonly entries = new Map<string, { mark: number; value: V }>();

  constructor(
    private readonly sql: Pick<SqlDatabase, 'changeMark' | 'changeMarkNow'>,
    private readonly maxEntries = DEFAULT_ENTRIES,
  ) {}

  /**
   * `key`'s value as `read` gives it, or as it gave it under the same change mark. `keep` says
   * whether a value may be kept at all (one that depends on the clock as well must not).
   */
  /**
   * `key`'s value as get would answer it from what it kept, without waiting: undefined when
   * nothing is kept under the current mark, or the mark cannot be read now (get reads then).
   */
  peek(key: string): V | undefined {
    const mark = this.sql.changeMarkNow();
    if (mark === undefined) return undefined;
    const hit = this.entries.get(key);
    return hit !== undefined && hit.mark === mark ? hit.value : undefined;
  }

  async get(key: string, read: () => Promise<V>, keep: (value: V) => boolean): Promise<V> {
    const mark = await this.sql.changeMark();
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
