// Ticket stamps (`updated_at`, `created_at`, replication cursors): a strict RFC 3339 parser, the one
// canonical form `YYYY-MM-DDTHH:MM:SS.sssZ`, and comparison as instants, never as strings.
// `Date` alone is not enough: it rolls 02-31 over into March and formats year 10000 as
// `+010000-...`, which is not RFC 3339 and sorts below every real stamp.
import { formatTimestamp, MAX_TIMESTAMP_MS, parseCanonicalTimestamp, parseTimestamp } from '../../../src/util/time.js';

/** The earliest stamp: the replication cursor's starting point, so nothing may sort before it. */
export const MIN_STAMP_MS = 0;
/** The latest instant the canonical four-digit-year form can write. */
export const MAX_STAMP_MS = MAX_TIMESTAMP_MS;
/**
 * How far ahead of this node's clock a peer's stamp may be before the copy is refused
 * (CockroachDB's max-offset idea). Larger than any honest NTP drift, far smaller than the
 * damage a stamp in year 9999 does: it would win every conflict and drag the clock along.
 */
export const DEFAULT_MAX_SKEW_MS = 5 * 60 * 1000;

/** Milliseconds since the epoch, or undefined unless `s` is an RFC 3339 stamp in range. */
export function parseStamp(s: unknown): number | undefined {
  const t = parseTimestamp(s);
  return t !== undefined && t >= MIN_STAMP_MS && t <= MAX_STAMP_MS ? t : undefined;
}

/** The canonical form; a RangeError rather than ever writing a stamp outside it. */
export function formatStamp(ms: number): string {
  if (!Number.isInteger(ms) || ms < MIN_STAMP_MS) throw new RangeError(`no RFC 3339 stamp for ${ms} ms`);
  return formatTimestamp(ms);
}

/** Any RFC 3339 stamp in range, in canonical form; undefined otherwise. */
export function normalizeStamp(s: unknown): string | undefined {
  // A canonical stamp formats back to itself: no need for a `Date` round trip (every replicated
  // stamp passes here, three per ticket copy).
  if (typeof s === 'string') {
    const canonical = parseCanonicalTimestamp(s);
    if (canonical !== undefined) return canonical >= MIN_STAMP_MS ? s : undefined;
  }
  const ms = parseStamp(s);
  return ms === undefined ? undefined : formatStamp(ms);
}

/**
 * Orders two stamps as instants. A stamp that does not parse (one written by an older
 * version, `+010000-...`) sorts below every valid one, so a valid copy always replaces it.
 */
export function compareStamps(a: string, b: string): number {
  const x = parseStamp(a) ?? -1;
  const y = parseStamp(b) ?? -1;
  return x === y ? 0 : x < y ? -1 : 1;
}

/** How far `stamp` lies ahead of `now`, in ms (negative when it is in the past). */
export function aheadOf(stamp: string, now: number): number {
  return (parseStamp(stamp) ?? MIN_STAMP_MS) - now;
}

/** `ms` before `stamp`, not before the epoch. */
export function stampMinus(stamp: string, ms: number): string {
  const t = parseStamp(stamp) ?? 0;
  return formatStamp(Math.max(0, t - ms));
}

/**
 * Where a sync read starts that would re-read from `since` (a cursor less the overlap), now that
 * `oldest` tells what arrived late since the reader's last round (late-arrivals.ts): after
 * `cursor` when nothing did (null), else just before the oldest such stamp, never earlier than
 * `since`; from `since` itself when that is not known (undefined).
 */
export function narrowedSince(since: string, cursor: string, oldest: string | null | undefined): string {
  if (oldest === undefined || compareStamps(cursor, since) < 0) return since;
  const start = oldest === null || compareStamps(oldest, cursor) > 0 ? cursor : stampMinus(oldest, 1);
  return compareStamps(start, since) > 0 ? start : since;
}
