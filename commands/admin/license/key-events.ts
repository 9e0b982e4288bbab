// keyEventsRun: `mkt admin key events KEY|ID|- [--since 24h|RFC3339]` — a key's audit trail,
// oldest first, with RFC 3339 times and the machine; a repeated kind (lease renewals, refused
// verifications) is one line per hour with its count.
import { NegativeError, UsageError } from '../../../src/cli/errors.js';
import { readAll } from '../../../src/cli/io.js';
import { printJson, printTable } from '../../../src/cli/output.js';
import { formatTimestamp, parseTimestamp } from '../../../src/util/time.js';
import { withAuditAdmin, type AdminFlags } from '../webhook/shared.js';

export interface KeyEventsOptions extends AdminFlags {
  key: string;
  since?: string;
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--since`: a look-back such as 90m, 24h, 30d, or an RFC 3339 time; ms since the epoch. */
export function parseSince(raw: string | undefined, nowMs: number): number {
  if (raw === undefined) return 0;
  const m = /^(\d{1,9})([smhd])$/.exec(raw.trim());
  if (m) return nowMs - Number(m[1]) * UNIT_MS[m[2]!]!;
  const at = parseTimestamp(raw.trim());
  if (at === undefined) throw new UsageError(`--since must be a look-back such as 24h or 30d, or an RFC 3339 time, not ${JSON.stringify(raw)}`);
  return at;
}

export async function keyEventsRun(opts: KeyEventsOptions): Promise<void> {
  const io = opts.factory.io;
  const given = opts.key === '-' ? ((await readAll(io.stdin)).split(/\r?\n/)[0] ?? '').trim() : opts.key.trim();
  if (given === '') throw new UsageError('no key given');
  const since = parseSince(opts.since, opts.factory.now().getTime());
  const found = await withAuditAdmin(opts, (admin) => admin.events(given, since));
  if (!found) throw new NegativeError('no such license key');
  const rows = found.events.map((e) => ({
    id: e.id,
    type: e.type,
    key_id: e.key_id,
    item_id: e.item_id,
    machine_id: e.machine_id,
    code: e.code,
    at: formatTimestamp(e.at_ms),
    last_at: formatTimestamp(e.last_ms),
    count: e.count,
    data: e.data,
  }));
  if (opts.json) {
    printJson(io, rows);
    return;
  }
  printTable(
    io,
    ['at', 'event', 'machine', 'code', 'count', 'last'],
    rows.map((r) => [r.at, r.type.replace(/^license\./, ''), r.machine_id ?? '', r.code ?? '', r.count, r.count > 1 ? r.last_at : '']),
  );
}
