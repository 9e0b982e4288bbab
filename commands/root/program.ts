// Builds the commander program: global behaviour (version, usage errors) and the nouns.
import { Command } from 'commander';
import type { Factory } from '../../src/cli/factory.js';
import type { ParsedVerb } from '../../src/cli/flags.js';
import { nounsFor } from './nouns.js';
import { VERSION } from '../../src/version.js';

/**
 * Stops a run after parsing (gh's `runF`, for parse-level tests): gets the path of the command
 * that would have run (`['tickets', 'list']`) and the options its verb would have received.
 */
export type RunF = (path: string[], opts: object) => void | Promise<void>;

/** The names from the program down to `cmd`, the program's own left out. */
function commandPath(cmd: Command): string[] {
  const path: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) path.unshift(c.name());
  return path;
}

/**
 * The program; with `argv`, only the nouns that command line can reach (see nounsFor); with
 * `runF`, every action hands its options to runF instead of loading its verb.
 */
export function buildProgram(f: Factory, argv?: readonly string[], runF?: RunF): Command {
  const program = new Command('mkt')
    .description('mkt: client and server of the marketplace, monitor and tickets services')
    .version(VERSION, '-V, --version', 'print the mkt version')
    .helpOption('-h, --help', 'show help')
    .configureOutput({
      writeOut: (s) => f.io.stdout.write(s),
      writeErr: (s) => f.io.stderr.write(s),
      // commander's `error: unknown option '--x'` in the shape of every other error: `mkt: ...`.
      outputError: (s, write) => write(s.replace(/^error: /, 'mkt: ')),
    })
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .allowExcessArguments(false);
  program.addHelpText(
    'after',
    `
Examples:
  $ mkt serve tickets --port 7072
  $ mkt tickets list --status open --json

Environment:
  MKT_<SERVICE>_URL, MKT_<SERVICE>_TOKEN   server and token for a service client
  MKT_DATA_DIR, MKT_CONFIG, MKT_LOG_LEVEL  server data directory, config file, log level
  MKT_DEBUG=1                              print stack traces on errors

Exit codes:
  0 ok   1 negative answer (not found, invalid, check failed, not configured on the server)
  2 usage (bad flag or argument, input the server refused)
  3 try again (unreachable, server failed, rate limited)   4 auth (HTTP 401/403)`,
  );
  let parsed: ParsedVerb | undefined;
  if (runF) {
    // The command about to run, recorded before its action, so runF learns which verb it stands for.
    let current: Command = program;
    program.hook('preAction', (_program, action) => {
      current = action;
    });
    parsed = (opts) => runF(commandPath(current), opts);
  }
  for (const noun of nounsFor(argv)) noun.register(program, f, parsed);
  return program;
}
