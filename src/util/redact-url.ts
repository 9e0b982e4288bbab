// A database URL as people may read it (logs, error lines, a backup's summary): its password masked.

/** The URL with its password shown as `***`; an unparsable one is named, never echoed. */
export function redactDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}
