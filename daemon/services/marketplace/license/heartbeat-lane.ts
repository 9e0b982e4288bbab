// The floating seat's heartbeat taken before fastify (daemon/direct-routes.ts): a fleet's runners
// renew their leases every few minutes each, and fastify's routing, hooks, validation and reply
// cost a heartbeat about as much as its own work (bench/README.md, "The heartbeat taken before
// fastify"). The lane answers only a JSON body that is exactly `{key, machine_fingerprint}`, two
// strings the route's schema takes, and answers it as the fastify route in routes.ts would: same
// status, body bytes, headers, debug line and request line. A request it declines before reading
// (another content type, a chunked or empty body, a body over the limit) fastify reads itself; a
// body it has read and finds otherwise (malformed JSON, a missing or extra field) it hands to
// fastify with the bytes read, which answers it as from the start.
import { KEY_MAX_LENGTH, MACHINE_ID_MAX_LENGTH, type LicenseHeartbeatResponse } from '../../../../src/schemas/license.js';
import { readBody, type BodyDeadlines } from '../../../plugins/body.js';
import type { FailureWindow } from '../../../plugins/failure-window.js';
import type { DirectRoutes, Lane } from '../../../direct-routes.js';
import type { Licenses } from './licenses.js';
import { guardedKeyRequest } from './guarded.js';

export const HEARTBEAT_PATH = '/api/v1/license/heartbeat';


/** The two fields of a body the lane answers, or undefined for any other body. */
export function heartbeatFields(body: Buffer): { key: string; machine: string } | undefined {
  let v: unknown;
  try {
    v = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  // Exactly the two fields (an own `__proto__` key, which fastify's parser refuses, is a third).
  let n = 0;
  for (const k in o) if (Object.hasOwn(o, k)) n++;
  const key = o.key;
  const machine = o.machine_fingerprint;
  if (n !== 2 || typeof key !== 'string' || typeof machine !== 'string') return undefined;
  // The schema's bounds count code points; within them in UTF-16 units is within them in code points too.
  if (key.length === 0 || key.length > KEY_MAX_LENGTH || machine.length === 0 || machine.length > MACHINE_ID_MAX_LENGTH) return undefined;
  return { key, machine };
}

/**
 * The answer as the route's response schema serializes it (LicenseHeartbeatResponseSchema: its
 * four properties in order), made from a template: no serializer on the hot path.
 */
export function heartbeatAnswerText(r: LicenseHeartbeatResponse): string {
  const lease = r.lease_expires_at === null ? 'null' : JSON.stringify(r.lease_expires_at);
  return `{"success":${r.success},"message":${JSON.stringify(r.message)},"code":${JSON.stringify(r.code)},"lease_expires_at":${lease}}`;
}

export interface HeartbeatLaneDeps {
  licenses: Pick<Licenses, 'heartbeat'>;
  guard: FailureWindow;
  deadlines: BodyDeadlines;
  /** The server's body limit (the route sets none of its own). */
  bodyLimit: number;
}

/** The lane of POST /api/v1/license/heartbeat. */
export function heartbeatLane(direct: DirectRoutes, deps: HeartbeatLaneDeps): Lane {
  const route = direct.route('POST', HEARTBEAT_PATH);
  return (req, res, url) => {
    // A query string, a trailing slash or a longer path: fastify's router decides.
    if (req.method !== 'POST' || url !== HEARTBEAT_PATH) return false;
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
      const fields = heartbeatFields(body!);
      if (!fields) return direct.handOff(req, res, body!);
      const hb = direct.begin(res, route, start);
      guardedKeyRequest(deps.guard, address, () => deps.licenses.heartbeat(fields.key, fields.machine), (obj, msg) => hb.debug(obj, msg)).then(
        (r) => hb.send(200, heartbeatAnswerText(r)),
        (e: Error) => hb.fail(e),
      );
    });
    return true;
  };
}
