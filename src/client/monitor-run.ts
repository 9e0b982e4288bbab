// `mkt monitor run`: runs a command without a shell between a start ping and an exit-status ping
// carrying the last 10 KiB of its output. The monitor failing never stops or fails the command.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import type { Writable } from 'node:stream';
import { ApiError } from './http.js';
import { tailBytes } from '../util/utf8-tail.js';
import { PingBudget, RUN_LOG_BYTES, pingHost, sendPing, signalName, type PingSignal, type PingUrlLookup } from './monitor-ping.js';

/** Where a process learns of signals (process itself, or a test's emitter). */
export interface SignalSource {
  on(signal: NodeJS.Signals, listener: () => void): unknown;
  off(signal: NodeJS.Signals, listener: () => void): unknown;
}

/** The signals `mkt monitor run` passes on to the command instead of dying of them. */
export const FORWARDED_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export interface JobOptions {
  /** The command and its arguments, run without a shell. */
  argv: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdout: Writable;
  stderr: Writable;
  /** Default: process. */
  signals?: SignalSource;
  /** Output kept for the log (default RUN_LOG_BYTES). */
  keepBytes?: number;
}

export interface JobResult {
  /** As a shell reports it: the exit code, 128 + the signal's number, 126/127 when it could not start. */
  status: number;
  /** The last `keepBytes` of stdout and stderr as they came, plus a line saying how it ended when not by itself. */
  log: Buffer;
  /** Set when the command could not start (the line was printed to stderr and is in the log). */
  startError?: string;
}

/** The last bytes of a stream of chunks, kept in a list trimmed from the front. */
class Tail {
  private chunks: Buffer[] = [];
  private size = 0;
  constructor(private readonly max: number) {}
  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.chunks.length > 1 && this.size - this.chunks[0]!.length >= this.max) this.size -= this.chunks.shift()!.length;
  }
  bytes(max = this.max): Buffer {
    return tailBytes(Buffer.concat(this.chunks, this.size), max);
  }
}

/**
 * Copies a child's stream to ours as it comes (pausing while ours is full) and into the tail. Once
 * ours is closed (`mkt monitor run ... | head`) the output still goes to the tail: the job runs on.
 */
function forward(from: NodeJS.ReadableStream, to: Writable, tail: Tail): void {
  let open = true;
  to.once('error', () => {
    open = false;
    from.resume();
  });
  from.on('data', (chunk: Buffer) => {
    tail.push(chunk);
    if (!open || to.destroyed) return;
    if (!to.write(chunk)) {
      from.pause();
      to.once('drain', () => from.resume());
    }
  });
}

function startFailure(command: string, err: NodeJS.ErrnoException): { status: number; text: string } {
  // As a shell: 127 for a command that is not there, 126 for one that cannot be executed.
  if (err.code === 'ENOENT') return { status: 127, text: `mkt: cannot run ${JSON.stringify(command)}: command not found (ENOENT)` };
  if (err.code === 'EACCES' || err.code === 'EISDIR' || err.code === 'ENOEXEC') return { status: 126, text: `mkt: cannot run ${JSON.stringify(command)}: not executable (${err.code})` };
  return { status: 127, text: `mkt: cannot run ${JSON.stringify(command)}: ${err.code ?? err.message}` };
}

