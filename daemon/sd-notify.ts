// systemd's sd_notify protocol for `mkt serve`: READY, STATUS, RELOADING, STOPPING and WATCHDOG
// datagrams to $NOTIFY_SOCKET, sent through the optional unix-dgram addon; a no-op without the variable.
//
// Node has no AF_UNIX SOCK_DGRAM socket of its own. `systemd-notify` as a child would send from
// another PID (NotifyAccess=all, and a watchdog ping from a child says nothing of our event loop),
// so the datagrams go out of this process through unix-dgram (docs/dependencies.md).
import { createRequire } from 'node:module';
import { constants } from 'node:os';
import type { Logger } from './logger.js';

/** The part of unix-dgram's socket used here (the package ships no types). */
export interface DgramSocket {
  send(buf: Buffer, offset: number, length: number, path: string, callback: (err?: Error) => void): void;
  on(event: 'error', listener: (err: Error) => void): unknown;
  close(): void;
}

export interface UnixDgram {
  createSocket(type: 'unix_dgram'): DgramSocket;
}

/** A sockaddr_un path holds 108 bytes, the terminating NUL included. */
const MAX_PATH_BYTES = 107;

/** Where notifications go: a socket path, or why they are off (undefined: not run by systemd). */
export type NotifySocket = { path: string } | { off: string } | undefined;

/** Reads NOTIFY_SOCKET as sd_notify(3) does: an absolute path, or `@name` for the abstract namespace. */
export function parseNotifySocket(value: string | undefined): NotifySocket {
  if (value === undefined || value === '') return undefined;
  if (value.startsWith('@')) {
    // unix-dgram copies the address with strncpy and passes sizeof(sockaddr_un) as its length, so
    // the leading NUL of an abstract name ends it: such a socket cannot be reached (ECONNREFUSED).
    return { off: `NOTIFY_SOCKET ${value} is an abstract socket, which unix-dgram cannot address` };
  }
  if (value.startsWith('vsock:')) return { off: `NOTIFY_SOCKET ${value} is an AF_VSOCK address, which mkt does not support` };
  if (!value.startsWith('/')) return { off: `NOTIFY_SOCKET ${value} is not an absolute path` };
  if (Buffer.byteLength(value) > MAX_PATH_BYTES) return { off: `NOTIFY_SOCKET is longer than ${MAX_PATH_BYTES} bytes` };
  return { path: value };
}

/**
 * The watchdog ping interval in ms, half of WATCHDOG_USEC as sd_watchdog_enabled(3) advises, or
 * why it is off; undefined when systemd asked for no watchdog, or asked another process
 * (WATCHDOG_PID is not ours: a child that inherited the variables must stay silent).
 */
export function parseWatchdog(env: NodeJS.ProcessEnv, pid: number): { intervalMs: number } | { off: string } | undefined {
  const usec = env.WATCHDOG_USEC;
  if (usec === undefined || usec === '') return undefined;
  const wpid = env.WATCHDOG_PID;
  if (wpid !== undefined && wpid !== '') {
    if (!/^[1-9]\d*$/.test(wpid)) return { off: `WATCHDOG_PID must be a process id, got ${JSON.stringify(wpid)}` };
    if (Number(wpid) !== pid) return undefined;
  }
  const n = Number(usec);
  if (!/^\d+$/.test(usec) || !Number.isSafeInteger(n) || n === 0) return { off: `WATCHDOG_USEC must be a positive whole number of microseconds, got ${JSON.stringify(usec)}` };
  return { intervalMs: Math.max(1, Math.floor(n / 2000)) };
}

/** CLOCK_MONOTONIC in µs, as RELOADING=1 must carry it (process.hrtime reads that clock on Linux). */
export function monotonicUsec(): bigint {
  return process.hrtime.bigint() / 1000n;
}

/** Control characters (a newline would start a new field) as spaces. */
function oneLine(text: string): string {
  return Array.from(text, (c) => (c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f ? ' ' : c)).join('');
}

