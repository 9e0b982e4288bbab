// The license-key requests a fleet sends most (verify, status, the floating seat's heartbeat)
// taken before fastify (daemon/direct-routes.ts): fastify's routing, hooks, validation and reply
// cost such a request about as much as its own work (bench/README.md, "The heartbeat taken before
// fastify" and "GET /tickets/{id} and the key rows taken before fastify"). A lane answers only a
// JSON body that is exactly the route's fields (`key`, and `machine_fingerprint` where the route
// takes one), strings its schema takes, and answers as the fastify route in routes.ts would: same
// status, body bytes, headers, debug line and request line. A request it declines before reading
// (another content type, a chunked or empty body, a body over the limit) fastify reads itself; a
// body it has read and finds otherwise (malformed JSON, a missing or extra field) it hands to
// fastify with the bytes read, which answers it as from the start.
import { KEY_MAX_LENGTH, MACHINE_ID_MAX_LENGTH } from '../../../../src/schemas/license.js';
import { readBody, type BodyDeadlines } from '../../../plugins/body.js';
import type { FailureWindow } from '../../../plugins/failure-window.js';
import type { DirectRoutes, Lane } from '../../../direct-routes.js';
import { guardedKeyAnswerNow, guardedKeyRequest } from './guarded.js';

/** The fields of a body a lane answers: the key, and the machine where the route takes one. */
export interface KeyFields {
  key: string;
  machine: string;
}

/**
 * The fields of a body that is exactly `{key}` (`withMachine` false) or `{key, machine_fingerprint}`,
 * non-empty strings within the schema's lengths; undefined for any other body (fastify's to answer).
 * `machine` is '' when the route takes none.
 */
export function keyFields(body: Buffer, withMachine: boolean): KeyFields | undefined {
  let v: unknown;
  try {
    v = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  // Exactly the route's fields (an own `__proto__` key, which fastify's parser refuses, is one more).
  let n = 0;
  for (const k in o) if (Object.hasOwn(o, k)) n++;
  const key = o.key;
  // The schema's bounds count code points; within them in UTF-16 units is within them in code points too.
  if (typeof key !== 'string' || key.length === 0 || key.length > KEY_MAX_LENGTH) return undefined;
  if (!withMachine) return n === 1 ? { key, machine: '' } : undefined;
  const machine = o.machine_fingerprint;
  if (n !== 2 || typeof machine !== 'string' || machine.length === 0 || machine.length > MACHINE_ID_MAX_LENGTH) return undefined;
  return { key, machine };
}

export interface KeyLaneDeps {
  guard: FailureWindow;
  deadlines: BodyDeadlines;
  /** The server's body limit (the key routes set none of their own). */
  bodyLimit: number;
}

/** One route a lane answers: its path and fields, its domain call, and its 200 answer's text. */
export interface KeyLaneRoute<T extends { code?: string }> {
  path: string;
  withMachine: boolean;
  op(fields: KeyFields): Promise<T>;
  /** `op`'s answer when it can be made from memory without waiting, else undefined (op answers). */
  now?(fields: KeyFields): T | undefined;
  /** The answer as the route's response schema serializes it. */
  text(answer: T): string;
}

/** The lane of one key route (POST `route.path`). */
export function keyLane<T extends { code?: string }>(direct: DirectRoutes, deps: KeyLaneDeps, spec: KeyLaneRoute<T>): Lane {
  const route = direct.route('POST', spec.path);
  return (req, res, url) => {
    // A query string, a trailing slash or a longer path: fastify's router decides.
    if (req.method !== 'POST' || url !== spec.path) return false;
    const h = req.headers;
    if (h['transfer-encoding'] !== undefined) return false;
    const length = h['content-length'];
    // An empty body is fastify's 400; one over the limit its 413, before a byte is read.
    if (length === undefined || !(Number(length) > 0 && Number(length) <= deps.bodyLimit)) return false;
    // The two forms clients send; any other (parameters, case, another type) fastify matches or refuses.
    const type = h['content-type'];
    if (type !== 'application/json' && type !== 'application/json; charset=utf-8') return false;
    const address = req.socket.remoteAddress;
    if (address === undefined) return false;
    const start = performance.now();
    readBody(length, deps.bodyLimit, req, deps.deadlines, (err, body) => {
      // fastify's parser reads with the same reader, and its error handler answers as fail() does.
      if (err) return direct.begin(res, route, start).fail(err);
      const fields = keyFields(body!, spec.withMachine);
      if (!fields) return direct.handOff(req, res, body!);
      const taken = direct.begin(res, route, start);
      const debug = (obj: object, msg: string): void => taken.debug(obj, msg);
      try {
        const now = spec.now && guardedKeyAnswerNow(deps.guard, address, () => spec.now!(fields), debug);
        if (now !== undefined) return taken.send(200, spec.text(now));
      } catch (e) {
        // In a body's callback, where nothing above would catch it: answered as the route's failure.
        return taken.fail(e as Error);
      }
      guardedKeyRequest(deps.guard, address, () => spec.op(fields), debug).then(
        (r) => taken.send(200, spec.text(r)),
        (e: Error) => taken.fail(e),
      );
    });
    return true;
  };
}
