// Request logging: one line per answered request with the route pattern, never the raw URL,
// headers or body, because URLs and headers can carry secrets (tokens, license keys).
import pino from 'pino';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { Logger } from '../logger.js';

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
    const line = `{"level":${INFO},"time":${this.timeText()}${this.internals[pino.symbols.chindingsSym]},"reqId":${JSON.stringify(reqId)}${routePart},"status":${status},"ms":${tenths(ms)},"msg":"request"}\n`;
    this.internals[pino.symbols.streamSym].write(line);
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

/** The request line of every route, written through `lines` (the server's, shared with its direct routes). */
export function installRequestLog(app: FastifyInstance, lines = new RequestLines(app.log as Logger)): void {
  const line = (req: FastifyRequest, reply: FastifyReply, routePart: string): void => lines.write(String(req.id), routePart, reply.statusCode, reply.elapsedTime);
  // Each route logs through its own hook, its method and pattern formatted once at registration:
  // reading them per request (`req.routeOptions`) builds an object of a dozen fields each time.
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const parts = new Map(methods.map((m) => [m, RequestLines.routePart(m, route.url)]));
    const only = methods.length === 1 ? parts.get(methods[0]!)! : undefined;
    const hook = (req: FastifyRequest, reply: FastifyReply, done: () => void): void => {
      line(req, reply, only ?? parts.get(req.method) ?? RequestLines.routePart(req.method, route.url));
      done();
    };
    const own = route.onResponse;
    route.onResponse = own === undefined ? [hook] : Array.isArray(own) ? [...own, hook] : [own, hook];
  });
  // What no route took (a 404, a URL the router refused) is logged here, as `unmatched`.
  const unmatched = new Map<string, string>();
  app.addHook('onResponse', (req, reply, done) => {
    if (req.is404) {
      // A method is one of llhttp's known tokens, so this map stays small.
      let part = unmatched.get(req.method);
      if (part === undefined) unmatched.set(req.method, (part = RequestLines.routePart(req.method, 'unmatched')));
      line(req, reply, part);
    }
    done();
  });
}
