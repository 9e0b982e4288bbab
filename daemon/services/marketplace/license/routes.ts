// The license-key routes (spec "License keys"): license text, validate, status (POST and the
// deprecated GET), the two deactivations, offline verification, the floating-seat heartbeat, and
// the JWKS of the token keys.
// Every documented outcome answers 200 with a body; only abuse answers 429.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  DeactivateKeyRequestSchema,
  DeactivateKeyResponseSchema,
  ErrorSchema,
  JwksSchema,
  KeyStatusRequestSchema,
  KeyStatusResponseSchema,
  LicenseDeactivateRequestSchema,
  LicenseHeartbeatRequestSchema,
  LicenseHeartbeatResponseSchema,
  LicenseVerifyRequestSchema,
  LicenseVerifyResponseSchema,
  ValidateKeyRequestSchema,
  ValidateKeyResponseSchema,
  type DeactivateKeyRequest,
  type KeyStatusRequest,
  type KeyStatusResponse,
  type LicenseDeactivateRequest,
  type LicenseHeartbeatRequest,
  type LicenseVerifyRequest,
  type LicenseVerifyResponse,
  type ValidateKeyRequest,
} from '../../../../src/schemas/license.js';
import type { SigningKeyring } from '../../../../src/crypto/signing.js';
import { HttpError } from '../../../plugins/errors.js';
import { parseAuthorization } from '../../../plugins/auth.js';
import type { FailureWindow } from '../../../plugins/failure-window.js';
import type { Licenses } from './licenses.js';
import { guardedKeyRequest } from './guarded.js';
import { HEARTBEAT_PATH, heartbeatLane } from './heartbeat-lane.js';
import { keyLane } from './key-lane.js';
import { quoteForError } from '../../../../src/util/quote.js';

export interface LicenseRouteDeps {
  licenses: Licenses;
  guard: FailureWindow;
  keyring: SigningKeyring;
}

/** RFC 9745 `Deprecation` date of the GET status form (API 0.16.0): 2026-01-01T00:00:00Z. */
const DEPRECATED_AT = '@1767225600';
const TAGS = ['license'];
const STATUS_PATH = '/api/v1/keys/status';
const VERIFY_PATH = '/api/v1/license/verify';
/** The key in the body is the proof: no credential (spec Authentication). */
const NONE: unknown[] = [];
const errors = { 400: ErrorSchema, 429: ErrorSchema };

/**
 * `Authorization: License <key>` (Keygen's scheme) personalises the license text. The route
 * declares no credential, so any other header, malformed or overlong, is ignored, never a 401.
 */
function presentedKey(req: FastifyRequest): string | undefined {
  const p = parseAuthorization(req.headers.authorization, ['License']);
  return p.kind === 'credential' && p.credential.kind === 'license' ? p.credential.key : undefined;
}

