// `mkt license run`: holds one license seat for the life of a command: takes it (waiting while
// the key is full), renews it at a third of the lease, runs the command without a shell, and
// releases the seat when the command ends however it ends (issue 33, "Leased seats").
import { spawn, type StdioOptions } from 'node:child_process';
import { constants } from 'node:os';
import type { Writable } from 'node:stream';
import type { DeactivateKeyResponse, KeyStatusLicense, LicenseHeartbeatResponse, ValidateKeyResponse } from '../schemas/license.js';

/** What the seat holder asks of the license server (a LicenseClient; tests may count calls). */
export interface SeatClient {
  validate(req: { key: string; machine_id: string; machine_name?: string; activate: true }): Promise<ValidateKeyResponse>;
  heartbeat(key: string, machine: string): Promise<LicenseHeartbeatResponse>;
  deactivate(key: string, machine: string): Promise<DeactivateKeyResponse>;
}

/** Where a process learns of signals (process itself, or a test's emitter). */
export interface SignalSource {
  on(signal: NodeJS.Signals, listener: () => void): unknown;
  off(signal: NodeJS.Signals, listener: () => void): unknown;
}

/** The signals passed on to the command (and that end a wait for a seat). */
export const FORWARDED_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * The longest pause between two tries for a seat. `retry_after` is when the earliest lease ends,
 * but a job that finishes releases its seat long before: with a 15-minute lease renewed every 5
 * minutes, waiting the full retry_after would leave freed seats idle for minutes.
 */
export const MAX_POLL_MS = 5_000;
/** The shortest heartbeat period, whatever the lease (a 1 s lease renews every 333 ms). */
const MIN_HEARTBEAT_MS = 100;

export interface SeatRunOptions {
  client: SeatClient;
  key: string;
  machine: string;
  /** A label for the activation (the host name). */
  machineName?: string;
  /** How long to wait for a seat when every seat is taken; 0 = not at all. */
  waitMs: number;
  /** The command and its arguments, run without a shell. */
  argv: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Where the command's output goes: 'inherit' (the real binary) or streams it is copied to. */
  output: 'inherit' | { stdout: Writable; stderr: Writable };
  /** One line for stderr: waits, warnings. */
  note: (line: string) => void;
  /** Default: process. */
  signals?: SignalSource;
  now?: () => number;
  random?: () => number;
}

/** A refusal to give a seat: the server's code and a readable reason (exit 1). */
export class SeatRefused extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'SeatRefused';
  }
}

export type SeatRunResult =
  /** The command ran: its status as a shell reports it (128 + N for signal N, 126/127 when it could not start). */
  | { kind: 'ran'; status: number }
  /** A signal came before the command started: 128 + its number, nothing ran. */
  | { kind: 'interrupted'; status: number };

/** A seat held: its lease (null for a node-locked activation, which never lapses). */
interface Seat {
  leaseMs: number | null;
  expiresAt: string | null;
}

/** `15m`, `90s`: a duration for a person, as --wait takes it. */
export function formatDuration(ms: number): string {
  const s = Math.ceil(ms / 1000);
  if (s >= 3600 && s % 3600 === 0) return `${s / 3600}h`;
  if (s >= 60 && s % 60 === 0) return `${s / 60}m`;
  return `${s}s`;
}

function seatOf(v: ValidateKeyResponse, now: number): Seat {
  const license: KeyStatusLicense | null = v.license;
  const expiresAt = v.lease_expires_at ?? null;
  const floating = license?.activation_policy === 'floating' || expiresAt !== null;
  if (!floating) return { leaseMs: null, expiresAt: null };
  // The lease's length from the server; else what is left of this one (the clocks may differ a little).
  const seconds = license?.lease_seconds;
  const leaseMs = typeof seconds === 'number' && seconds > 0 ? seconds * 1000 : Math.max(MIN_HEARTBEAT_MS * 3, Date.parse(expiresAt ?? '') - now || 0);
  return { leaseMs, expiresAt };
}

function seatsText(license: KeyStatusLicense | null): string {
  const max = license?.max_activations;
  return typeof max === 'number' ? `all ${max} seat${max === 1 ? ' is' : 's are'} taken` : 'every seat is taken';
}

/** Sleeps `ms`, or less when `abort` fires (then resolves false). */
function pause(ms: number, abort: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (abort.aborted) return resolve(false);
    const done = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      abort.removeEventListener('abort', done);
      resolve(true);
    }, ms);
    abort.addEventListener('abort', done, { once: true });
  });
}

/**
 * Takes a seat with validate+activate. A full floating key is tried again after `retry_after`
 * (at most MAX_POLL_MS, with jitter so that waiting jobs do not all ask at once) until `waitMs`
 * has passed; a full node-locked key is refused at once (its activations never lapse by
 * themselves). Returns undefined when `abort` fired before a seat was taken.
 */
