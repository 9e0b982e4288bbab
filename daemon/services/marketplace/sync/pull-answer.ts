// The answer of sync_pull written as JSON text by hand around the page's entries, which the
// database wrote as JSON already, each entry's `data` spliced in as the JSON text it was stored as
// (src/store/sync-sql.ts, storedPage). Parsing every entry's data only for fast-json-stringify to
// write it back cost a page of 500 entries 458-573 µs against 311-324 (bench/README.md, "Each
// row's own work", issue 37). The stored text is always JSON.stringify's own output (push and
// reseal write it), so the bytes are those the schema's serializer wrote; test/src/store/
// sync.test.ts holds the two side by side on both engines, and test/daemon/services/marketplace/
// sync/pull-answer.test.ts fails when the entry schema gains a field.
import type { StoredPullPage } from '../../../../src/store/sync.js';

/** `{"entries":[…],"cursor":…,"has_more":…}`, field for field as PullResponseSchema orders them. */
export function pullAnswer(page: StoredPullPage): string {
  return `{"entries":${page.entries_json},"cursor":${page.cursor},"has_more":${page.has_more}}`;
}
