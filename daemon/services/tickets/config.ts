// The ticket tracker's optional YAML config (`--config`, else `tickets.yaml` in the data dir
// when present): peers, the sync interval, the clock skew allowed to peers' stamps and the
// longest a tombstone is kept.
// Flags given on the command line win.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

export interface TicketsConfig {
  peers: string[];
  syncIntervalSeconds?: number;
  /** How far ahead of this clock a peer copy's `updated_at` may be (docs/tickets.md). */
  maxClockSkewSeconds?: number;
  /** Tombstones older than this are purged even when a peer has not received them (docs/tickets.md). */
  tombstoneMaxAgeMs?: number;
  file?: string;
}

/** The default `tombstone_max_age`: 90 days. */
export const DEFAULT_TOMBSTONE_MAX_AGE_MS = 90 * 86_400_000;

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `90d`, `12h`, `30m`, `45s`, or a number of seconds; undefined when it is none of those or not positive. */
export function parseDuration(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) && v > 0 ? v * 1000 : undefined;
  if (typeof v !== 'string') return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$/.exec(v);
  if (!m) return undefined;
  const ms = Number(m[1]) * UNIT_MS[m[2] || 's']!;
  return ms > 0 && Number.isFinite(ms) ? Math.round(ms) : undefined;
}

function checkUrl(u: unknown, file: string): string {
  if (typeof u !== 'string') throw new Error(`${file}: every peer must be a URL string`);
  try {
    const url = new URL(u);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw new Error(`${file}: peer is not an http(s) URL: ${u}`);
  }
  return u.replace(/\/+$/, '');
}

export function loadTicketsConfig(configPath: string | undefined, dataDir: string): TicketsConfig {
  const file = configPath ?? join(dataDir, 'tickets.yaml');
  if (configPath === undefined && !existsSync(file)) return { peers: [] };
  const doc = parse(readFileSync(file, 'utf8')) as unknown;
  if (doc === null || doc === undefined) return { peers: [], file };
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new Error(`${file}: expected a mapping with peers, sync_interval and max_clock_skew`);
  const d = doc as Record<string, unknown>;
  for (const k of Object.keys(d)) if (k !== 'peers' && k !== 'sync_interval' && k !== 'max_clock_skew' && k !== 'tombstone_max_age') throw new Error(`${file}: unknown key ${k}`);
  const peers = d.peers === undefined ? [] : d.peers;
  if (!Array.isArray(peers)) throw new Error(`${file}: peers must be a list of URLs`);
  const cfg: TicketsConfig = { peers: peers.map((p) => checkUrl(p, file)), file };
  if (d.sync_interval !== undefined) {
    if (typeof d.sync_interval !== 'number' || !(d.sync_interval > 0)) throw new Error(`${file}: sync_interval must be a positive number of seconds`);
    cfg.syncIntervalSeconds = d.sync_interval;
  }
  if (d.max_clock_skew !== undefined) {
    // Bounded: a skew of years would let one far-future stamp win every conflict again.
    if (typeof d.max_clock_skew !== 'number' || !(d.max_clock_skew > 0) || d.max_clock_skew > 86_400) throw new Error(`${file}: max_clock_skew must be a number of seconds between 0 and 86400`);
    cfg.maxClockSkewSeconds = d.max_clock_skew;
  }
  if (d.tombstone_max_age !== undefined) {
    const ms = parseDuration(d.tombstone_max_age);
    if (ms === undefined) throw new Error(`${file}: tombstone_max_age must be a duration such as 90d, 12h or 3600 (seconds)`);
    cfg.tombstoneMaxAgeMs = ms;
  }
  return cfg;
}
