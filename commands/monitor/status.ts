// statusRun: `mkt monitor status [TARGET] [--fail-on LEVEL]` — a table of targets, every check of
// one named target, or JSON; with --fail-on, exit 1 when a target is at or below that level.
import type { Factory } from '../../src/cli/factory.js';
import { NegativeError } from '../../src/cli/errors.js';
import { callApi } from '../../src/cli/api-errors.js';
import { printFields, printJson, printTable } from '../../src/cli/output.js';
import type { TargetStatusJson } from '../../src/client/monitor.js';
import { monitorClient, pct, type ClientFlags } from './shared.js';
import { attention, targetFields } from './detail.js';

export interface StatusOptions extends ClientFlags {
  factory: Factory;
  target?: string;
  failOn?: 'degraded' | 'down';
}

const RANK: Record<string, number> = { operational: 2, degraded: 1, down: 0 };

export async function statusRun(opts: StatusOptions): Promise<void> {
  const { io } = opts.factory;
  const client = await monitorClient(opts.factory, opts);
  const targets: Record<string, TargetStatusJson> = opts.target
    ? { [opts.target]: await callApi('monitor', () => client.status(opts.target!)) }
    : (await callApi('monitor', () => client.statusAll())).targets;
  // A monitor watching nothing: say so rather than print an empty table (and --fail-on below
  // refuses to vouch for it). --json keeps the API's object, `{"targets": {}}`.
  const none = !opts.target && Object.keys(targets).length === 0;
  if (opts.json) printJson(io, opts.target ? targets[opts.target] : { targets });
  else if (opts.target) printFields(io, targetFields(opts.target, targets[opts.target]!));
  else if (none) {
    if (!opts.failOn) io.stderr.write(`no targets configured on ${client.http.baseUrl}\n`);
  } else {
    printTable(
      io,
      ['target', 'status', 'uptime 24h', 'uptime 7d', 'p50 ms', 'p95 ms', 'checked', 'note'],
      Object.entries(targets).map(([name, s]) => [
        name,
        s.latest?.status ?? 'no data',
        pct(s.uptime_24h),
        pct(s.uptime_7d),
        s.latency_24h?.p50,
        s.latency_24h?.p95,
        s.latest?.checked_at,
        attention(s),
      ]),
    );
  }
  if (opts.failOn) {
    if (none) throw new NegativeError(`no targets configured on ${client.http.baseUrl}: a monitor that watches nothing cannot vouch that anything is up`, 'add targets to its configuration, or drop --fail-on');
    const limit = RANK[opts.failOn]!;
    const failing = Object.entries(targets).filter(([, s]) => (RANK[s.latest?.status ?? 'down'] ?? 0) <= limit).map(([n, s]) => `${n} (${s.latest?.status ?? 'no data'})`);
    if (failing.length) throw new NegativeError(`${failing.length} target${failing.length === 1 ? '' : 's'} at or below ${opts.failOn}: ${failing.join(', ')}`);
  }
}
