// fastify's logger of one request, made lazily: the per-request pino child is built only when
// something logs through it (see daemon/server.ts's childLoggerFactory).
import type pino from 'pino';
import type { Logger } from './logger.js';

/** The arguments of a pino log method (an object and/or a message, then format arguments). */
type LogArgs = Parameters<pino.LogFn>;

/**
 * fastify's logger of one request. fastify makes a pino child per request (its bindings go
 * through the redaction, its level methods are rebuilt), which cost more than the request's
 * own log line; most requests log nothing else, so the child is made on first use only.
 */
export class RequestLogger {
  #child: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: pino.Bindings,
    private readonly options: pino.ChildLoggerOptions | undefined,
  ) {}

  private get logger(): Logger {
    return (this.#child ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.#child?.level ?? this.options?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.logger.level = level;
  }

  private write(level: pino.Level, args: LogArgs): void {
    // Below the level nothing is written: no child needed (unless its own options set the level).
    if (this.#child === undefined && this.options?.level === undefined && !this.parent.isLevelEnabled(level)) return;
    this.logger[level](...args);
  }

  fatal(...args: LogArgs): void {
    this.write('fatal', args);
  }
  error(...args: LogArgs): void {
    this.write('error', args);
  }
  warn(...args: LogArgs): void {
    this.write('warn', args);
  }
  info(...args: LogArgs): void {
    this.write('info', args);
  }
  debug(...args: LogArgs): void {
    this.write('debug', args);
  }
  trace(...args: LogArgs): void {
    this.write('trace', args);
  }
  silent(): void {}

  child(bindings: pino.Bindings, options?: pino.ChildLoggerOptions): Logger {
    return this.logger.child(bindings, options);
  }
}

/** Whether `o` has any own enumerable key, without the array `Object.keys` makes (once a request). */
function hasKeys(o: object): boolean {
  for (const k in o) if (Object.hasOwn(o, k)) return true;
  return false;
}

/** fastify's `childLoggerFactory`: a RequestLogger (fastify passes `{}` for "no options"). */
export function requestLogger(parent: Logger, bindings: pino.Bindings, options: pino.ChildLoggerOptions): RequestLogger {
  return new RequestLogger(parent, bindings, hasKeys(options) ? options : undefined);
}
