// Bodies the server buffers (JSON, plain text, a monitor ping's log): read within the route's byte
// limit and the request timeout, and JSON nested no deeper than MAX_JSON_DEPTH, all before any
// handler runs. Streamed bodies (blob uploads, git packs) have their own parsers and are not
// buffered here.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errorCodes } from 'fastify';
import { HttpError } from './errors.js';
import { jsonDepthExceeds } from '../../src/util/json-depth.js';

/**
 * Deepest accepted nesting of arrays and objects in a JSON body. JSON.stringify overflows the
 * stack near 4,500 levels (a 500 on push or pull of the stored value); 512 leaves apps' opaque
 * `data` far more room than any real record needs.
 */
export const MAX_JSON_DEPTH = 512;

type Done = (err: Error | null, body?: unknown) => void;

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/**
 * A body being read, which its deadline ends with a 408 when it has not arrived in time. `prev` and
 * `next` are its links in BodyDeadlines' list (set by it, for it alone).
 */
export interface PendingBody {
  readonly deadline: number;
  finish(err: Error): void;
  prev: PendingBody | undefined;
  next: PendingBody | undefined;
}

/**
 * Deadlines of the bodies being read, checked by one timer for the whole server rather than one
 * timer per request (a timer and its closures cost more than the small bodies most requests carry).
 * A deadline fires up to a quarter of the timeout (at most 1 s) late. Kept in a list threaded
 * through the reads themselves: a Set, emptied and refilled between most requests under load,
 * shrank and rehashed its table at every other delete.
 */
export class BodyDeadlines {
  private head: PendingBody | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(readonly timeoutMs: number) {}

  add(read: PendingBody): void {
    read.prev = undefined;
    read.next = this.head;
    if (this.head) this.head.prev = read;
    this.head = read;
    if (this.timer) return;
    this.timer = setInterval(() => this.sweep(), Math.min(1000, Math.max(10, Math.floor(this.timeoutMs / 4))));
    // Nothing waits on this timer but the requests: it must not hold a stopping process open.
    this.timer.unref();
  }

  /** Takes `read` off the list; a read not on it (never added, or deleted already) is left alone. */
  delete(read: PendingBody): void {
    if (read.prev === undefined && this.head !== read) return;
    if (read.prev) read.prev.next = read.next;
    else this.head = read.next;
    if (read.next) read.next.prev = read.prev;
    read.prev = read.next = undefined;
  }

  private sweep(): void {
    // Stopped by a sweep that finds nothing to watch, not at each body read: under load the list
    // empties and fills again between most requests, and a timer made and cleared per request
    // cost more than the sweep.
    if (this.head === undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    const now = Date.now();
    // The client has stopped short of its body (or drips it): answer, and close the connection
    // rather than keep reading what it may never send. finish() deletes the read: its next is
    // taken first.
    for (let read: PendingBody | undefined = this.head; read; ) {
      const next: PendingBody | undefined = read.next;
      if (now >= read.deadline) read.finish(new HttpError(408, `request body not received within ${seconds(this.timeoutMs)}`, { connection: 'close' }));
      read = next;
    }
  }
}

/** One buffered body being read, as fastify's own reader does, plus a deadline. */
class BodyRead implements PendingBody {
  private readonly chunks: Buffer[] = [];
  private received = 0;
  private settled = false;
  readonly deadline: number;
  prev: PendingBody | undefined = undefined;
  next: PendingBody | undefined = undefined;

  constructor(
    private readonly payload: NodeJS.ReadableStream,
    private readonly limit: number,
    private readonly declared: number,
    private readonly deadlines: BodyDeadlines,
    private readonly done: (err: Error | null, body?: Buffer) => void,
  ) {
    this.deadline = Date.now() + deadlines.timeoutMs;
    deadlines.add(this);
    payload.on('data', this.onData);
    payload.on('end', this.onEnd);
    payload.on('error', this.onEnd);
    payload.on('close', this.onClose);
    payload.resume();
  }

  finish(err: Error | null, body?: Buffer): void {
    if (this.settled) return;
    this.settled = true;
    this.deadlines.delete(this);
    if (err) {
      // Stop collecting what comes after a refusal; on success the stream has ended anyway.
      this.payload.removeListener('data', this.onData);
      this.payload.removeListener('close', this.onClose);
    }
    this.done(err, body);
  }

