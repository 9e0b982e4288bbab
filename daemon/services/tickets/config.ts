// The ticket tracker's optional YAML config (`--config`, else `tickets.yaml` in the data dir
// when present): peers, the sync interval and the clock skew allowed to peers' stamps.
// Flags given on the command line win.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

export interface TicketsConfig {
  peers: string[];
  syncIntervalSeconds?: number;
  /** How far ahead of this clock a peer copy's `updated_at` may be (docs/tickets.md). */
  maxClockSkewSeconds?: number;
  file?: string;
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
  for (const k of Object.keys(d)) if (k !== 'peers' && k !== 'sync_interval' && k !== 'max_clock_skew') throw new Error(`${file}: unknown key ${k}`);
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
  return cfg;
}
