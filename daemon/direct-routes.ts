// Direct routes: the few hot requests (a cron job's ping) answered by the node:http server itself,
// before fastify. fastify's routing, hooks and reply cost a ping more than its own work does
// (bench/README.md, "The ping taken before fastify"). A lane takes a request only when it can
// answer exactly as its fastify route would: same status, headers, body and request line. Any
// other request (an error to answer, a HEAD, an escaped URL, a chunked body, a server closing) it
// declines untouched, and fastify answers it as before; a lane that must read a JSON body to know
// hands a body unlike its requests to fastify with the bytes read (handOff). `inject()` never
// reaches a lane. MediaTypes is fastify's rule for a content type, so a lane never takes a body
// fastify would refuse (415).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from './logger.js';
import { RequestLines } from './plugins/request-log.js';
import { errorAnswer } from './plugins/errors.js';
import { requestLogger, type RequestLogger } from './request-logger.js';
import { setReadAhead } from './plugins/body.js';

/**
 * Takes `req` and answers it (true), or declines it (false) before reading its body or writing a
 * byte; `url` is `req.url`, known to start with the lane's prefix. A lane that has read the body
 * and finds the request is not one it answers gives it to fastify (DirectRoutes.handOff).
 */
export type Lane = (req: IncomingMessage, res: ServerResponse, url: string) => boolean;

/** fastify's own request ids (`req-1`, `req-2`, … in base 36), shared by fastify and the lanes. */
export class RequestIds {
  private last = 0;

  readonly next = (): string => {
    // fastify's bound: past 2^31 - 1 the counter would leave V8's small integers.
    this.last = (this.last + 1) & 0x7fffffff;
    return `req-${this.last.toString(36)}`;
  };
}

/** A route a lane answers: its method and pattern as fastify's route has them, and its request line's part. */
export interface DirectRoute {
  method: string;
  pattern: string;
  /** The request line's method and route (RequestLines.routePart), made once. */
  part: string;
}

/** One request a lane has taken: its id and start, and how it is answered and logged. */
export class DirectRequest {
  readonly id: string;

  constructor(
    private readonly routes: DirectRoutes,
    private readonly res: ServerResponse,
    private readonly route: DirectRoute,
    /** When the lane took the request (the request line's duration counts from it). */
    private readonly start: number,
  ) {
    this.id = routes.ids.next();
  }

  /** Answers `json` (already JSON text) with `status`, then writes the request line. */
  send(status: number, json: string, headers?: Record<string, string>): void {
    const res = this.res;
    // A flat list to writeHead: node checks and stores each header given to setHeader one by one.
    const list: string[] = ['content-type', 'application/json; charset=utf-8', 'content-length', String(Buffer.byteLength(json))];
    if (headers) for (const k in headers) list.push(k, headers[k]!);
    res.writeHead(status, list);
    res.end(json);
    this.routes.lines.write(this.id, this.route.part, status, performance.now() - this.start);
  }

  /** Answers an error as fastify's error handler would (daemon/plugins/errors.ts), logged alike. */
  fail(err: Error): void {
    const a = errorAnswer(err, `${this.route.method} ${this.route.pattern}`, this.log());
    this.send(a.status, JSON.stringify({ error: a.error }), a.headers);
  }

  /** A debug line bound to this request's id, as `req.log.debug` writes it; nothing made below debug. */
  debug(obj: object, msg: string): void {
    if (this.routes.logger.isLevelEnabled('debug')) this.log().debug(obj, msg);
  }

  /** A logger bound to this request's id, as fastify's `req.log` is. */
  private log(): RequestLogger {
    return requestLogger(this.routes.logger, { reqId: this.id }, {});
  }
}

/** A media type's name part: RFC 9110's token characters, as fastify checks them. */
const TOKEN = /^[\w!#$%&'*+.^`|~-]+$/;

/**
 * Whether fastify takes a `content-type` as a media type (its ContentType class): `type/subtype`
 * of token characters, space allowed before the type and after the subtype, any parameters after
 * a `;` (they do not make it invalid). The last valid value is remembered: a cron job's curl sends
 * the same one every time.
 */
export class MediaTypes {
  private last: string | undefined;

  valid(value: string): boolean {
    if (value === this.last) return true;
    const semi = value.indexOf(';');
    const media = semi < 0 ? value : value.slice(0, semi);
    const slash = media.indexOf('/');
    const ok = slash >= 0 && TOKEN.test(media.slice(0, slash).trimStart()) && TOKEN.test(media.slice(slash + 1).trimEnd());
    if (ok) this.last = value;
    return ok;
  }
}

/** The lanes of one server, by URL prefix. */
export class DirectRoutes {
  private readonly lanes: { prefix: string; take: Lane }[] = [];
  /** Set when the server starts closing: fastify then answers every request (503). */
  closing = false;
  /** fastify's own request handler, set by the server (http-server.ts): where handOff sends a request. */
  fallback: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  constructor(
    readonly logger: Logger,
    readonly ids: RequestIds,
    /** The server's request lines, shared with fastify's routes (plugins/request-log.ts). */
    readonly lines: RequestLines = new RequestLines(logger),
  ) {}

  /** Adds a lane for URLs starting with `prefix` (a fixed path segment, such as `/ping/`). */
  add(prefix: string, take: Lane): void {
    if (this.lanes.some((l) => l.prefix.startsWith(prefix) || prefix.startsWith(l.prefix))) throw new Error(`a direct route for ${prefix} overlaps another`);
    this.lanes.push({ prefix, take });
  }

  /** Whether a lane took the request; when not, nothing of it was read or written. */
  take(req: IncomingMessage, res: ServerResponse): boolean {
    if (this.closing || this.lanes.length === 0) return false;
    const url = req.url ?? '';
    for (const lane of this.lanes) if (url.startsWith(lane.prefix)) return lane.take(req, res, url);
    return false;
  }

  /** A route of a lane, made once when the lane is. */
  route(method: string, pattern: string): DirectRoute {
    return { method, pattern, part: RequestLines.routePart(method, pattern) };
  }

  /**
   * A request a lane takes, answered through `send` or `fail`; `start` is when the lane took it,
   * if earlier than now (it read the body first).
   */
  begin(res: ServerResponse, route: DirectRoute, start = performance.now()): DirectRequest {
    return new DirectRequest(this, res, route, start);
  }

  /**
   * Gives fastify a request whose whole `body` a lane has read and found unlike the requests it
   * answers (a schema violation, malformed JSON): fastify answers it from here as from the start,
   * its parser taking the body read already (plugins/body.ts). Only before a lane's begin(): the
   * request's id and line are fastify's.
   */
  handOff(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
    if (!this.fallback) throw new Error('a direct route handed a request off on a server without fastify');
    setReadAhead(req, body);
    this.fallback(req, res);
  }
}
