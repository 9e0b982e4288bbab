// The license-key area's options, part of the marketplace's (../options.ts).
import { Type, type Static } from '@sinclair/typebox';
import { optionsObject } from '../../../service-options.js';

export const LicenseOptionProperties = {
  /** `iss` claim of offline tokens; else MKT_LICENSE_ISSUER, else `mkt-marketplace`. */
  licenseIssuer: Type.Optional(Type.String()),
  /** Failed key lookups per address and window before 429 (default 20 per 600 s). */
  licenseAbuseFailures: Type.Optional(Type.Number()),
  licenseAbuseWindowSeconds: Type.Optional(Type.Number()),
  /** How often the signing keys' version row is checked (ms; default 2000); tests shorten it. */
  licenseKeysPollMs: Type.Optional(Type.Number()),
  /** Days the audit trail keeps an event after its latest occurrence (default 400). */
  licenseEventRetentionDays: Type.Optional(Type.Number({ minimum: 1 })),
  /** How often the audit job (lapsed leases, expired keys, pruning) runs (ms; default 60000). */
  licenseAuditIntervalMs: Type.Optional(Type.Number({ minimum: 10 })),
  /** How often the webhook outbox is polled (ms; default 1000); tests shorten it. */
  licenseWebhookPollMs: Type.Optional(Type.Number({ minimum: 10 })),
  /** The first retry's delay of a failed webhook delivery, doubling up to an hour (ms; default 10000). */
  licenseWebhookRetryBaseMs: Type.Optional(Type.Number({ minimum: 10 })),
};
export const LicenseOptions = optionsObject(LicenseOptionProperties);
export type LicenseOptions = Static<typeof LicenseOptions>;

/** The keys the environment fills (an empty MKT_LICENSE_ISSUER is an empty issuer, as it always was). */
export function licenseOptionsFromEnv(given: LicenseOptions, env: NodeJS.ProcessEnv): LicenseOptions {
  return { licenseIssuer: given.licenseIssuer ?? env.MKT_LICENSE_ISSUER };
}
