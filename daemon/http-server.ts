// The node:http server under fastify (its `serverFactory`): the timeouts fastify would set (the
// idle one swept, daemon/idle-sweep.ts),
// `Connection: close` on an answer sent while the request's body is still arriving, and the
// request line written when an answer has been sent. Both were fastify hooks (onSend,
// onResponse) run for every request; here they are a few reads in the server's own request and
// response classes (bench/README.md, "The floor on the build", "One line at the answer"). The
// direct routes (direct-routes.ts) take their few requests here, before fastify sees them. Each
// request opens the event loop's request turn (src/util/request-turn.ts).
import { createServer, IncomingMessage, ServerResponse, type OutgoingHttpHeader, type OutgoingHttpHeaders, type Server } from 'node:http';
import { fastifyTimeoutOptions, type ServerTimeouts } from './timeouts.js';
import { sweepIdleConnections } from './idle-sweep.js';
import type { DirectRoutes } from './direct-routes.js';
import { requestAnswered, type LineRoute, type LoggedRequest } from './plugins/request-log.js';
import { requestArrived } from '../src/util/request-turn.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
type WriteHeadArgs = [statusCode: number, statusMessage?: string | OutgoingHttpHeaders | OutgoingHttpHeader[], headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]];

/** Whether the headers given to `writeHead` (an object or a flat name/value list) name `connection`. */
function namesConnection(headers: unknown): boolean {
  if (headers === undefined || headers === null || typeof headers !== 'object') return false;
  if (!Array.isArray(headers)) return Object.keys(headers).some((k) => k.toLowerCase() === 'connection');
  for (let i = 0; i < headers.length; i += 2) if (String(headers[i]).toLowerCase() === 'connection') return true;
  return false;
}

/** Whether a request announces a body (chunked, or a length above zero). */
function hasBody(req: IncomingMessage): boolean {
  const h = req.headers;
  if (h['transfer-encoding'] !== undefined) return true;
  const length = h['content-length'];
  return length !== undefined && Number(length) > 0;
}

/**
 * The server's requests, with the request line's fields declared up front: set on a plain
 * IncomingMessage, each would change its shape, and every request would take V8's slow path.
 */
export class LineRequest extends IncomingMessage implements LoggedRequest {
  reqId: string | undefined = undefined;
  logStart: number | undefined = undefined;
  logRoute: LineRoute | undefined = undefined;
}

/**
 * A body left unread when the answer goes out (a 401 before parsing, a 415, a 413) would keep the
 * connection open for as long as the client drips it: the answer closes the connection instead,
 * unless it names its own `Connection`. A class, not a `writeHead` wrapped per request: a closure
 * stored on each response made every POST's scavenges 20 times dearer (bench/README.md).
 */
export class ClosingResponse<Req extends IncomingMessage = IncomingMessage> extends ServerResponse<Req> {
  override writeHead(...args: WriteHeadArgs): this {
    const req = this.req;
    if (!req.complete && hasBody(req) && !this.hasHeader('connection') && !namesConnection(args[1]) && !namesConnection(args[2])) this.setHeader('connection', 'close');
    return (super.writeHead as (...a: WriteHeadArgs) => this).apply(this, args);
  }

  /** The request line, once the answer is sent (or has failed), as fastify's onResponse ran. */
  override emit(event: string | symbol, ...args: unknown[]): boolean {
    const listened = super.emit(event, ...args);
    if (event === 'finish' || event === 'error') requestAnswered(this.req, this.statusCode);
    return listened;
  }
}

/**
 * fastify's `serverFactory`: a node:http server with `timeouts`, answering through `handler`
 * (fastify's) what no direct route takes.
 */
export function httpServerFactory(timeouts: ServerTimeouts, direct?: DirectRoutes): (handler: Handler) => Server {
  const t = fastifyTimeoutOptions(timeouts);
  return (handler) => {
    if (direct) direct.fallback = handler;
    // Each request opens the request turn (src/util/request-turn.ts), in whose span SQLite's reads share one transaction.
    const listener: Handler = (req, res) => {
      requestArrived();
      if (!direct?.take(req, res)) handler(req, res);
    };
    const server = createServer({ ...t.http, IncomingMessage: LineRequest, ServerResponse: ClosingResponse }, listener);
    // What fastify sets on a server it makes itself.
    server.keepAliveTimeout = t.keepAliveTimeout;
    server.requestTimeout = t.requestTimeout;
    // Not `server.setTimeout(idleMs)`, whose timer every read and write re-arms: a sweep.
    sweepIdleConnections(server, timeouts.idleMs);
    return server;
  };
}
