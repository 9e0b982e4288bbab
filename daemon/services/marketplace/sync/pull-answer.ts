// The answer of sync_pull, for its route and its lane alike (pullText): the page read, and written
// as JSON text by hand around its entries, which the database wrote as JSON already, each entry's
// `data` spliced in as the JSON text it was stored as (src/store/sync-sql.ts, storedPage). Parsing
// every entry's data only for fast-json-stringify to write it back cost a page of 500 entries
// 458-573 µs against 311-324 (bench/README.md, "Each row's own work", issue 37). The stored text
// is always JSON.stringify's own output (push and reseal write it), so the bytes are those the
// schema's serializer wrote; test/src/store/sync.test.ts holds the two side by side on both
// engines, and test/daemon/services/marketplace/sync/pull-answer.test.ts fails when the entry
// schema gains a field.
import type { Owner, StoredPullPage, SyncStore } from '../../../../src/store/sync.js';
import type { Clock } from '../../../../src/util/clock.js';
import { pullStored } from './changelog.js';
import type { DeviceSightings } from './device-sightings.js';

/** A page's size when the request names none. */
export const DEFAULT_PULL_LIMIT = 500;

/** What a pull asks: the schema's fields (PullRequestSchema). */
export interface PullFields {
  cursor: number;
  limit?: number | undefined;
  deviceId?: string | undefined;
}

/** `{"entries":[…],"cursor":…,"has_more":…}`, field for field as PullResponseSchema orders them. */
export function pullAnswer(page: StoredPullPage): string {
  return `{"entries":${page.entries_json},"cursor":${page.cursor},"has_more":${page.has_more}}`;
}

/** What sync_pull's answer needs besides the request, for the route and its lane alike. */
export interface PullDeps {
  store: SyncStore;
  clock: Clock;
  /** The service's one record of the devices' sightings written (the route's and the lane's). */
  sightings: DeviceSightings;
}

/** sync_pull's answer, for the route and its lane alike: the page after the cursor, the pulling device (if named) seen now. */
export async function pullText(deps: PullDeps, o: Owner, f: PullFields): Promise<string> {
  const device = f.deviceId === undefined ? undefined : { id: f.deviceId, nowMs: deps.clock.now() };
  return pullAnswer(await pullStored(deps.store, o, { cursor: f.cursor, limit: f.limit ?? DEFAULT_PULL_LIMIT, device }, deps.sightings));
}
