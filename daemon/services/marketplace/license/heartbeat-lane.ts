// The floating seat's heartbeat taken before fastify (key-lane.ts): a fleet's runners renew their
// leases every few minutes each. Its answer is written from a template (no serializer on the
// hot path), which test/daemon/services/marketplace/heartbeat-lane.test.ts holds equal to the
// route's response schema serialized by fastify.
import type { LicenseHeartbeatResponse } from '../../../../src/schemas/license.js';
import type { DirectRoutes, Lane } from '../../../direct-routes.js';
import type { Licenses } from './licenses.js';
import { keyFields, keyLane, type KeyLaneDeps } from './key-lane.js';

export const HEARTBEAT_PATH = '/api/v1/license/heartbeat';

/** The two fields of a body the lane answers, or undefined for any other body. */
export function heartbeatFields(body: Buffer): { key: string; machine: string } | undefined {
  return keyFields(body, true);
}

/**
 * The answer as the route's response schema serializes it (LicenseHeartbeatResponseSchema: its
 * four properties in order), made from a template: no serializer on the hot path.
 */
export function heartbeatAnswerText(r: LicenseHeartbeatResponse): string {
  const lease = r.lease_expires_at === null ? 'null' : JSON.stringify(r.lease_expires_at);
  return `{"success":${r.success},"message":${JSON.stringify(r.message)},"code":${JSON.stringify(r.code)},"lease_expires_at":${lease}}`;
}

export interface HeartbeatLaneDeps extends KeyLaneDeps {
  licenses: Pick<Licenses, 'heartbeat'>;
}

/** The lane of POST /api/v1/license/heartbeat. */
export function heartbeatLane(direct: DirectRoutes, deps: HeartbeatLaneDeps): Lane {
  return keyLane(direct, deps, { path: HEARTBEAT_PATH, withMachine: true, op: (f) => deps.licenses.heartbeat(f.key, f.machine), text: heartbeatAnswerText });
}