export async function licenseRoutes(app: FastifyInstance, deps: LicenseRouteDeps): Promise<void> {
  const { licenses, guard, keyring } = deps;

  /** Runs one key operation under the abuse limit (guarded.ts). */
  const guarded = <T extends { code?: string }>(req: FastifyRequest, op: () => Promise<T>): Promise<T> => guardedKeyRequest(guard, req.ip, op, (obj, msg) => req.log.debug(obj, msg));

  app.get<{ Params: { item_id: string } }>(
    '/api/v1/items/:item_id/license.txt',
    {
      schema: {
        operationId: 'license_text',
        summary: 'The rendered license text of an item',
        description: 'Renders the item template ({{item_name}}, {{licensee}}, {{year}}, {{key_prefix}}). An optional `Authorization: License <key>` header for this item personalises it.',
        tags: TAGS,
        security: NONE,
        params: { type: 'object', properties: { item_id: { type: 'string' } }, required: ['item_id'] },
        response: { 200: { description: 'rendered license text', content: { 'text/plain': { schema: { type: 'string' } } } }, 404: ErrorSchema },
      },
    },
    async (req, reply) => {
      const key = presentedKey(req);
      // A presented key makes this a key lookup too, so it must not become an unlimited oracle.
      const { text } = key === undefined ? await licenses.licenseText(req.params.item_id, undefined) : await guarded(req, () => licenses.licenseText(req.params.item_id, key));
      if (text === undefined) throw new HttpError(404, `item ${quoteForError(req.params.item_id)} not found or has no license configured`);
      return reply.type('text/plain; charset=utf-8').send(text.endsWith('\n') ? text : text + '\n');
    },
  );

  app.post<{ Body: ValidateKeyRequest }>(
    '/api/v1/keys/validate',
    {
      schema: {
        operationId: 'validate_key',
        summary: 'Validate a license key, optionally activating it on a machine',
        description: 'With `machine_id`, also checks that machine is activated; with `activate: true`, activates it if a slot is free (idempotent for an active machine).',
        tags: TAGS,
        security: NONE,
        body: ValidateKeyRequestSchema,
        response: { 200: ValidateKeyResponseSchema, ...errors },
      },
    },
    async (req) => {
      if (req.body.activate && req.body.machine_id === undefined) throw new HttpError(400, 'body.machine_id is required when activate is true');
      return guarded(req, () => licenses.validate(req.body));
    },
  );

  app.post<{ Body: KeyStatusRequest }>(
    STATUS_PATH,
    {
      schema: {
        operationId: 'key_status_post',
        summary: 'Key status without activating (the preferred form)',
        tags: TAGS,
        security: NONE,
        body: KeyStatusRequestSchema,
        response: { 200: KeyStatusResponseSchema, ...errors },
      },
    },
    async (req) => guarded(req, () => licenses.status(req.body.key)),
  );

  app.get<{ Params: { key_code: string } }>(
    '/api/v1/keys/:key_code/status',
    {
      schema: {
        operationId: 'key_status',
        summary: 'Key status (deprecated: the key leaks into access logs; use POST /api/v1/keys/status)',
        tags: TAGS,
        security: NONE,
        deprecated: true,
        params: { type: 'object', properties: { key_code: { type: 'string' } }, required: ['key_code'] },
        response: { 200: KeyStatusResponseSchema, ...errors },
      },
    },
    async (req, reply) => {
      void reply.header('deprecation', DEPRECATED_AT).header('link', '</api/v1/keys/status>; rel="successor-version"');
      return guarded(req, () => licenses.status(req.params.key_code));
    },
  );

  app.post<{ Body: DeactivateKeyRequest }>(
    '/api/v1/keys/deactivate',
    {
      schema: { operationId: 'deactivate_key', summary: 'Release the activation slot of one machine', tags: TAGS,
        security: NONE, body: DeactivateKeyRequestSchema, response: { 200: DeactivateKeyResponseSchema, ...errors } },
    },
    async (req) => guarded(req, () => licenses.deactivate(req.body.key, req.body.machine_id)),
  );

  app.post<{ Body: LicenseDeactivateRequest }>(
    '/api/v1/license/deactivate',
    {
      schema: { operationId: 'license_deactivate', summary: 'Free the slot of one machine fingerprint', tags: TAGS,
        security: NONE, body: LicenseDeactivateRequestSchema, response: { 200: DeactivateKeyResponseSchema, ...errors } },
    },
    async (req) => guarded(req, () => licenses.deactivate(req.body.key, req.body.machine_fingerprint)),
  );

  app.post<{ Body: LicenseVerifyRequest }>(
    VERIFY_PATH,
    {
      schema: {
        operationId: 'license_verify',
        summary: 'Verify a key for a machine fingerprint and get a signed token for offline use (7 days; a floating key: its lease)',
        description: 'Activates the fingerprint if needed. On a floating key every verify takes or renews the lease, and the token expires with it (`lease_expires_at`); a full key answers TOO_MANY_ACTIVATIONS with `retry_after`.',
        tags: TAGS,
        security: NONE,
        body: LicenseVerifyRequestSchema,
        response: { 200: LicenseVerifyResponseSchema, ...errors },
      },
    },
    async (req) => guarded(req, () => licenses.verify(req.body.key, req.body.machine_fingerprint)),
  );

  app.post<{ Body: LicenseHeartbeatRequest }>(
    HEARTBEAT_PATH,
    {
      schema: {
        operationId: 'license_heartbeat',
        summary: "Renew a floating seat's lease",
        description:
          'Extends the live lease of the fingerprint (code RENEWED, `lease_expires_at`). Without a live lease (lapsed, never taken, another key\'s machine) MACHINE_NOT_ACTIVATED: take a seat again with validate (activate) or verify. A node-locked activated machine answers RENEWED with `lease_expires_at: null`.',
        tags: TAGS,
        security: NONE,
        body: LicenseHeartbeatRequestSchema,
        response: { 200: LicenseHeartbeatResponseSchema, ...errors },
      },
    },
    async (req) => guarded(req, () => licenses.heartbeat(req.body.key, req.body.machine_fingerprint)),
  );
  // The routes a fleet calls most, taken before fastify for a well-formed body (key-lane.ts).
  const laneDeps = { guard, deadlines: app.bodyDeadlines, bodyLimit: app.initialConfig.bodyLimit! };
  app.directRoutes.add(HEARTBEAT_PATH, heartbeatLane(app.directRoutes, { licenses, ...laneDeps }));
  // Their answers serialized as the routes' own are: fastify's serializer compiler, known once the server is ready.
  let statusText: ((r: KeyStatusResponse) => string) | undefined;
  let verifyText: ((r: LicenseVerifyResponse) => string) | undefined;
  app.addHook('onReady', async () => {
    const compile = app.serializerCompiler;
    if (compile === undefined) throw new Error('fastify has no serializer compiler at onReady');
    statusText = compile({ schema: KeyStatusResponseSchema, method: 'POST', url: STATUS_PATH, httpStatus: '200' }) as (r: KeyStatusResponse) => string;
    verifyText = compile({ schema: LicenseVerifyResponseSchema, method: 'POST', url: VERIFY_PATH, httpStatus: '200' }) as (r: LicenseVerifyResponse) => string;
  });
  app.directRoutes.add(STATUS_PATH, keyLane(app.directRoutes, laneDeps, { path: STATUS_PATH, withMachine: false, op: (f) => licenses.status(f.key), now: (f) => licenses.keptStatus(f.key), text: (r) => statusText!(r) }));
  app.directRoutes.add(VERIFY_PATH, keyLane(app.directRoutes, laneDeps, { path: VERIFY_PATH, withMachine: true, op: (f) => licenses.verify(f.key, f.machine), now: (f) => licenses.keptVerify(f.key, f.machine), text: (r) => verifyText!(r) }));

  app.get(
    '/api/v1/license/jwks.json',
    { schema: { operationId: 'license_jwks', summary: 'Public keys (JWKS) that verify offline license tokens', tags: TAGS,
        security: NONE, response: { 200: JwksSchema } } },
    async (_req, reply) => {
      void reply.header('cache-control', 'public, max-age=300');
      return keyring.publicJwks();
    },
  );
}