/** Runs the command, forwarding its output and the signals we get, until it ends. */
export function runJob(opts: JobOptions): Promise<JobResult> {
  const keep = opts.keepBytes ?? RUN_LOG_BYTES;
  const tail = new Tail(keep);
  const signals = opts.signals ?? process;
  const [command, ...args] = opts.argv as [string, ...string[]];
  return new Promise<JobResult>((resolve) => {
    const child = spawn(command, args, { cwd: opts.cwd, env: opts.env, stdio: ['inherit', 'pipe', 'pipe'] });
    const relay = new Map<NodeJS.Signals, () => void>();
    for (const sig of FORWARDED_SIGNALS) {
      const fn = (): void => {
        // The child may be gone already (a terminal's ^C reaches the whole process group).
        if (child.exitCode === null && child.signalCode === null) child.kill(sig);
      };
      relay.set(sig, fn);
      signals.on(sig, fn);
    }
    let done = false;
    const finish = (r: JobResult): void => {
      if (done) return;
      done = true;
      for (const [sig, fn] of relay) signals.off(sig, fn);
      resolve(r);
    };
    forward(child.stdout, opts.stdout, tail);
    forward(child.stderr, opts.stderr, tail);
    child.once('error', (err: NodeJS.ErrnoException) => {
      // 'error' after a start means a kill failed; only a command that never started ends here.
      if (child.pid !== undefined) return;
      const { status, text } = startFailure(command, err);
      opts.stderr.write(text + '\n');
      finish({ status, log: Buffer.from(text + '\n'), startError: text });
    });
    child.once('close', (code, signal) => {
      if (child.pid === undefined) return;
      if (signal) {
        const note = Buffer.from(`\nmkt: the command was killed by ${signal}\n`);
        const log = Buffer.concat([tail.bytes(Math.max(0, keep - note.length)), note]);
        finish({ status: 128 + (constants.signals[signal] ?? 0), log });
      } else finish({ status: code ?? 0, log: tail.bytes() });
    });
  });
}

/** How `mkt monitor run` finds its ping URL: given, or asked of the monitor. */
export type PingUrlSource = { kind: 'given'; url: string } | { kind: 'lookup'; server: string; lookup: (budget: PingBudget) => Promise<PingUrlLookup> };

export interface MonitoredRunOptions extends JobOptions {
  target: string;
  pingUrl: PingUrlSource;
  /** Prints the one warning line (`mkt: warning: ...`). */
  warn: (line: string) => void;
  /** Time the monitor may take before the command starts, and again after it ends (default 5 s each). */
  phaseBudgetMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

export const PHASE_BUDGET_MS = 5_000;

/**
 * Signals start, runs the command, signals its exit status with its log. Whatever the monitor
 * does, the command runs and its status is returned; trouble with the monitor is one warning.
 */
export async function monitoredRun(opts: MonitoredRunOptions): Promise<JobResult> {
  const phase = opts.phaseBudgetMs ?? PHASE_BUDGET_MS;
  const problems: string[] = [];
  let host = opts.pingUrl.kind === 'given' ? pingHost(opts.pingUrl.url) : new URL(opts.pingUrl.server).host;
  let url: string | undefined;
  const before = new PingBudget(phase);
  if (opts.pingUrl.kind === 'given') url = opts.pingUrl.url;
  else {
    const found = await opts.pingUrl.lookup(before);
    if (found.kind === 'ok') url = found.value;
    else if (found.kind === 'none') problems.push(`${opts.target} is not a heartbeat target (its status has no ping_url)`);
    else problems.push(`status lookup of ${opts.target} ${found.error instanceof ApiError ? 'refused' : 'failed'}: ${found.error.message}`);
  }
  if (url) host = pingHost(url);
  const ping = async (signal: PingSignal, budget: PingBudget, log?: Buffer): Promise<void> => {
    if (!url) return;
    const sent = await sendPing(url, signal, { budget, log, sleep: opts.sleep });
    if (sent.kind === 'failed') problems.push(`${signalName(signal)} ping ${sent.error instanceof ApiError ? 'refused' : 'failed'}: ${sent.error.message}`);
  };
  await ping('start', before);
  const result = await runJob(opts);
  // The exit status as the monitor reads it: a shell's status fits 0-255 (128 + a signal's number too).
  await ping(Math.min(255, result.status), new PingBudget(phase), result.log);
  if (problems.length) opts.warn(`mkt: warning: could not reach the monitor at ${host}: ${problems.join('; ')}; the job ran anyway`);
  return result;
}
