// Runs the command tree on argv and returns the exit code; never exits itself.
import { CommanderError, type Command } from 'commander';
import { createFactory } from '../../src/cli/factory.js';
import { systemIO } from '../../src/cli/io.js';
import { buildProgram, type RunF } from './program.js';
import { ExitCode, exitCodeFor, isCliError, isFieldRefusal, refusalText, UsageError } from '../../src/cli/errors.js';

/**
 * What the user typed for a request field the server refused: the running command's option of
 * that name (`hours` → `--hours`, `add_tags` → `--add-tag`), or its argument (`title` → `<title>`).
 */
export function flagFor(cmd: Command | undefined, field: string): string | undefined {
  if (!cmd) return undefined;
  const names = [field, field.replace(/s$/, '')].map((n) => n.replace(/_/g, '-'));
  for (const n of names) {
    const opt = cmd.options.find((o) => o.long === `--${n}`);
    if (opt) return opt.long;
  }
  for (const n of names) if (cmd.registeredArguments.some((a) => a.name() === n)) return `<${n}>`;
  return undefined;
}

/** A field refusal that names no flag yet names the running command's, when it has one. */
function inCommandWords(err: unknown, cmd: Command | undefined): unknown {
  if (!isFieldRefusal(err) || err.flag !== undefined) return err;
  const flag = flagFor(cmd, err.refusedField);
  return flag ? new UsageError(refusalText(err.refusedField, err.detail, err.reason, flag), err.hint) : err;
}

/** With `runF`, a parse-level test's run: usage errors and exit codes as usual, no verb runs. */
export async function run(argv: string[], io = systemIO(), runF?: RunF): Promise<number> {
  const f = createFactory(io);
  const program = buildProgram(f, argv, runF);
  let current: Command | undefined;
  program.hook('preAction', (_program, action) => {
    current = action;
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return ExitCode.ok;
  } catch (thrown) {
    if (thrown instanceof CommanderError) {
      if (thrown.code === 'commander.helpDisplayed' || thrown.code === 'commander.version' || thrown.code === 'commander.help') return ExitCode.ok;
      if (thrown.code === 'commander.executeSubCommandAsync') return ExitCode.ok;
      // commander has already printed the one-line message and the usage hint.
      return ExitCode.usage;
    }
    const err = inCommandWords(thrown, current);
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