/** One notification: `KEY=value` lines; a STATUS text is kept on its one line. */
export function notifyMessage(fields: Array<[string, string | bigint | undefined]>): string {
  return fields
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${oneLine(String(v))}`)
    .join('\n');
}

/** unix-dgram's errors carry a negative errno (`send -111`): its name reads better (ECONNREFUSED). */
export function errnoText(err: Error & { code?: unknown }): string {
  const code = typeof err.code === 'number' ? -err.code : undefined;
  const name = code === undefined ? undefined : Object.entries(constants.errno).find(([, v]) => v === code)?.[0];
  return name ? `${name} (${err.message})` : err.message;
}

function loadUnixDgram(): UnixDgram {
  // Loaded only when systemd asks for notifications: a machine where the addon did not build
  // still runs every `mkt serve`.
  return createRequire(import.meta.url)('unix-dgram') as UnixDgram;
}

export interface NotifierOptions {
  /** This process's id, compared with WATCHDOG_PID. */
  pid?: number;
  /** How unix-dgram is loaded (tests make it fail as a missing build would). */
  load?: () => UnixDgram;
}

/** The sd_notify client of one `mkt serve` process. Every method is a no-op when it is disabled. */
export class SystemdNotifier {
  private timer: NodeJS.Timeout | undefined;
  /** A send failed and was logged: the next failures are not, until one succeeds again. */
  private failing = false;

  private constructor(
    private socket: DgramSocket | undefined,
    private readonly path: string,
    /** Half of WATCHDOG_USEC, when systemd runs a watchdog for this process. */
    readonly watchdogIntervalMs: number | undefined,
    private readonly logger: Logger,
  ) {}

  /** A notifier for NOTIFY_SOCKET/WATCHDOG_USEC/WATCHDOG_PID in `env`; one warning line when it cannot work. */
  static fromEnv(env: NodeJS.ProcessEnv, logger: Logger, opts: NotifierOptions = {}): SystemdNotifier {
    const off = (): SystemdNotifier => new SystemdNotifier(undefined, '', undefined, logger);
    const target = parseNotifySocket(env.NOTIFY_SOCKET);
    if (target === undefined) return off();
    if ('off' in target) {
      logger.warn({ reason: target.off }, 'systemd notification is off');
      return off();
    }
    const watchdog = parseWatchdog(env, opts.pid ?? process.pid);
    if (watchdog && 'off' in watchdog) logger.warn({ reason: watchdog.off }, 'systemd watchdog is off');
    let socket: DgramSocket;
    try {
      socket = (opts.load ?? loadUnixDgram)().createSocket('unix_dgram');
    } catch (err) {
      logger.warn({ reason: `unix-dgram is not available: ${(err as Error).message.split('\n')[0]}` }, 'systemd notification is off');
      return off();
    }
    // Errors of sends without a callback: none are made, but an unhandled 'error' would end the process.
    socket.on('error', (err) => logger.warn({ err: errnoText(err) }, 'systemd notification failed'));
    return new SystemdNotifier(socket, target.path, watchdog && 'intervalMs' in watchdog ? watchdog.intervalMs : undefined, logger);
  }

  /** Whether notifications go anywhere. */
  get enabled(): boolean {
    return this.socket !== undefined;
  }

  /** READY=1: serving (after start-up, and again after each reload). */
  ready(status?: string): void {
    this.send([['READY', '1'], ['STATUS', status]]);
  }

  status(text: string): void {
    this.send([['STATUS', text]]);
  }

  /** RELOADING=1 with the CLOCK_MONOTONIC time, as Type=notify-reload requires; READY=1 must follow. */
  reloading(status?: string): void {
    this.send([['RELOADING', '1'], ['MONOTONIC_USEC', monotonicUsec()], ['STATUS', status]]);
  }

  /** STOPPING=1: shutdown has begun; the watchdog stops with it. */
  stopping(status?: string): void {
    this.stopWatchdog();
    this.send([['STOPPING', '1'], ['STATUS', status]]);
  }

  watchdog(): void {
    this.send([['WATCHDOG', '1']]);
  }

  /**
   * Pings WATCHDOG=1 every half WATCHDOG_USEC from a timer of the event loop, so a loop that hangs
   * stops the pings and systemd restarts the service. Unref'd: it never keeps the process alive.
   */
  startWatchdog(): void {
    if (!this.socket || this.watchdogIntervalMs === undefined || this.timer) return;
    this.timer = setInterval(() => this.watchdog(), this.watchdogIntervalMs);
    this.timer.unref();
  }

  stopWatchdog(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Stops the watchdog and closes the socket (its poll handle would keep the process alive). */
  close(): void {
    this.stopWatchdog();
    const socket = this.socket;
    this.socket = undefined;
    try {
      socket?.close();
    } catch {
      // Closing a socket whose fd is already gone: nothing is left to release.
    }
  }

  private send(fields: Array<[string, string | bigint | undefined]>): void {
    if (!this.socket) return;
    const buf = Buffer.from(notifyMessage(fields));
    // unix-dgram's sendmsg is synchronous: a message sent before exit has left the process.
    this.socket.send(buf, 0, buf.length, this.path, (err) => {
      if (!err) {
        this.failing = false;
        return;
      }
      if (this.failing) return;
      this.failing = true;
      this.logger.warn({ socket: this.path, err: errnoText(err) }, 'systemd notification failed');
    });
  }
}
