// RFC 3339 timestamps in UTC with fixed millisecond precision, so that string order is
// time order. `Date` alone is not enough: it rolls 02-31 over into March and formats year
// 10000 as `+010000-...`, which is not RFC 3339 and sorts below every real timestamp.

/** The latest instant the four-digit-year form can write: 9999-12-31T23:59:59.999Z. */
export const MAX_TIMESTAMP_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
/** The earliest: 0000-01-01T00:00:00.000Z. */
export const MIN_TIMESTAMP_MS = -62_167_219_200_000;

/** The canonical form; a RangeError rather than ever writing a timestamp outside it. */
export function formatTimestamp(ms: number): string {
  if (!Number.isFinite(ms) || ms < MIN_TIMESTAMP_MS || ms > MAX_TIMESTAMP_MS) throw new RangeError(`no RFC 3339 timestamp for ${ms} ms`);
  return new Date(Math.floor(ms)).toISOString();
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/**
 * Milliseconds since the epoch of an RFC 3339 timestamp in any offset; undefined when it is not
 * one: a day the month lacks, 24:00, a leap second (JavaScript time has none), a bad offset, or
 * an instant outside the four-digit years.
 */
export function parseTimestamp(s: unknown): number | undefined {
  if (typeof s !== 'string') return undefined;
  const m = RFC3339.exec(s);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offset = 0;
  if (m[9] !== undefined) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return undefined;
    offset = (m[9] === '-' ? -1 : 1) * (oh * 60 + om) * 60_000;
  }
  const ms = Math.floor(Number(`0${m[7] ?? ''}`) * 1000);
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, ms);
  if (d.getUTCFullYear() !== year || d.getUTCMonth() !== month - 1 || d.getUTCDate() !== day) return undefined;
  const t = d.getTime() - offset;
  return t >= MIN_TIMESTAMP_MS && t <= MAX_TIMESTAMP_MS ? t : undefined;
}
