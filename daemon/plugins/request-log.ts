// Request logging: one line per answered request with the route pattern, never the raw URL,
// headers or body, because URLs and headers can carry secrets (tokens, license keys).
import pino from 'pino';
import type { FastifyBaseLogger, FastifyInstance, RouteOptions } from 'fastify';
import type { Logger } from '../logger.js';
import { requestLogger } from '../request-logger.js';
import { LineBatch } from '../log-batch.js';
import { RequestLineBytes } from '../request-line-bytes.js';

/** pino's level number of `info`, the request line's level. */
const INFO = 30;

/** What pino keeps of a logger that a line needs: its destination and its bindings as JSON text. */
interface PinoInternals {
  [pino.symbols.streamSym]: { write(line: string): unknown };
  [pino.symbols.chindingsSym]: string;
}

/**
 * Writes request lines as pino would (`{"level":30,"time":…,<bindings>,"reqId":…,"method":…,
 * "route":…,"status":…,"ms":…,"msg":"request"}`) to the logger's own destination. Every field is
 * the server's own, so the line needs no redaction, and a string made from a template costs a
 * fraction of pino's object path (bench/README.md, "Heartbeats, issue 31"): the line is written
 * for every request, most of which do nothing else as dear.
 */
export class RequestLines {
  private readonly internals: PinoInternals;
  private readonly bytes = new RequestLineBytes();

  constructor(private readonly logger: Logger) {
    this.internals = logger as unknown as PinoInternals;
  }

  /** The line's `,"method":…,"route":…` part, made once per route (see installRequestLog). */
  static routePart(method: string, route: string): string {
    return `,"method":${JSON.stringify(method)},"route":${JSON.stringify(route)}`;
  }

  write(reqId: string, routePart: string, status: number, ms: number): void {
    // Read each time: the level can change while the server runs (and a child's bindings never do).
    if (this.logger.levelVal > INFO) return;
    const stream = this.internals[pino.symbols.streamSym];
    const bindings = this.internals[pino.symbols.chindingsSym];
    // Into the batch's bytes when the destination is the daemon's own; from the template otherwise.
    if (stream instanceof LineBatch && this.bytes.put(stream, Date.now(), bindings, reqId, routePart, status, ms)) return;
    const line = `{"level":${INFO},"time":${this.timeText()}${bindings},"reqId":${JSON.stringify(reqId)}${routePart},"status":${status},"ms":${tenths(ms)},"msg":"request"}\n`;
    stream.write(line);
  }

  private lastTime = 0;
  private lastTimeText = '0';

  /**
   * `Date.now()` as text, converted once a millisecond: a time is past the small integers V8
   * formats quickly, and its conversion was a tenth of the line's cost (many lines share a ms).
   */
  private timeText(): string {
    const now = Date.now();
    if (now !== this.lastTime) {
      this.lastTime = now;
      this.lastTimeText = String(now);
    }
    return this.lastTimeText;
  }
}

/**
 * `ms` rounded to a tenth, as JSON would write `Math.round(ms * 10) / 10` ("12", "0.3"), from
 * integers: formatting the fraction itself takes V8's slow double-to-text path.
 */
export function tenths(ms: number): string {
  const t = Math.round(ms * 10);
  if (!(t >= 0 && t <= 0x3fffffff)) return String(t / 10);
  const whole = (t / 10) | 0;
  const rest = t - whole * 10;
  return rest === 0 ? String(whole) : `${whole}.${rest}`;
}

/**
 * What a request's line needs besides its status and duration, kept on the node request itself
 * (no object made per request): its id and start, set when fastify takes it (`begin`), and its
 * route's preformatted part, set when fastify picks its route (the route's logger factory).
 */
export interface LoggedRequest {
  reqId?: string;
  logStart?: number;
  logRoute?: LineRoute;
}

/** A route's request lines: where they go and the route's `,"method":…,"route":…` part, made once. */
export interface LineRoute {
  readonly lines: RequestLines;
  readonly part: string;
}

/** fastify's `genReqId`: the next id, noted on the request with the time fastify took it. */
export function beginRequest(req: object, id: string): string {
  const r = req as LoggedRequest;
  r.reqId = id;
  r.logStart = performance.now();
  return id;
}

