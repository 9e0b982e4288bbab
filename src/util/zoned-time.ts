// Wall-clock time in IANA time zones with Intl alone (no tz database of our own): a zone's
// offset at an instant, and the instant of a local time, DST gaps and overlaps included.

const DAY_MS = 86_400_000;

// Creating an Intl.DateTimeFormat costs far more than using one, so one per zone for the process.
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, f);
  }
  return f;
}

/** The canonical name of an IANA time zone (`europe/berlin` → `Europe/Berlin`), or undefined if Intl does not know it. */
export function canonicalZone(zone: string): string | undefined {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

/** The zone's offset from UTC at instant `ms`, in ms (local wall clock minus UTC). */
function zoneOffset(zone: string, ms: number): number {
  if (zone === 'UTC') return 0;
  // `format` is a few times cheaper than `formatToParts`; en-US with h23 reads "M/D/YYYY, HH:MM:SS".
  const m = /(\d+)\D+(\d+)\D+(\d+)\D+(\d+)\D+(\d+)\D+(\d+)/.exec(formatter(zone).format(ms))!;
  const wall = Date.UTC(Number(m[3]), Number(m[1]) - 1, Number(m[2]), Number(m[4]), Number(m[5]), Number(m[6]));
  return wall - Math.floor(ms / 1000) * 1000;
}

/** The wall-clock time in `zone` at instant `ms`, written as if it were UTC ("local ms"). */
export function epochToLocal(zone: string, ms: number): number {
  return ms + zoneOffset(zone, ms);
}

/** localToEpoch's answers per zone; a zone's map is emptied when it reaches MEMO_LIMIT entries. */
const MEMO_LIMIT = 4096;
const resolved = new Map<string, Map<number, number>>();

/**
 * The instant of a wall-clock time in `zone` (given as local ms). A time that does not exist
 * (spring-forward gap) moves forward by the gap; an ambiguous one (fall-back) is the earlier
 * instant. Assumes at most one offset change within a day of the time, as in every real zone.
 */
export function localToEpoch(zone: string, local: number): number {
  if (zone === 'UTC') return local;
  // activeAt asks for the same few local start times check after check: remember them.
  let memo = resolved.get(zone);
  if (!memo) resolved.set(zone, (memo = new Map()));
  let ms = memo.get(local);
  if (ms === undefined) {
    if (memo.size >= MEMO_LIMIT) memo.clear();
    ms = resolveLocal(zone, local);
    memo.set(local, ms);
  }
  return ms;
}

function resolveLocal(zone: string, local: number): number {
  const before = zoneOffset(zone, local - DAY_MS);
  const after = zoneOffset(zone, local + DAY_MS);
  if (before === after) return local - before;
  const early = local - before; // valid if the old offset still holds there
  const late = local - after; // valid if the new offset already holds there
  const earlyOk = zoneOffset(zone, early) === before;
  const lateOk = zoneOffset(zone, late) === after;
  if (earlyOk && lateOk) return Math.min(early, late); // fall-back: the first of the two
  if (earlyOk) return early;
  if (lateOk) return late;
  // In the gap: read with the offset before it, which lands the gap's length later on the clock.
  return early;
}
