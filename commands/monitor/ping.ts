// pingRun: `mkt monitor ping TARGET [--start|--fail|--exit-code N] [--log FILE|-]` — one heartbeat
// signal, to the URL given or the one the target's status names.
import type { Factory } from '../../src/cli/factory.js';
import { toCliError } from '../../src/cli/api-errors.js';
import { UsageError } from '../../src/cli/errors.js';
import { printJson } from '../../src/cli/output.js';
import { ApiError, NetworkError } from '../../src/client/http.js';
import { PING_BODY_MAX_BYTES, lookupPingUrl, pingHost, readFileTail, readStreamTail, sendPing, signalName, type PingSignal } from '../../src/client/monitor-ping.js';
import { givenPingUrl, notHeartbeat } from './ping-url.js';
import type { ClientFlags } from './shared.js';

export interface PingOptions extends ClientFlags {
  factory: Factory;
  target: string;
  start?: boolean;
  fail?: boolean;
  /** 0-255, checked by the parser. */
  exitCode?: number;
  /** A file, or `-` for stdin. */
  log?: string;
  pingUrl?: string;
}

function signalOf(opts: PingOptions): PingSignal {
  if (opts.start) return 'start';
  if (opts.fail) return 'fail';
  return opts.exitCode ?? 'success';
}

/** The log to send: its last PING_BODY_MAX_BYTES (the monitor refuses more). */
async function readLog(f: Factory, from: string): Promise<Buffer> {
  if (from === '-') return readStreamTail(f.io.stdin, PING_BODY_MAX_BYTES);
  const { resolve } = await import('node:path');
  try {
    return await readFileTail(resolve(f.io.cwd, from), PING_BODY_MAX_BYTES);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new UsageError(`--log: cannot read ${from}: ${e.code ?? e.message}`);
  }
}

/** A failure with the place and signal named; the monitor's own answers map as any API answer does. */
function failure(err: ApiError | NetworkError, what: string): unknown {
  if (err instanceof ApiError) return toCliError(new ApiError(err.status, `${what}: ${err.message}`, err.body, err.headers), 'monitor');
  return toCliError(new NetworkError(`${what}: ${err.message}`), 'monitor');
}

export async function pingRun(opts: PingOptions): Promise<void> {
  const f = opts.factory;
  const signal = signalOf(opts);
  // Read before anything is sent: a log that cannot be read is the command line's mistake.
  const log = opts.log === undefined ? undefined : await readLog(f, opts.log);
  let url = givenPingUrl(f, opts.pingUrl);
  if (!url) {
    const { url: baseUrl } = await f.resolveServer('monitor', opts);
    const token = await f.resolveToken('monitor', baseUrl);
    const found = await lookupPingUrl({ baseUrl, token }, opts.target);
    if (found.kind === 'failed') throw failure(found.error, `monitor ping: status of ${opts.target} at ${new URL(baseUrl).host}`);
    if (found.kind === 'none') throw notHeartbeat(opts.target);
    url = found.value;
  }
  const sent = await sendPing(url, signal, { log });
  if (sent.kind === 'failed') throw failure(sent.error, `monitor ping: ${signalName(signal)} ping of ${opts.target} at ${pingHost(url)}`);
  // A ping URL given for another target (an MKT_MONITOR_PING_URL left in a shell) signals that one.
  const took = (sent.value as { target?: unknown } | null)?.target;
  if (typeof took === 'string' && took !== opts.target) f.io.stderr.write(`mkt: warning: that ping URL belongs to ${took}, not ${opts.target}: ${took} got the signal\n`);
  if (opts.json) printJson(f.io, sent.value);
  else if (f.io.stderr.isTTY) f.io.stderr.write(`${signalName(signal)} ping of ${opts.target} taken by ${pingHost(url)}\n`);
}
