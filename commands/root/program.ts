// Builds the commander program: global behaviour (version, usage errors) and the nouns.
import { Command } from 'commander';
import type { Factory } from '../../src/cli/factory.js';
import { nounsFor } from './nouns.js';
import { VERSION } from '../../src/version.js';

/** The program; with `argv`, only the nouns that command line can reach (see nounsFor). */
export function buildProgram(f: Factory, argv?: readonly string[]): Command {
  const program = new Command('mkt')
    .description('mkt: client and server of the marketplace, monitor and tickets services')
    .version(VERSION, '-V, --version', 'print the mkt version')
    .helpOption('-h, --help', 'show help')
    .configureOutput({
      writeOut: (s) => f.io.stdout.write(s),
      writeErr: (s) => f.io.stderr.write(s),
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
  MKT_DEBUG=1                              print stack traces on errors`,
  );
  for (const noun of nounsFor(argv)) noun.register(program, f);
  return program;
}
