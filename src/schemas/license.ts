// License-key wire types (spec: marketplace-notes-license "License keys"): TypeBox schemas
// shared by the server's validation, its OpenAPI document and the typed client.
import { Type, type Static } from '@sinclair/typebox';
// The shared error body, re-exported so a service's routes import their wire types from one module.
export { ErrorSchema } from './common.js';

/**
 * Stable machine-readable outcomes, in the manner of Keygen's validation codes. `VALID` is the
 * only code with `valid: true`.
 */
export const LICENSE_CODES = [
  'VALID',
  'MALFORMED_KEY',
  'NOT_FOUND',
  'REVOKED',
  'EXPIRED',
  'TOO_MANY_ACTIVATIONS',
  'MACHINE_NOT_ACTIVATED',
  'VERIFICATION_DISABLED',
  'SUSPENDED',
  'ENTITLEMENT_MISSING',
  'DEACTIVATION_LIMIT',
] as const;
export type LicenseCode = (typeof LICENSE_CODES)[number];

// Type lists rather than anyOf: the response serializer then needs no validator to pick a branch.
const NullableString = Type.Unsafe<string | null>({ type: ['string', 'null'] });
const NullableInt = Type.Unsafe<number | null>({ type: ['integer', 'null'] });
function nullable<T>(schema: { description?: string } & Record<string, unknown>, type: string): ReturnType<typeof Type.Unsafe<T | null>> {
  return Type.Unsafe<T | null>({ ...schema, type: [type, 'null'] });
}
/** The longest key code and machine id a request body may carry (the heartbeat's direct lane checks them too). */
export const KEY_MAX_LENGTH = 200;
export const MACHINE_ID_MAX_LENGTH = 256;
const Key = Type.String({ minLength: 1, maxLength: KEY_MAX_LENGTH, description: 'the license key code (a secret: send it in the body, never in a URL)' });
const MachineId = Type.String({ minLength: 1, maxLength: MACHINE_ID_MAX_LENGTH });
const Code = Type.String({ enum: [...LICENSE_CODES], description: 'machine-readable outcome' });

/** An entitlement (a named feature of a key): lower case letters, digits, `.`, `_`, `-`. */
export const ENTITLEMENT_PATTERN = '^[a-z0-9][a-z0-9._-]{0,63}$';
export const ENTITLEMENT_RE = new RegExp(ENTITLEMENT_PATTERN);
const Entitlement = Type.String({ pattern: ENTITLEMENT_PATTERN, maxLength: 64 });
const RetryAfter = nullable<number>({ description: 'seconds to wait before trying again (at least 1); null unless refused for a limit that passes' }, 'integer');
const LeaseExpiresAt = nullable<string>({ description: "RFC 3339 UTC end of the machine's lease (floating keys); null for node-locked keys or without a lease" }, 'string');

export const KeyStatusLicenseSchema = Type.Object({
  item_id: Type.String(),
  activation_count: Type.Integer({ description: 'machines activated now' }),
  created_at: Type.String({ description: 'RFC 3339 UTC: when the key was issued' }),
  max_activations: Type.Optional(nullable<number>({ description: 'activation maximum; null means unlimited' }, 'integer')),
  remaining_activations: Type.Optional(nullable<number>({ description: 'max_activations - activation_count, never below 0; null when unlimited' }, 'integer')),
  expires_at: Type.Optional(nullable<string>({ description: 'RFC 3339 UTC expiry; null for a perpetual key' }, 'string')),
  activation_policy: Type.Optional(Type.String({ enum: ['node-locked', 'floating'], description: 'node-locked: an activation holds its slot until deactivated; floating: max_activations seats held as leases' })),
  lease_seconds: Type.Optional(nullable<number>({ description: "a floating seat's lease; null for node-locked" }, 'integer')),
  entitlements: Type.Optional(Type.Array(Type.String(), { description: 'the named features of the key, sorted' })),
  suspended_at: Type.Optional(nullable<string>({ description: 'RFC 3339 UTC: when the key was suspended; null when it is not' }, 'string')),
});
export type KeyStatusLicense = Static<typeof KeyStatusLicenseSchema>;
const NullableLicense = nullable<KeyStatusLicense>({ ...KeyStatusLicenseSchema }, 'object');

export const KeyStatusRequestSchema = Type.Object({ key: Key }, { additionalProperties: false });
export type KeyStatusRequest = Static<typeof KeyStatusRequestSchema>;

export const KeyStatusResponseSchema = Type.Object({
  valid: Type.Boolean(),
  error: Type.Optional(NullableString),
  code: Type.Optional(Code),
  license: Type.Optional(NullableLicense),
});
export type KeyStatusResponse = Static<typeof KeyStatusResponseSchema>;

