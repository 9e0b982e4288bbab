// Runs the command tree on argv and returns the exit code; never exits itself.
import { CommanderError } from 'commander';
import { createFactory } from '../../src/cli/factory.js';
import { systemIO } from '../../src/cli/io.js';
import { buildProgram, type RunF } from './program.js';
import { ExitCode, exitCodeFor, isCliError } from '../../src/cli/errors.js';

/** With `runF`, a parse-level test's run: usage errors and exit codes as usual, no verb runs. */
export async function run(argv: string[], io = systemIO(), runF?: RunF): Promise<number> {
  const f = createFactory(io);
  const program = buildProgram(f, argv, runF);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return ExitCode.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return ExitCode.ok;
      if (err.code === 'commander.executeSubCommandAsync') return ExitCode.ok;
      // commander has already printed the one-line message and the usage hint.
      return ExitCode.usage;
    }
    if (isCliError(err)) {
      if (err.message) io.stderr.write(`mkt: ${err.message}\n`);
      if (err.hint) io.stderr.write(`hint: ${err.hint}\n`);
    } else {
      const e = err as Error;
      io.stderr.write(`mkt: ${e?.message ?? String(err)}\n`);
    }
    if (io.env.MKT_DEBUG === '1' && err instanceof Error && err.stack) io.stderr.write(err.stack + '\n');
    return exitCodeFor(err);
  }
}

