// Typed CLI errors and the one map from error to exit code (ARCHITECTURE "Common contracts").
// Only commands/root/main.ts turns these into a process exit.

export const ExitCode = {
  ok: 0,
  negative: 1,
  usage: 2,
  unreachable: 3,
  auth: 4,
} as const;
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** Base class: a message meant for a person, and the exit code it maps to. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCodeValue,
    readonly hint?: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The answer is negative: not found, invalid key, check failed. */
export class NegativeError extends CliError {
  constructor(message: string, hint?: string) {
    super(message, ExitCode.negative, hint);
  }
}

/** The command line itself is wrong. */
export class UsageError extends CliError {
  constructor(message: string, hint?: string) {
    super(message, ExitCode.usage, hint);
  }
}

/** The server cannot be reached, or answered with a server error. */
export class UnreachableError extends CliError {
  constructor(message: string, hint?: string) {
    super(message, ExitCode.unreachable, hint);
  }
}

/** The server refused our credentials. */
export class AuthError extends CliError {
  constructor(message: string, hint?: string) {
    super(message, ExitCode.auth, hint);
  }
}

/** Exit code of a negative result that is already printed (for example `--fail-on`). */
export class SilentExit extends CliError {
  constructor(exitCode: ExitCodeValue) {
    super('', exitCode);
  }
}

/**
 * Recognises a CliError by shape, not `instanceof`: the start-up path is bundled into
 * dist/cli.cjs while verbs load as separate modules, so each side has its own class object.
 */
export function isCliError(err: unknown): err is CliError {
  return err instanceof Error && typeof (err as Partial<CliError>).exitCode === 'number';
}

export function exitCodeFor(err: unknown): ExitCodeValue {
  if (isCliError(err)) return err.exitCode;
  return ExitCode.unreachable;
}