async function takeSeat(o: SeatRunOptions, abort: AbortSignal): Promise<Seat | undefined> {
  const now = o.now ?? Date.now;
  const random = o.random ?? Math.random;
  const start = now();
  const deadline = start + o.waitMs;
  let waiting = false;
  for (;;) {
    const v = await o.client.validate({ key: o.key, machine_id: o.machine, machine_name: o.machineName, activate: true });
    if (v.valid) {
      if (waiting) o.note(`mkt: took a seat after waiting ${formatDuration(now() - start)}`);
      return seatOf(v, now());
    }
    if (v.code !== 'TOO_MANY_ACTIVATIONS') throw new SeatRefused(v.code, v.error ?? 'the license key is not valid');
    const retry = v.retry_after;
    if (typeof retry !== 'number') {
      throw new SeatRefused(v.code, `${seatsText(v.license)} and node-locked activations do not lapse: free one with \`mkt license deactivate --machine ID\``);
    }
    const left = deadline - now();
    if (left <= 0) {
      throw new SeatRefused(
        v.code,
        o.waitMs === 0
          ? `${seatsText(v.license)} (the next frees in ${retry} s); --wait 0 does not wait`
          : `${seatsText(v.license)} still, after waiting ${formatDuration(o.waitMs)}; raise --wait or the key's seats`,
      );
    }
    if (!waiting) {
      o.note(`mkt: ${seatsText(v.license)}; waiting up to ${formatDuration(o.waitMs)} (next frees in ${retry} s)`);
      waiting = true;
    }
    const base = Math.min(Math.max(1, retry) * 1000, MAX_POLL_MS);
    const delay = Math.min(left, base + Math.floor(random() * Math.min(1000, base / 2)));
    if (!(await pause(delay, abort))) return undefined;
  }
}

/**
 * Renews a floating seat every third of its lease, one heartbeat at a time. A seat found gone
 * (the lease lapsed: a stalled machine, a long network cut) is taken again; every trouble is
 * one warning until it clears, and never stops the command.
 */
class SeatKeeper {
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<void> = Promise.resolve();
  /** The trouble last warned about ('' = none): the same one is not repeated at every beat. */
  private trouble = '';

  constructor(
    private readonly o: SeatRunOptions,
    /** The seat renewed: its expiry follows each answer, for the release's warning. */
    private readonly seat: Seat,
    private readonly periodMs: number,
  ) {}

  start(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.current = this.beat().finally(() => this.start());
    }, this.periodMs);
  }

  /** Stops renewing; resolves once no heartbeat or retake is in flight (so none outlives the release). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.current;
  }

  private warn(kind: string, line: string): void {
    if (this.trouble === kind) return;
    this.trouble = kind;
    this.o.note(line);
  }

  private cleared(line: string): void {
    if (this.trouble === '') return;
    this.trouble = '';
    this.o.note(line);
  }

  private async beat(): Promise<void> {
    const { client, key, machine } = this.o;
    const every = formatDuration(this.periodMs);
    try {
      const h = await client.heartbeat(key, machine);
      if (h.success) {
        this.seat.expiresAt = h.lease_expires_at ?? this.seat.expiresAt;
        return this.cleared('mkt: the seat is renewed again');
      }
      if (h.code !== 'MACHINE_NOT_ACTIVATED') {
        return this.warn(`refused:${h.code}`, `mkt: warning: the seat was not renewed: ${h.code ?? 'REFUSED'}: ${h.message}; the command runs on`);
      }
      if (this.stopped) return;
      this.warn('lapsed', 'mkt: warning: the seat lapsed before it was renewed; taking it again');
      const v = await client.validate({ key, machine_id: machine, machine_name: this.o.machineName, activate: true });
      if (v.valid) {
        this.seat.expiresAt = v.lease_expires_at ?? this.seat.expiresAt;
        return this.cleared('mkt: took the seat again');
      }
      this.warn(`retake:${v.code}`, `mkt: warning: cannot take the seat again: ${v.code}: ${v.error ?? 'refused'}; trying every ${every}, the command runs on`);
    } catch (err) {
      this.warn('unreachable', `mkt: warning: cannot renew the seat: ${(err as Error).message}; trying every ${every}, the command runs on`);
    }
  }
}

function startFailure(command: string, err: NodeJS.ErrnoException): { status: number; text: string } {
  // As a shell: 127 for a command that is not there, 126 for one that cannot be executed.
  if (err.code === 'ENOENT') return { status: 127, text: `mkt: cannot run ${JSON.stringify(command)}: command not found (ENOENT)` };
  if (err.code === 'EACCES' || err.code === 'EISDIR' || err.code === 'ENOEXEC') return { status: 126, text: `mkt: cannot run ${JSON.stringify(command)}: not executable (${err.code})` };
  return { status: 127, text: `mkt: cannot run ${JSON.stringify(command)}: ${err.code ?? err.message}` };
}

/** Copies a child's stream to ours, pausing while ours is full; a closed reader stops the copy, not the command. */
function copy(from: NodeJS.ReadableStream, to: Writable): void {
  let open = true;
  to.once('error', () => (open = false));
  from.on('data', (chunk: Buffer) => {
    if (!open || to.destroyed) return;
    if (!to.write(chunk)) {
      from.pause();
      to.once('drain', () => from.resume());
    }
  });
}

