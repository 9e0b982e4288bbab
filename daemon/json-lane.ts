// A lane (daemon/direct-routes.ts) for a POST route whose request is a small JSON body: what every
// such lane checks before it reads a byte, the body read with fastify's own reader and deadlines,
// and the hand-off of a body unlike the route's. The key routes (license/key-lane.ts) and
// sync_pull (sync/pull-lane.ts) are built on it; each says which requests it admits before the
// body (a client address, a bearer token) and which bodies it answers.
import type { IncomingMessage } from 'node:http';
import { readBody, type BodyDeadlines } from './plugins/body.js';
import type { DirectRequest, DirectRoutes, Lane } from './direct-routes.js';

export interface JsonLaneDeps {
  deadlines: BodyDeadlines;
  /** The route's body limit (the server's, for a route that sets none of its own). */
  bodyLimit: number;
}

/** One POST route a lane answers. */
export interface JsonLaneRoute<A, F> {
  /** The path, exactly: a query string, a trailing slash or a longer path is fastify's to route. */
  path: string;
  /** The route's pattern as fastify has it (the request line's route); default `path`. */
  pattern?: string;
  /** What the request brings before its body (its caller, its address); undefined declines it untouched. */
  admit(req: IncomingMessage): A | undefined;
  /** The body's fields when the route's schema takes them as they are; undefined hands the body to fastify. */
  fields(body: Buffer): F | undefined;
  /** Answers the request through `taken` (send or fail), now or later; a throw is answered as the route's failure. */
  answer(taken: DirectRequest, fields: F, admitted: A): void;
}

/** A body's JSON object (own keys as JSON.parse makes them), or undefined for bad JSON or any other value. */
export function jsonObject(body: Buffer): Record<string, unknown> | undefined {
  let v: unknown;
  try {
    v = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** The lane of POST `spec.path`. */
export function jsonLane<A, F>(direct: DirectRoutes, deps: JsonLaneDeps, spec: JsonLaneRoute<A, F>): Lane {
  const route = direct.route('POST', spec.pattern ?? spec.path);
  return (req, res, url) => {
    if (req.method !== 'POST' || url !== spec.path) return false;
    const h = req.headers;
    if (h['transfer-encoding'] !== undefined) return false;
    const length = h['content-length'];
    // An empty body is fastify's 400; one over the limit its 413, before a byte is read.
    if (length === undefined || !(Number(length) > 0 && Number(length) <= deps.bodyLimit)) return false;
    // The two forms clients send; any other (parameters, case, another type) fastify matches or refuses.
    const type = h['content-type'];
    if (type !== 'application/json' && type !== 'application/json; charset=utf-8') return false;
    const admitted = spec.admit(req);
    if (admitted === undefined) return false;
    const start = performance.now();
    readBody(length, deps.bodyLimit, req, deps.deadlines, (err, body) => {
      // fastify's parser reads with the same reader, and its error handler answers as fail() does.
      if (err) return direct.begin(res, route, start).fail(err);
      const fields = spec.fields(body!);
      if (fields === undefined) return direct.handOff(req, res, body!);
      const taken = direct.begin(res, route, start);
      try {
        spec.answer(taken, fields, admitted);
      } catch (e) {
        // In a body's callback, where nothing above would catch it: answered as the route's failure.
        taken.fail(e as Error);
      }
    });
    return true;
  };
}