/**
 * Writes the request line of `req`, answered with `status`, once: the answer has been sent (the
 * response's `finish`, or its `error`). Requests no fastify route picked a line for (a direct
 * route's, which writes its own) write nothing here.
 */
export function requestAnswered(req: object, status: number): void {
  const r = req as LoggedRequest;
  const route = r.logRoute;
  if (route === undefined) return;
  r.logRoute = undefined;
  route.lines.write(r.reqId ?? '', route.part, status, performance.now() - (r.logStart ?? 0));
}

/** fastify's logger factory, as a route and the server's default (unmatched requests) use it. */
type LoggerFactory = NonNullable<RouteOptions['childLoggerFactory']>;

/**
 * The request line of every route. Each route gets its own logger factory, which fastify calls for
 * each request it routes: it notes the route's preformatted part on the request and makes the
 * request's (lazy) logger. The line itself is written by the server's response class when the
 * answer is sent (daemon/http-server.ts) and, for `inject()`, when the injected answer ends
 * (server.ts). No fastify hook runs for it: with a logger or an onResponse hook, fastify listens
 * to every response's `finish` and `error` through a closure made per request, and runs its hook
 * runners (bench/README.md, "One line at the answer, issue 37").
 */
export class RequestLog {
  private readonly ours = new WeakSet<LoggerFactory>();
  // A method is one of llhttp's known tokens, so this map stays small.
  private readonly unmatchedParts = new Map<string, LineRoute>();

  /** The parent of each request's own logger (a child, made when first used). */
  private readonly logger: Logger;

  constructor(
    logger: Logger,
    readonly lines: RequestLines,
  ) {
    // fastify logs its request and reply objects under `req` and `res` in a few rare lines (a
    // stream closed early): only their method and status, never the raw URL (it can carry secrets).
    this.logger = logger.child({}, { serializers: { req: (r: { method?: unknown }) => ({ method: r.method }), res: (r: { statusCode?: unknown }) => ({ statusCode: r.statusCode }) } });
  }

  /**
   * The server's default factory (fastify's `childLoggerFactory` option): what no route took (a
   * 404, a URL the router refused) is logged as `unmatched`.
   */
  readonly unmatched: LoggerFactory = (_parent, bindings, options, req) => {
    const method = req.method ?? '';
    let what = this.unmatchedParts.get(method);
    if (what === undefined) this.unmatchedParts.set(method, (what = { lines: this.lines, part: RequestLines.routePart(method, 'unmatched') }));
    return this.make(bindings, options, what, req);
  };

  /** Gives each route registered from now on its own factory, its parts formatted once. */
  install(app: FastifyInstance): void {
    app.addHook('onRoute', (route: RouteOptions) => {
      const lines = this.lines;
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      const parts = new Map<string, LineRoute>(methods.map((m) => [m, { lines, part: RequestLines.routePart(m, route.url) }]));
      const only = methods.length === 1 ? parts.get(methods[0]!)! : undefined;
      // A route's own factory still makes its logger; one of ours already there (options registered twice) is replaced.
      const own = route.childLoggerFactory !== undefined && !this.ours.has(route.childLoggerFactory) ? route.childLoggerFactory : undefined;
      const make = this.make;
      const factory: LoggerFactory = function (this: FastifyInstance, parent, bindings, options, req) {
        const what = only ?? parts.get(req.method ?? '') ?? { lines, part: RequestLines.routePart(req.method ?? '', route.url) };
        if (own === undefined) return make(bindings, options, what, req);
        (req as LoggedRequest).logRoute = what;
        return own.call(this, parent, bindings, options, req);
      };
      this.ours.add(factory);
      route.childLoggerFactory = factory;
    });
  }

  private readonly make = (bindings: pino.Bindings, options: pino.ChildLoggerOptions, what: LineRoute, req: object): FastifyBaseLogger => {
    (req as LoggedRequest).logRoute = what;
    return requestLogger(this.logger, bindings, options) as unknown as FastifyBaseLogger;
  };
}