export const ValidateKeyRequestSchema = Type.Object(
  {
    key: Key,
    machine_id: Type.Optional(MachineId),
    machine_name: Type.Optional(Type.String({ maxLength: 256, description: 'a label for the activation (host name)' })),
    activate: Type.Optional(Type.Boolean({ description: 'activate machine_id if it is not yet activated (needs machine_id); on a floating key, take or renew its lease' })),
    entitlements: Type.Optional(Type.Array(Entitlement, { maxItems: 100, description: 'entitlements the key must have (else ENTITLEMENT_MISSING)' })),
  },
  { additionalProperties: false },
);
export type ValidateKeyRequest = Static<typeof ValidateKeyRequestSchema>;

export const ValidateKeyResponseSchema = Type.Object({
  valid: Type.Boolean(),
  error: NullableString,
  code: Code,
  license: NullableLicense,
  activated: Type.Boolean({ description: 'true when this request created the activation of machine_id' }),
  lease_expires_at: Type.Optional(LeaseExpiresAt),
  retry_after: Type.Optional(RetryAfter),
});
export type ValidateKeyResponse = Static<typeof ValidateKeyResponseSchema>;

export const DeactivateKeyRequestSchema = Type.Object({ key: Key, machine_id: MachineId }, { additionalProperties: false });
export type DeactivateKeyRequest = Static<typeof DeactivateKeyRequestSchema>;

export const LicenseDeactivateRequestSchema = Type.Object({ key: Key, machine_fingerprint: MachineId }, { additionalProperties: false });
export type LicenseDeactivateRequest = Static<typeof LicenseDeactivateRequestSchema>;

export const DeactivateKeyResponseSchema = Type.Object({
  success: Type.Boolean(),
  message: Type.String(),
  code: Type.Optional(Type.String({ description: 'DEACTIVATED, RELEASED (a floating seat), or the failure code (NOT_FOUND, MACHINE_NOT_ACTIVATED, MALFORMED_KEY, DEACTIVATION_LIMIT)' })),
  retry_after: Type.Optional(RetryAfter),
  next_allowed_at: Type.Optional(nullable<string>({ description: 'RFC 3339 UTC: when the next deactivation fits the budget (with DEACTIVATION_LIMIT); else null' }, 'string')),
});
export type DeactivateKeyResponse = Static<typeof DeactivateKeyResponseSchema>;

export const LicenseVerifyRequestSchema = Type.Object({ key: Key, machine_fingerprint: MachineId }, { additionalProperties: false });
export type LicenseVerifyRequest = Static<typeof LicenseVerifyRequestSchema>;

export const LicenseVerifyResponseSchema = Type.Object({
  valid: Type.Boolean(),
  error: Type.Optional(NullableString),
  expires_in: Type.Optional(NullableInt),
  token: Type.Optional(nullable<string>({ description: 'EdDSA (Ed25519) JWT for offline verification; keys at /api/v1/license/jwks.json' }, 'string')),
  code: Type.Optional(Code),
  lease_expires_at: Type.Optional(LeaseExpiresAt),
  retry_after: Type.Optional(RetryAfter),
  entitlements: Type.Optional(nullable<string[]>({ items: { type: 'string' }, description: "the key's entitlements (also in the token); null when refused" }, 'array')),
});
export type LicenseVerifyResponse = Static<typeof LicenseVerifyResponseSchema>;

export const LicenseHeartbeatRequestSchema = Type.Object({ key: Key, machine_fingerprint: MachineId }, { additionalProperties: false });
export type LicenseHeartbeatRequest = Static<typeof LicenseHeartbeatRequestSchema>;

export const LicenseHeartbeatResponseSchema = Type.Object({
  success: Type.Boolean(),
  message: Type.String(),
  code: Type.String({ description: 'RENEWED, or the failure code (MACHINE_NOT_ACTIVATED: take a seat again; SUSPENDED, REVOKED, EXPIRED, NOT_FOUND, MALFORMED_KEY)' }),
  lease_expires_at: LeaseExpiresAt,
});
export type LicenseHeartbeatResponse = Static<typeof LicenseHeartbeatResponseSchema>;

export const JwksSchema = Type.Object({
  keys: Type.Array(
    Type.Object({
      kty: Type.String(),
      crv: Type.String(),
      x: Type.String(),
      kid: Type.String(),
      alg: Type.String(),
      use: Type.String(),
    }),
  ),
});

/** Claims of the offline token (see docs/license.md). */
export interface LicenseTokenClaims {
  iss: string;
  sub: string;
  license: string;
  item: string;
  fph: string;
  iat: number;
  /** iat + 7 days; for a floating key, no later than the lease's end. */
  exp: number;
  /** The key's entitlements, sorted. */
  entitlements: string[];
}

/** Offline token lifetime: 7 days (spec Limits); a floating key's token ends with its lease. */
export const TOKEN_LIFETIME_SECONDS = 7 * 24 * 3600;
