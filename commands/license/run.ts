// runRun: `mkt license run [--machine ID] [--wait 10m] -- COMMAND...` — the command run while this
// job holds one seat of the key (a CI job's seat); mkt exits with the command's status.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Factory } from '../../src/cli/factory.js';
import { CommandStatusExit, NegativeError, UsageError } from '../../src/cli/errors.js';
import { continueWhenOutputCloses } from '../../src/cli/closed-output.js';
import { runWithSeat, SeatRefused } from '../../src/client/license-run.js';
import { call, licenseClient, readKey, resolveMachine, type KeyFlags } from './shared.js';

export interface RunOptions extends KeyFlags {
  factory: Factory;
  /** The command and its arguments (after `--`). */
  command: string[];
  machine?: string;
  wait?: string;
  server?: string;
}

/** The default --wait: long enough for a CI queue to drain, short of a job's own timeout. */
export const DEFAULT_WAIT = '10m';
const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--wait`: `0`, seconds, or a number with ms, s, m, h or d. */
export function parseWait(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!m) throw new UsageError(`--wait must be a duration such as 30s, 10m or 1h (0 = do not wait), not ${JSON.stringify(text)}`);
  return Math.round(Number(m[1]) * UNITS[m[2] ?? 's']!);
}

/** A machine id of its own per run (`run-HOST-RANDOM`): each CI job holds its own seat, even two on one host. */
export function runMachineId(): string {
  const host = hostname().replace(/[^A-Za-z0-9.-]/g, '-').slice(0, 64) || 'host';
  return `run-${host}-${randomBytes(4).toString('hex')}`;
}

export async function runRun(opts: RunOptions): Promise<void> {
  const f = opts.factory;
  const { io } = f;
  if (opts.command.length === 0 || opts.command[0] === '') throw new UsageError('license run: no command given', 'put it after `--`: mkt license run -- COMMAND [ARGS...]');
  const waitMs = parseWait(opts.wait ?? DEFAULT_WAIT);
  const machine = opts.machine === undefined ? runMachineId() : resolveMachine(opts.machine);
  const key = (await readKey(f, opts))!;
  const client = await licenseClient(f, opts);
  // The release after the command matters more than our output: a closed pipe stops the output only.
  continueWhenOutputCloses();
  // The real binary hands the command our own stdout and stderr; a test's streams get copies.
  const inherit = io.stdout === process.stdout && io.stderr === process.stderr;
  let result;
  try {
    result = await call(() =>
      runWithSeat({
        client,
        key,
        machine,
        machineName: hostname(),
        waitMs,
        argv: opts.command,
        cwd: io.cwd,
        env: io.env,
        output: inherit ? 'inherit' : { stdout: io.stdout, stderr: io.stderr },
        note: (line) => io.stderr.write(line + '\n'),
        now: () => f.now().getTime(),
      }),
    );
  } catch (err) {
    if (err instanceof SeatRefused) throw new NegativeError(`${err.code}: ${err.message}`);
    throw err;
  }
  if (result.status !== 0) throw new CommandStatusExit(result.status);
}
