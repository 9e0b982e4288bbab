// RFC 3339 timestamps in UTC with fixed millisecond precision, so that string order is
// time order. `Date` alone is not enough: it rolls 02-31 over into March and formats year
// 10000 as `+010000-...`, which is not RFC 3339 and sorts below every real timestamp.
import type { Clock } from './clock.js';

/** The latest instant the four-digit-year form can write: 9999-12-31T23:59:59.999Z. */
export const MAX_TIMESTAMP_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
/** The earliest: 0000-01-01T00:00:00.000Z. */
export const MIN_TIMESTAMP_MS = -62_167_219_200_000;

const DAY_MS = 86_400_000;
/** The UTC day of the last timestamp written by way of Date: its first instant and `YYYY-MM-DDT`. */
let dayStart = Number.NaN;
let dayText = '';

const two = (n: number): string => (n < 10 ? `0${n}` : `${n}`);
const three = (n: number): string => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/**
 * The canonical form; a RangeError rather than ever writing a timestamp outside it. Most
 * timestamps fall on the day of the one before: its date is kept and only the time is written
 * (`toISOString` took ~1.4 µs, a lease renewal's answer and event each carry one; bench/README.md).
 */
export function formatTimestamp(ms: number): string {
  if (!Number.isFinite(ms) || ms < MIN_TIMESTAMP_MS || ms > MAX_TIMESTAMP_MS) throw new RangeError(`no RFC 3339 timestamp for ${ms} ms`);
  const t = Math.floor(ms);
  const r = t - dayStart;
  if (r >= 0 && r < DAY_MS) {
    return `${dayText}${two(Math.floor(r / 3_600_000))}:${two(Math.floor(r / 60_000) % 60)}:${two(Math.floor(r / 1000) % 60)}.${three(r % 1000)}Z`;
  }
  const text = new Date(t).toISOString();
  dayStart = t - (((t % DAY_MS) + DAY_MS) % DAY_MS);
  dayText = text.slice(0, 11);
  return text;
}

/** The injected clock's present instant in the canonical form: the `*_at` a record is written with. */
export function timestampNow(clock: Clock): string {
  return formatTimestamp(clock.now());
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** The number written by the `n` digits of `s` at `at`, or -1 when one of them is not a digit. */
function digits(s: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const d = s.charCodeAt(i) - 48;
    if (!(d >= 0 && d <= 9)) return -1;
    v = v * 10 + d;
  }
  return v;
}

/** Days from 1970-01-01 to a day of the proleptic Gregorian calendar (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * Milliseconds of a timestamp in the canonical form (`YYYY-MM-DDTHH:MM:SS.sssZ`, what
 * formatTimestamp writes); undefined when `s` is not in that form or names no instant. Every
 * stamp synced between nodes is canonical, and the general parser below (a regex and a `Date`
 * round trip) was 5 % of a full sync; this reads the digits in place and allocates nothing.
 */
export function parseCanonicalTimestamp(s: string): number | undefined {
  if (s.length !== 24 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(10) !== 84 || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58 || s.charCodeAt(19) !== 46 || s.charCodeAt(23) !== 90) return undefined;
  const year = digits(s, 0, 4);
  const month = digits(s, 5, 2);
  const day = digits(s, 8, 2);
  const hour = digits(s, 11, 2);
  const minute = digits(s, 14, 2);
  const second = digits(s, 17, 2);
  const ms = digits(s, 20, 3);
  // -1 (not a digit) fails the lower bounds; hour, minute, second and ms are never negative otherwise.
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 || ms < 0) return undefined;
  return daysFromCivil(year, month, day) * 86_400_000 + ((hour * 60 + minute) * 60 + second) * 1000 + ms;
}

/**
 * Milliseconds since the epoch of an RFC 3339 timestamp in any offset; undefined when it is not
 * one: a day the month lacks, 24:00, a leap second (JavaScript time has none), a bad offset, or
 * an instant outside the four-digit years.
 */
export function parseTimestamp(s: unknown): number | undefined {
  if (typeof s !== 'string') return undefined;
  // Every canonical instant lies within the four-digit years, so no range check is needed.
  const canonical = parseCanonicalTimestamp(s);
  if (canonical !== undefined) return canonical;
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
