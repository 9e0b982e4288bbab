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
};
export const LicenseOptions = optionsObject(LicenseOptionProperties);
export type LicenseOptions = Static<typeof LicenseOptions>;

/** The keys the environment fills (an empty MKT_LICENSE_ISSUER is an empty issuer, as it always was). */
export function licenseOptionsFromEnv(given: LicenseOptions, env: NodeJS.ProcessEnv): LicenseOptions {
  return { licenseIssuer: given.licenseIssuer ?? env.MKT_LICENSE_ISSUER };
}
