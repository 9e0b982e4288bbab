// The license-key requests a fleet sends most (verify, status, the floating seat's heartbeat)
// taken before fastify (daemon/direct-routes.ts): fastify's routing, hooks, validation and reply
// cost such a request about as much as its own work (bench/README.md, "The heartbeat taken before
// fastify" and "GET /tickets/{id} and the key rows taken before fastify"). A lane answers only a
// JSON body that is exactly the route's fields (`key`, and `machine_fingerprint` where the route
// takes one), strings its schema takes, and answers as the fastify route in routes.ts would: same
// status, body bytes, headers, debug line and request line. What it declines before reading and
// what it hands to fastify after are json-lane.ts's rules.
import { KEY_MAX_LENGTH, MACHINE_ID_MAX_LENGTH } from '../../../../src/schemas/license.js';
import { jsonLane, jsonObject, type JsonLaneDeps } from '../../../json-lane.js';
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
  const o = jsonObject(body);
  if (o === undefined) return undefined;
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

export interface KeyLaneDeps extends JsonLaneDeps {
  guard: FailureWindow;
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
  return jsonLane<string, KeyFields>(direct, deps, {
    path: spec.path,
    // The failure window counts by address; a socket without one (closed already) is fastify's.
    admit: (req) => req.socket.remoteAddress,
    fields: (body) => keyFields(body, spec.withMachine),
    answer(taken, fields, address) {
      const debug = (obj: object, msg: string): void => taken.debug(obj, msg);
      const now = spec.now && guardedKeyAnswerNow(deps.guard, address, () => spec.now!(fields), debug);
      if (now !== undefined) return taken.send(200, spec.text(now));
      guardedKeyRequest(deps.guard, address, () => spec.op(fields), debug).then(
        (r) => taken.send(200, spec.text(r)),
        (e: Error) => taken.fail(e),
      );
    },
  });
}
