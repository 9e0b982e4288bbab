// Typed CLI errors and the one map from error to exit code (ARCHITECTURE "Common contracts").
// Only commands/root/main.ts turns these into a process exit.

// The table users read is in docs/cli.md ("Exit codes"); HTTP statuses map to these in
// src/cli/api-errors.ts (toCliError), and nowhere else.
export const ExitCode = {
  ok: 0,
  /** The answer is no: not found, invalid key, check failed, a feature the server has not configured. */
  negative: 1,
  /** The command line is wrong: a bad flag or argument, or input the server refused (400, 413, 422). */
  usage: 2,
  /** Try again: the server cannot be reached, failed (5xx), rate-limited us (429), or cannot start. */
  unreachable: 3,
  /** The server refused our credentials (401, 403). */
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

/**
 * A 400 schema refusal of one request field (`querystring.hours must be <= 8760`), kept apart so
 * that it can be said in the words of the command line: the flag (or argument) that set the field.
 */
export class FieldRefusalError extends UsageError {
  constructor(
    /** The request field (`hours`, `bucket_minutes`). */
    readonly refusedField: string,
    /** Where inside the field (` (value 2)` for the second of a repeated flag), or ''. */
    readonly detail: string,
    /** The server's reason, AJV's shouting lowered (`must not have more than 500 characters`). */
    readonly reason: string,
    /** The flag or argument named, when known. */
    readonly flag?: string,
  ) {
    super(refusalText(refusedField, detail, reason, flag));
  }
}

/** One refusal line: `--hours must be <= 8760`, or with no flag known, the field by name. */
export function refusalText(field: string, detail: string, reason: string, flag?: string): string {
  return flag ? `${flag}${detail} ${reason}` : `the server refused field ${field}${detail}: ${reason}`;
}

/** By shape as well as class (see isCliError). */
export function isFieldRefusal(err: unknown): err is FieldRefusalError {
  return err instanceof Error && typeof (err as Partial<FieldRefusalError>).refusedField === 'string' && typeof (err as Partial<FieldRefusalError>).reason === 'string';
}

/** Exit code of a negative result that is already printed (for example `--fail-on`). */
export class SilentExit extends CliError {
  constructor(exitCode: ExitCodeValue) {
    super('', exitCode);
  }
}

/**
 * The status of a command mkt ran for the user (`mkt monitor run -- CMD`), which becomes mkt's own
 * (0-255, as a shell passes it on); nothing is printed, the command has spoken for itself.
 */
export class CommandStatusExit extends Error {
  constructor(readonly exitCode: number) {
    super('');
    this.name = 'CommandStatusExit';
  }
}

/**
 * Recognises a CliError by shape, not `instanceof`: the start-up path is bundled into
 * dist/cli.cjs while verbs load as separate modules, so each side has its own class object.
 */
export function isCliError(err: unknown): err is CliError {
  return err instanceof Error && typeof (err as Partial<CliError>).exitCode === 'number';
}

export function exitCodeFor(err: unknown): number {
  // By shape, as isCliError: the bundled start-up path has its own copy of the class.
  if (err instanceof Error && err.name === 'CommandStatusExit' && typeof (err as Partial<CommandStatusExit>).exitCode === 'number') return (err as CommandStatusExit).exitCode;
  if (isCliError(err)) return err.exitCode;
  return ExitCode.unreachable;
}
