// pingUrlRun: `mkt monitor ping-url TARGET` — the heartbeat target's ping URL from its status; and
// how the ping verbs find that URL (a flag, MKT_MONITOR_PING_URL, or the server).
import type { Factory } from '../../src/cli/factory.js';
import { callApi } from '../../src/cli/api-errors.js';
import { NegativeError, UsageError } from '../../src/cli/errors.js';
import { printJson } from '../../src/cli/output.js';
import { pingBase } from '../../src/client/monitor-ping.js';
import { monitorClient, type ClientFlags } from './shared.js';

export interface PingUrlOptions extends ClientFlags {
  factory: Factory;
  target: string;
}

export const PING_URL_ENV = 'MKT_MONITOR_PING_URL';

/** The refusal of a target that has no ping URL, worded once for `ping-url` and `ping`. */
export function notHeartbeat(target: string): NegativeError {
  return new NegativeError(`${target} is not a heartbeat target: its status has no ping_url`, 'give it a `heartbeat:` section (period or schedule, and grace) in the monitor configuration; see docs/monitor.md');
}

/**
 * The ping URL the command line gives: `--ping-url`, else MKT_MONITOR_PING_URL (which keeps the key
 * out of the process list), else undefined (ask the server). A malformed one is a usage error.
 */
export function givenPingUrl(f: Factory, flag: string | undefined): string | undefined {
  const envValue = f.io.env[PING_URL_ENV]?.trim();
  const [raw, from] = flag !== undefined ? [flag, '--ping-url'] : envValue ? [envValue, PING_URL_ENV] : [undefined, ''];
  if (raw === undefined) return undefined;
  const base = pingBase(raw);
  // The value is not echoed: it may hold a key.
  if (!base) throw new UsageError(`${from} is not a ping URL: it must be an http(s) URL ending in /ping/KEY`);
  return base;
}

export async function pingUrlRun(opts: PingUrlOptions): Promise<void> {
  const client = await monitorClient(opts.factory, opts);
  const status = await callApi('monitor', () => client.status(opts.target));
  const url = status.ping_url;
  if (typeof url !== 'string' || url === '') throw notHeartbeat(opts.target);
  if (opts.json) printJson(opts.factory.io, { target: opts.target, ping_url: url });
  else opts.factory.io.stdout.write(url + '\n');
}
