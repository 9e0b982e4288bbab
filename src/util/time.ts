// RFC 3339 timestamps in UTC with fixed millisecond precision, so that string order is
// time order (sync cursors compare timestamps as strings).

export function formatTimestamp(ms: number): string {
  return new Date(ms).toISOString();
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Parses an RFC 3339 timestamp in any offset; undefined when it is not one. */
export function parseTimestamp(s: string): number | undefined {
  if (!RFC3339.test(s)) return undefined;
  const ms = Date.parse(s.replace(' ', 'T'));
  return Number.isFinite(ms) ? ms : undefined;
}

/** Normalises any RFC 3339 timestamp to the canonical UTC millisecond form. */
export function normalizeTimestamp(s: string): string | undefined {
  const ms = parseTimestamp(s);
  return ms === undefined ? undefined : formatTimestamp(ms);
}
