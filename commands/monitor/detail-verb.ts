// detailRun: `mkt monitor detail TARGET` — the one-target view, then its latest snapshots (error,
// response time) and the log of its latest run that sent one (a heartbeat's `details.log`).
import type { Factory } from '../../src/cli/factory.js';
import { callApi } from '../../src/cli/api-errors.js';
import { printFields, printJson, printTable } from '../../src/cli/output.js';
import type { SnapshotJson } from '../../src/client/monitor.js';
import { targetFields } from './detail.js';
import { monitorClient, type ClientFlags } from './shared.js';

export interface DetailOptions extends ClientFlags {
  factory: Factory;
  target: string;
}

/** The run log of a snapshot, as the monitor stored it; undefined when it carries none. */
interface RunLog {
  checked_at: string;
  signal: string | null;
  text: string;
  truncated: boolean;
}

function runLog(s: SnapshotJson): RunLog | undefined {
  const d = s.details;
  if (!d || typeof d.log !== 'string') return undefined;
  return { checked_at: s.checked_at, signal: typeof d.signal === 'string' ? d.signal : null, text: d.log, truncated: d.log_truncated === true };
}

/**
 * A log for the terminal: lines and tabs kept, a carriage return (progress bars) ends a line, and
 * every other control character is shown escaped, so a job's output cannot drive our terminal.
 */
export function logText(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    // eslint-disable-next-line no-control-regex -- control characters are what this finds
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (ch) => `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

export async function detailRun(opts: DetailOptions): Promise<void> {
  const { io } = opts.factory;
  const client = await monitorClient(opts.factory, opts);
  const s = await callApi('monitor', () => client.status(opts.target));
  const recent = s.recent ?? [];
  const log = recent.map(runLog).find((l) => l !== undefined);
  if (opts.json) {
    // The parts of the status this view is about; the ping URL is left to `mkt monitor ping-url`.
    printJson(io, { target: opts.target, label: s.label, heartbeat: s.heartbeat, current_incident: s.current_incident, recent, log: log ?? null });
    return;
  }
  printFields(io, targetFields(opts.target, s));
  io.stdout.write('\n');
  if (recent.length === 0) io.stdout.write('no snapshots yet\n');
  else {
    const signals = recent.some((r) => typeof r.details?.signal === 'string');
    printTable(
      io,
      signals ? ['checked', 'status', 'ms', 'signal', 'error'] : ['checked', 'status', 'ms', 'error'],
      recent.map((r) => (signals ? [r.checked_at, r.status, r.response_time_ms, r.details?.signal as string | undefined, r.error] : [r.checked_at, r.status, r.response_time_ms, r.error])),
    );
  }
  if (!log) return;
  const about = `log of the run at ${log.checked_at}${log.signal ? ` (signal ${log.signal})` : ''}${log.truncated ? ', its last 10 KiB' : ''}`;
  io.stdout.write(`\n${about}:\n`);
  const text = logText(log.text);
  io.stdout.write(text === '' ? '(empty)\n' : text.endsWith('\n') ? text : text + '\n');
}