/** Runs the command without a shell; `relay` receives the child once it exists (for signals). */
function runCommand(o: SeatRunOptions, relay: (kill: (sig: NodeJS.Signals) => void) => void): Promise<number> {
  const [command, ...args] = o.argv as [string, ...string[]];
  const stdio: StdioOptions = o.output === 'inherit' ? 'inherit' : ['inherit', 'pipe', 'pipe'];
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: o.cwd, env: o.env, stdio });
    if (o.output !== 'inherit') {
      copy(child.stdout!, o.output.stdout);
      copy(child.stderr!, o.output.stderr);
    }
    relay((sig) => {
      // The child may be gone already (a terminal's ^C reaches the whole process group).
      if (child.exitCode === null && child.signalCode === null) child.kill(sig);
    });
    child.once('error', (err: NodeJS.ErrnoException) => {
      // 'error' after a start means a kill failed; only a command that never started ends here.
      if (child.pid !== undefined) return;
      const { status, text } = startFailure(command, err);
      o.note(text);
      resolve(status);
    });
    child.once('close', (code, signal) => {
      if (child.pid === undefined) return;
      resolve(signal ? 128 + (constants.signals[signal] ?? 0) : (code ?? 0));
    });
  });
}

/** Releases a floating seat; trouble is a warning (the lease lapses by itself), never the job's failure. */
async function release(o: SeatRunOptions, seat: Seat): Promise<void> {
  const lapses = seat.expiresAt ? ` it lapses by itself by ${seat.expiresAt}` : ' it lapses by itself at the end of its lease';
  try {
    const r = await o.client.deactivate(o.key, o.machine);
    // MACHINE_NOT_ACTIVATED: the lease lapsed already, so there is nothing left to free.
    if (!r.success && r.code !== 'MACHINE_NOT_ACTIVATED') o.note(`mkt: warning: the seat was not released: ${r.code ?? 'REFUSED'}: ${r.message};${lapses}`);
  } catch (err) {
    o.note(`mkt: warning: cannot release the seat: ${(err as Error).message};${lapses}`);
  }
}

/**
 * Takes a seat, runs the command while renewing it, releases it. Throws SeatRefused (or the
 * client's error) when no seat was had; once the command has started, only its status counts.
 */
export async function runWithSeat(o: SeatRunOptions): Promise<SeatRunResult> {
  const signals = o.signals ?? process;
  const abort = new AbortController();
  let caught: NodeJS.Signals | undefined;
  let kill: ((sig: NodeJS.Signals) => void) | undefined;
  const listeners = new Map<NodeJS.Signals, () => void>();
  for (const sig of FORWARDED_SIGNALS) {
    const fn = (): void => {
      // Before the command starts a signal ends the wait; once it runs, the command decides.
      if (kill) kill(sig);
      else {
        caught ??= sig;
        abort.abort();
      }
    };
    listeners.set(sig, fn);
    signals.on(sig, fn);
  }
  try {
    const seat = await takeSeat(o, abort.signal);
    const interrupted = (sig: NodeJS.Signals): SeatRunResult => ({ kind: 'interrupted', status: 128 + (constants.signals[sig] ?? 0) });
    if (!seat) return interrupted(caught ?? 'SIGINT');
    if (caught) {
      // A signal while the seat was being granted: give it back, run nothing.
      if (seat.leaseMs !== null) await release(o, seat);
      return interrupted(caught);
    }
    const keeper = seat.leaseMs === null ? undefined : new SeatKeeper(o, seat, Math.max(MIN_HEARTBEAT_MS, Math.floor(seat.leaseMs / 3)));
    keeper?.start();
    const status = await runCommand(o, (k) => (kill = k));
    // No heartbeat (or retake) may land after the release and hold the seat again.
    await keeper?.stop();
    // A node-locked activation stays (it is this machine's, and its deactivation counts against the budget).
    if (seat.leaseMs !== null) await release(o, seat);
    return { kind: 'ran', status };
  } finally {
    for (const [sig, fn] of listeners) signals.off(sig, fn);
  }
}
