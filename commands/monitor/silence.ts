// silenceAddRun / silenceListRun / silenceRmRun: `mkt monitor silence add|list|rm` — ad-hoc
// silences of a monitor's alerts (for a deploy, from a script or a pipeline), through its API.
import type { Factory } from '../../src/cli/factory.js';
import { callApi } from '../../src/cli/api-errors.js';
import { UsageError } from '../../src/cli/errors.js';
import { printJson, printTable, type Cell } from '../../src/cli/output.js';
import { SilencesClient, type SilenceJson } from '../../src/client/monitor-silences.js';
import { monitorClient, type ClientFlags } from './shared.js';

export interface SilenceOptions extends ClientFlags {
  factory: Factory;
}

export interface SilenceAddOptions extends SilenceOptions {
  target?: string;
  all?: boolean;
  for: string;
  reason: string;
}

export interface SilenceRmOptions extends SilenceOptions {
  id: string;
}

/** The request fields the command's flags set, so that a refusal names the flag (`--for`). */
const FLAGS = { duration: '--for', reason: '--reason', target: 'TARGET', all: '--all' } as const;

async function silences(opts: SilenceOptions): Promise<SilencesClient> {
  return new SilencesClient((await monitorClient(opts.factory, opts)).http);
}

/** `2026-11-28 14:00 UTC`: when a silence ends, to the minute. */
function until(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

function row(s: SilenceJson): Cell[] {
  return [s.id, s.target ?? 'all targets', until(s.expires_at), s.reason];
}

const HEADERS = ['id', 'target', 'until', 'reason'];

export async function silenceAddRun(opts: SilenceAddOptions): Promise<void> {
  if (opts.all && opts.target !== undefined) throw new UsageError('give a target or --all, not both');
  if (!opts.all && opts.target === undefined) throw new UsageError('give the target to silence, or --all for every target');
  const client = await silences(opts);
  const s = await callApi('monitor', () => client.add(opts.all ? { all: true, duration: opts.for, reason: opts.reason } : { target: opts.target!, duration: opts.for, reason: opts.reason }), { flags: FLAGS });
  if (opts.json) return printJson(opts.factory.io, s);
  printTable(opts.factory.io, HEADERS, [row(s)]);
}

export async function silenceListRun(opts: SilenceOptions): Promise<void> {
  const client = await silences(opts);
  const { silences: list } = await callApi('monitor', () => client.list());
  if (opts.json) return printJson(opts.factory.io, { silences: list });
  if (list.length === 0) {
    // Not data: a pipe reading the list gets nothing.
    opts.factory.io.stderr.write('no active silences\n');
    return;
  }
  printTable(opts.factory.io, HEADERS, list.map(row));
}

export async function silenceRmRun(opts: SilenceRmOptions): Promise<void> {
  const client = await silences(opts);
  await callApi('monitor', () => client.remove(opts.id));
  if (opts.json) return printJson(opts.factory.io, { id: opts.id, removed: true });
  opts.factory.io.stderr.write(`silence ${opts.id} removed: alerts are sent again\n`);
}