  private readonly onData = (chunk: Buffer | string): void => {
    if (this.settled) return;
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.received += buf.length;
    if (this.received > this.limit) return this.finish(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
    this.chunks.push(buf);
  };

  private readonly onEnd = (err?: Error & { statusCode?: number }): void => {
    if (err) {
      if (!(typeof err.statusCode === 'number' && err.statusCode >= 400)) err.statusCode = 400;
      return this.finish(err);
    }
    if (!Number.isNaN(this.declared) && this.received !== this.declared) return this.finish(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
    // Most bodies arrive in one chunk: taken as it is, not copied into a new buffer first.
    this.finish(null, this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.received));
  };

  // A client gone before its body ended (no 'end', and not always an 'error').
  private readonly onClose = (): void => {
    if (this.settled) return;
    const err = new Error('request body aborted by the client') as Error & { statusCode: number };
    err.statusCode = 400;
    this.finish(err);
  };
}

/**
 * Bodies read whole before fastify was given their request (DirectRoutes.handOff): the stream has
 * ended, so readBody takes the body from here. Weak: a request dropped before fastify reads its
 * body takes its entry with it.
 */
const readAhead = new WeakMap<object, Buffer>();

/** Gives readBody `body` as the whole body of `req`, read already (a direct route's hand-off). */
export function setReadAhead(req: object, body: Buffer): void {
  readAhead.set(req, body);
}

/**
 * Reads the whole body within the byte limit (FST_ERR_CTP_BODY_TOO_LARGE past it, before a byte
 * when its content-length says so) and the request timeout (408, and the connection closed).
 */
export function readBody(contentLength: string | undefined, limit: number, payload: NodeJS.ReadableStream, deadlines: BodyDeadlines, done: (err: Error | null, body?: Buffer) => void): void {
  const declared = Number(contentLength);
  if (declared > limit) return done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
  const ahead = readAhead.get(payload);
  if (ahead !== undefined) {
    readAhead.delete(payload);
    return ahead.length > limit ? done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE()) : done(null, ahead);
  }
  new BodyRead(payload, limit, declared, deadlines, done);
}

/** Reads the whole body as UTF-8 text within the byte limit and the request timeout. */
function readText(req: FastifyRequest, limit: number, payload: NodeJS.ReadableStream, deadlines: BodyDeadlines, done: (err: Error | null, text?: string) => void): void {
  readBody(req.headers['content-length'], limit, payload, deadlines, (err, body) => (err ? done(err) : done(null, body!.toString('utf8'))));
}

/**
 * Replaces fastify's JSON and text parsers (same texts, same prototype-poisoning errors); answers
 * the deadlines they share, for the server's other buffered bodies (a monitor ping's log).
 */
export function installBodyParsers(app: FastifyInstance, opts: { requestTimeoutMs: number; bodyLimit: number; maxJsonDepth?: number }): BodyDeadlines {
  const maxDepth = opts.maxJsonDepth ?? MAX_JSON_DEPTH;
  // The server's limit, unless a route sets its own: then that route's, read per request
  // (`req.routeOptions` builds an object of a dozen fields at each read, so only then).
  let routeLimits = false;
  app.addHook('onRoute', (route) => {
    if (route.bodyLimit !== undefined) routeLimits = true;
  });
  const limitOf = (req: FastifyRequest): number => (routeLimits ? req.routeOptions.bodyLimit : opts.bodyLimit);
  // fastify's defaults: `__proto__` and `constructor.prototype` keys are errors (secure-json-parse).
  const parseJson = app.getDefaultJsonParser('error', 'error');
  const deadlines = new BodyDeadlines(opts.requestTimeoutMs);
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', (req, payload, done: Done) => {
    readText(req, limitOf(req), payload, deadlines, (err, text) => {
      if (err) return done(err);
      // Nesting deeper than maxDepth takes more than maxDepth characters: a shorter body needs no scan.
      if (text!.length > maxDepth && jsonDepthExceeds(text!, maxDepth)) return done(new HttpError(400, `JSON nested deeper than ${maxDepth} levels`));
      parseJson(req, text!, done);
    });
  });
  app.addContentTypeParser('text/plain', (req, payload, done: Done) => {
    readText(req, limitOf(req), payload, deadlines, (err, text) => (err ? done(err) : done(null, text)));
  });
  // A body left unread when the answer goes out closes the connection: daemon/http-server.ts.
  return deadlines;
}
