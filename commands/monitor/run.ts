// runRun: `mkt monitor run TARGET [--server URL | --ping-url URL] -- COMMAND...` — the command run
// between heartbeat signals; mkt exits with its status, whatever the monitor does.
import type { Factory } from '../../src/cli/factory.js';
import { CommandStatusExit, UsageError } from '../../src/cli/errors.js';
import { continueWhenOutputCloses } from '../../src/cli/closed-output.js';
import { lookupPingUrl } from '../../src/client/monitor-ping.js';
import { monitoredRun, type PingUrlSource } from '../../src/client/monitor-run.js';
import { givenPingUrl } from './ping-url.js';

export interface RunOptions {
  factory: Factory;
  target: string;
  /** The command and its arguments (after `--`). */
  command: string[];
  server?: string;
  pingUrl?: string;
}

export async function runRun(opts: RunOptions): Promise<void> {
  const f = opts.factory;
  const { io } = f;
  if (opts.command.length === 0 || opts.command[0] === '') throw new UsageError('monitor run: no command given', 'put it after `--`: mkt monitor run TARGET -- COMMAND [ARGS...]');
  // Usage errors (a malformed URL) stop the run before the command starts; the monitor's answers do not.
  const given = givenPingUrl(f, opts.pingUrl);
  let pingUrl: PingUrlSource;
  if (given) pingUrl = { kind: 'given', url: given };
  else {
    const { url: server } = await f.resolveServer('monitor', opts);
    // A credential store that cannot be read costs the lookup (a 401, one warning), not the job.
    const token = await f.resolveToken('monitor', server).catch(() => undefined);
    pingUrl = { kind: 'lookup', server, lookup: (budget) => lookupPingUrl({ baseUrl: server, token }, opts.target, { budget }) };
  }
  // The job's status and its end ping matter more than our output: a closed pipe stops the output only.
  continueWhenOutputCloses();
  const result = await monitoredRun({
    target: opts.target,
    pingUrl,
    argv: opts.command,
    cwd: io.cwd,
    env: io.env,
    stdout: io.stdout,
    stderr: io.stderr,
    warn: (line) => io.stderr.write(line + '\n'),
  });
  if (result.status !== 0) throw new CommandStatusExit(result.status);
}
