// The ticket tracker's optional YAML config (`--config`, else `tickets.yaml` in the data dir
// when present): peers and the sync interval. Flags given on the command line win.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

export interface TicketsConfig {
  peers: string[];
  syncIntervalSeconds?: number;
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
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new Error(`${file}: expected a mapping with peers and sync_interval`);
  const d = doc as Record<string, unknown>;
  for (const k of Object.keys(d)) if (k !== 'peers' && k !== 'sync_interval') throw new Error(`${file}: unknown key ${k}`);
  const peers = d.peers === undefined ? [] : d.peers;
  if (!Array.isArray(peers)) throw new Error(`${file}: peers must be a list of URLs`);
  const cfg: TicketsConfig = { peers: peers.map((p) => checkUrl(p, file)), file };
  if (d.sync_interval !== undefined) {
    if (typeof d.sync_interval !== 'number' || !(d.sync_interval > 0)) throw new Error(`${file}: sync_interval must be a positive number of seconds`);
    cfg.syncIntervalSeconds = d.sync_interval;
  }
  return cfg;
}
